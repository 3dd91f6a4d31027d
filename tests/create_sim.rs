//! Issue 18's first Done-when, end to end on the sim: `taloscope create` of a 3+2 cluster from the
//! sim's own new-cluster templates (user-data and maintenance delivery) and through OneFlow, then
//! `taloscope status --context lab` shows 5 nodes Ready, etcd 3/3 with a leader and kubelets on the
//! chosen Kubernetes version; `taloscope delete` leaves no VM, no `lab` context and both backups.
mod create_common;
mod provision_common;
mod talos_common;

use std::path::Path;
use std::time::Instant;

use create_common::{DELETE_ARGS, create_args, lab_status};
use provision_common::{config_file, live_vms, one_client};
use talos_common::{Sim, TIME_SCALE, scenario, start};

/// The chosen Kubernetes version (not the Talos version's default, so the kubelets show it was
/// carried through).
const KUBERNETES: &str = "1.34.1";

/// `taloscope ARGS` with the sim's own taloscope.yaml.
async fn run(sim: &Sim, args: &[&str]) -> provision_common::Run {
    provision_common::run(sim, &config_file(sim), args).await
}

/// The first control plane's address: new-cluster VMs lease `.1`, `.2`, ... in creation order.
fn first_control_plane(sim: &Sim) -> String {
    let network = sim.fleet.opennebula().unwrap().new_clusters().network;
    let o = network.octets();
    format!("{}.{}.{}.1", o[0], o[1], o[2])
}

/// `taloscope create` of lab (3+2, Talos v1.11.3) with `more`, timed in real and simulated time.
async fn create_lab(sim: &Sim, provider: &str, more: &[&str]) {
    let mut with_kubernetes = vec!["--kubernetes", KUBERNETES];
    with_kubernetes.extend_from_slice(more);
    let args = create_args(provider, 3, 2, "v1.11.3", &with_kubernetes);
    let started = Instant::now();
    let r = create_common::run(sim, &args).await;
    let real = started.elapsed();
    println!(
        "create lab through {provider} {more:?}: {:.1} s real, {:.0} s simulated (time scale {TIME_SCALE})",
        real.as_secs_f64(),
        real.as_secs_f64() * TIME_SCALE
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// `taloscope status --context lab`: 5 nodes Ready, etcd 3/3 with a leader, kubelets on
/// [`KUBERNETES`].
async fn assert_lab_formed(sim: &Sim) {
    let (lab, shown) = lab_status(sim).await;
    assert_eq!(lab.nodes.len(), 5, "{shown}");
    for node in &lab.nodes {
        assert!(node.ready && node.error.is_none(), "{node:?}");
        assert_eq!(node.k8s_ready, Some(true), "{node:?}");
        let kubelet = node.kubelet_version.as_deref().unwrap_or_default();
        assert_eq!(kubelet.trim_start_matches('v'), KUBERNETES, "{}", node.name);
    }
    assert_eq!(
        (lab.etcd.quorum.members, lab.etcd.quorum.healthy),
        (3, 3),
        "{shown}"
    );
    assert!(lab.etcd.leader().is_some(), "{shown}");
}

/// `taloscope delete --context lab`: no VM of lab left, no lab context, and backups of both files.
async fn delete_lab(sim: &Sim, before: &[u64]) {
    let r = run(sim, &DELETE_ARGS).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(live_vms(sim).await, before, "{}", r.stdout);
    let backups: Vec<&str> = r
        .stdout
        .split("backup ")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .collect();
    for file in ["talosconfig", "kubeconfig"] {
        let of_file: Vec<&&str> = backups
            .iter()
            .filter(|b| b.contains(&format!("{file}.taloscope-backup-")))
            .collect();
        assert!(!of_file.is_empty(), "a {file} backup in:\n{}", r.stdout);
        for b in of_file {
            assert!(Path::new(b).exists(), "backup {b}");
        }
    }
    let contexts = run(sim, &["contexts", "-o", "json"]).await;
    assert_eq!(contexts.code, 0, "{}", contexts.stderr);
    assert!(!contexts.stdout.contains("\"lab\""), "{}", contexts.stdout);
}

/// A create of lab through `provider` with the flags `more` gives for the started sim, then
/// status and delete.
async fn create_status_delete(provider: &str, more: fn(&Sim) -> Vec<String>) {
    let sim = start(scenario("healthy")).await;
    let before = live_vms(&sim).await;
    let more = more(&sim);
    let more: Vec<&str> = more.iter().map(String::as_str).collect();
    create_lab(&sim, provider, &more).await;
    assert_eq!(live_vms(&sim).await.len(), before.len() + 5);
    assert_lab_formed(&sim).await;
    delete_lab(&sim, &before).await;
}

fn maintenance(_: &Sim) -> Vec<String> {
    vec!["--deliver".into(), "maintenance".into()]
}

/// The endpoint is the first control plane's address, known before the VMs exist (OneFlow
/// deploys the controlplane role first, the worker role's parent, so its first VM leases `.1`
/// too).
fn user_data(sim: &Sim) -> Vec<String> {
    ["--deliver", "user-data", "--endpoint"]
        .map(String::from)
        .into_iter()
        .chain([first_control_plane(sim)])
        .collect()
}

#[tokio::test]
async fn user_data_through_xmlrpc_forms_lab_and_delete_removes_it() {
    create_status_delete("sim-opennebula", user_data).await;
}

#[tokio::test]
async fn maintenance_through_xmlrpc_forms_lab_and_delete_removes_it() {
    create_status_delete("sim-opennebula", maintenance).await;
}

#[tokio::test]
async fn maintenance_through_oneflow_forms_lab_and_delete_removes_it() {
    create_status_delete("sim-oneflow", maintenance).await;
}

#[tokio::test]
async fn user_data_through_oneflow_forms_lab_and_delete_removes_it() {
    create_status_delete("sim-oneflow", user_data).await;
}

#[tokio::test]
async fn a_oneflow_gateway_role_is_the_endpoint_and_goes_with_the_service() {
    let sim = start(scenario("healthy")).await;
    let before = live_vms(&sim).await;
    // No --endpoint: the service template's gateway role's address is the API endpoint.
    create_lab(&sim, "sim-oneflow-gateway", &["--deliver", "maintenance"]).await;
    assert_eq!(
        live_vms(&sim).await.len(),
        before.len() + 6,
        "5 nodes and the gateway"
    );
    assert_lab_formed(&sim).await;
    let gateway = gateway_address(&sim).await;
    let kubeconfig = std::fs::read_to_string(sim.fleet.kubeconfig_path()).expect("kubeconfig");
    let server = format!("server: https://{gateway}:6443");
    assert!(
        kubeconfig.contains(&server),
        "the lab context's server is the gateway's address ({server}):\n{kubeconfig}"
    );
    delete_lab(&sim, &before).await;
}

/// The address of the running VM of the `gateway` role (named after its role by OneFlow).
async fn gateway_address(sim: &Sim) -> String {
    use taloscope::opennebula::VmState;
    let vms = one_client(sim).vms().await.expect("the VM pool");
    let gateway = vms
        .iter()
        .find(|v| v.state != VmState::DONE && v.name.starts_with("gateway_"))
        .unwrap_or_else(|| {
            let names: Vec<&str> = vms.iter().map(|v| v.name.as_str()).collect();
            panic!("no gateway VM among {names:?}")
        });
    gateway.ip().expect("the gateway's address").to_string()
}
