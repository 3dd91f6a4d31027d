//! `upgrade-k8s` and `upgrade` of a cluster Cluster API owns take the CAPI way against the
//! sim's `capi` scenario: `--plan` lists the objects patched and changes nothing; a run patches
//! the TalosControlPlane and then the MachineDeployment, and ends with every Machine replaced
//! and every node on the target (a Talos upgrade through a copied machine template); a killed
//! run resumes from its action journal, following the phase it had patched.
mod capi_checks;
mod upgrade_common;

use serde_json::Value;
use upgrade_common::*;

const WORKLOAD: &str = "capi-work";

/// The command against the sim's configs and its OpenNebula provider config.
fn command(fx: &Fixture, subcommand: &str, args: &[&str]) -> tokio::process::Command {
    let mut cmd = fx.taloscope(WORKLOAD, subcommand);
    let config = fx.sim.opennebula().expect("OpenNebula sim").config_file();
    cmd.args(args).arg("--config").arg(config);
    cmd
}

fn tcp(fx: &Fixture) -> Value {
    fx.sim
        .capi()
        .unwrap()
        .get("taloscontrolplanes", "capi-work-cp")
        .expect("TalosControlPlane")
}

/// The Kubernetes version the MachineDeployment asks its Machines for.
fn workers_version(fx: &Fixture) -> Value {
    let md = fx
        .sim
        .capi()
        .unwrap()
        .get("machinedeployments", "capi-work-md-0");
    md.expect("the MachineDeployment")["spec"]["template"]["spec"]["version"].clone()
}

/// The node of each current Machine (Machine names are node names) in the sim: (name,
/// kubelet version, Talos version, up).
fn sim_nodes(fx: &Fixture) -> Vec<(String, String, String, bool)> {
    let state = fx.sim.state();
    let cluster = state.cluster(WORKLOAD).expect("workload cluster");
    object_names(&fx.sim.capi().unwrap().list("machines"))
        .into_iter()
        .map(|name| {
            let node = cluster.node(&name).unwrap_or_else(|| panic!("node {name}"));
            let s = node.status();
            (name, s.kubernetes.kubelet.version, s.talos_version, s.up)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_k8s_to_the_next_patch_replaces_every_machine_the_capi_way() {
    let fx = start(builtin("capi")).await;
    let before = settled_machines(&fx).await;
    let tcp_before = tcp(&fx);
    assert_eq!(tcp_before["spec"]["version"], "v1.34.1");

    // --plan: the objects patched and the Machines replaced in order; nothing changes.
    let cmd = command(
        &fx,
        "upgrade-k8s",
        &["--to", "1.34.2", "--plan", "--output", "json"],
    );
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let plan: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(plan["way"], "capi", "{stdout}");
    assert_eq!(plan["owner"], "admin@capi-mgmt/default/capi-work");
    assert_eq!(plan["phases"][0]["name"], "capi-work-cp");
    assert_eq!(plan["phases"][0]["patch"]["spec"]["version"], "v1.34.2");
    assert_eq!(plan["phases"][1]["name"], "capi-work-md-0");
    let planned: usize = plan["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["replace"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(planned, 5, "{stdout}");
    assert!(!plan["blocked"].as_bool().unwrap(), "{stdout}");
    let cmd = command(&fx, "upgrade-k8s", &["--to", "1.34.2", "--plan"]);
    let (code, table, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(table.contains("TalosControlPlane/capi-work-cp"), "{table}");
    assert!(table.contains("MACHINES REPLACED"), "{table}");
    assert_eq!(
        tcp(&fx)["spec"],
        tcp_before["spec"],
        "--plan patched nothing"
    );
    assert_eq!(
        object_names(&fx.sim.capi().unwrap().list("machines")),
        object_names(&before)
    );

    let cmd = command(&fx, "upgrade-k8s", &confirmed("1.34.2", WORKLOAD));
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    for said in [
        "machine ",
        " created",
        "node ",
        " Ready",
        "old machine ",
        " deleted",
        "completed",
    ] {
        assert!(stdout.contains(said), "{said:?} in\n{stdout}");
    }
    let after = fx.sim.capi().unwrap().list("machines");
    assert_eq!(after.len(), 5, "{after:?}");
    assert!(
        object_names(&after).is_disjoint(&object_names(&before)),
        "every Machine replaced: {:?}",
        object_names(&after)
    );
    for m in &after {
        assert_eq!(m["spec"]["version"], "v1.34.2", "{m}");
    }
    assert_eq!(workers_version(&fx), "v1.34.2");
    let nodes = sim_nodes(&fx);
    assert_eq!(nodes.len(), 5, "{nodes:?}");
    for (node, kubelet, _, up) in &nodes {
        assert_eq!((kubelet.as_str(), *up), ("v1.34.2", true), "{node}");
    }
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).unwrap_or_default();
    assert!(audit.contains("the Cluster API way"), "{audit}");

    // Run again: nothing left to do.
    let cmd = command(&fx, "upgrade-k8s", &["--to", "1.34.2", "--plan"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(0));
    assert!(stdout.contains("nothing to upgrade"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_to_the_next_minor_rolls_a_new_machine_template() {
    let fx = start(builtin("capi")).await;
    let before = settled_machines(&fx).await;
    let cmd = command(&fx, "upgrade", &confirmed("v1.12.0", WORKLOAD));
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("ONEMachineTemplate capi-work-cp-v1.12.0 created"),
        "{stdout}"
    );
    let capi = fx.sim.capi().unwrap();
    capi_checks::assert_talos_templates_rolled(capi, "v1.12.0");
    let after = capi.list("machines");
    assert_eq!(after.len(), 5);
    assert!(object_names(&after).is_disjoint(&object_names(&before)));
    let nodes = sim_nodes(&fx);
    assert_eq!(nodes.len(), 5, "{nodes:?}");
    for (node, _, talos, up) in &nodes {
        assert_eq!((talos.as_str(), *up), ("v1.12.0", true), "{node}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_talos_target_without_its_vm_template_is_refused() {
    let fx = start(builtin("capi")).await;
    settled_machines(&fx).await;
    // v1.12.1 is a Talos release, but the provider has no template for it.
    let cmd = command(
        &fx,
        "upgrade",
        &["--to", "v1.12.1", "--plan", "--output", "json"],
    );
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    let plan: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let guard = plan_guard(&plan, "capi_vm_template");
    assert_eq!(guard["verdict"], "fail");
    assert!(
        guard["reason"]
            .as_str()
            .unwrap()
            .contains("talos-capi-work-controlplane-v1.12.1"),
        "{guard}"
    );
}

/// Runs `cmd` until a line of its stdout contains `wanted` (a progress line carries its time
/// and its step's elapsed time first); the child, still running, and the lines seen.
async fn run_until_containing(
    mut cmd: tokio::process::Command,
    wanted: &str,
) -> (tokio::process::Child, Vec<String>) {
    use tokio::io::AsyncBufReadExt;
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let bound = std::time::Duration::from_secs(300);
    let seen = tokio::time::timeout(bound, async {
        let mut seen = Vec::new();
        while let Some(line) = lines.next_line().await.expect("read") {
            let hit = line.contains(wanted);
            seen.push(line);
            if hit {
                break;
            }
        }
        seen
    })
    .await
    .unwrap_or_else(|_| panic!("no line with {wanted:?} within {bound:?}"));
    (child, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_run_resumes_its_phase_without_patching_again() {
    let fx = start(builtin("capi")).await;
    let before = settled_machines(&fx).await;
    let cmd = command(&fx, "upgrade-k8s", &confirmed("1.34.2", WORKLOAD));
    // A Machine of the control plane's phase created: the phase is under way.
    let (mut child, seen) =
        run_until_containing(cmd, "TalosControlPlane/capi-work-cp: machine ").await;
    child.kill().await.expect("kill the first run");
    assert!(
        seen.iter()
            .any(|l| l.contains("capi-work-cp patched to v1.34.2")),
        "{seen:?}"
    );

    let cmd = command(&fx, "upgrade-k8s", &confirmed("1.34.2", WORKLOAD));
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "resuming the CAPI-way upgrade of capi-work to 1.34.2 from its journal (phase "
        ),
        "{stderr}"
    );
    // The killed run is reported interrupted, and its rollout Lease taken over, not waited on.
    assert!(stderr.contains("the Cluster API way"), "{stderr}");
    assert!(stderr.contains("was interrupted"), "{stderr}");
    assert!(
        stdout.contains("rollout Lease taken over from the interrupted run"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("TalosControlPlane/capi-work-cp patched"),
        "the control plane is not patched twice:\n{stdout}"
    );
    assert!(stdout.contains("completed"), "{stdout}");
    let after = fx.sim.capi().unwrap().list("machines");
    assert_eq!(after.len(), 5, "{after:?}");
    assert!(object_names(&after).is_disjoint(&object_names(&before)));
    for m in &after {
        assert_eq!(m["spec"]["version"], "v1.34.2", "{m}");
    }
}

/// SIGINT while the control plane's phase rolls: the run stops at the phase's next wait (or,
/// had the phase just finished, before the next one), never mid-call, says what it leaves,
/// and records the cancel; the workers' phase is never patched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_stops_between_polls_or_phases_and_says_what_it_leaves() {
    use tokio::io::AsyncBufReadExt;
    let fx = start(builtin("capi")).await;
    settled_machines(&fx).await;
    let mut cmd = command(&fx, "upgrade-k8s", &confirmed("1.34.2", WORKLOAD));
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let wanted = "TalosControlPlane/capi-work-cp patched to v1.34.2";
    let bound = std::time::Duration::from_secs(300);
    tokio::time::timeout(bound, async {
        while let Some(line) = lines.next_line().await.expect("read") {
            if line.contains(wanted) {
                return;
            }
        }
        panic!("the run ended before {wanted:?}");
    })
    .await
    .unwrap_or_else(|_| panic!("no {wanted:?} within {bound:?}"));
    let pid = child.id().expect("still running").to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let rest = tokio::time::timeout(bound, async {
        let mut rest = Vec::new();
        while let Some(line) = lines.next_line().await.expect("read") {
            rest.push(line);
        }
        rest
    })
    .await
    .expect("the run ends after the cancel");
    let status = child.wait().await.expect("exit status");
    let rest = rest.join("\n");
    assert_eq!(status.code(), Some(1), "{rest}");
    let while_waiting = rest.contains("cancelled while waiting for TalosControlPlane/capi-work-cp")
        && rest.contains("TalosControlPlane/capi-work-cp stays patched to v1.34.2");
    let between = rest.contains("cancelled before step 2 of 2");
    assert!(while_waiting || between, "{rest}");
    assert_eq!(
        workers_version(&fx),
        "v1.34.1",
        "the workers' phase never began"
    );
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).unwrap_or_default();
    assert!(
        audit
            .lines()
            .any(|l| l.contains("the Cluster API way") && l.contains("cancelled")),
        "{audit}"
    );
}
