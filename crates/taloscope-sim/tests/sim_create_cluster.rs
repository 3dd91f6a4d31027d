//! The sim forms new clusters: VMs instantiated over XML-RPC (or a OneFlow service) with a
//! machine config in USER_DATA, or booted into maintenance mode and configured over the
//! maintenance API; Bootstrap once, the Kubernetes API on the config's endpoint with every node
//! Ready, the admin kubeconfig, and terminate removing the cluster.
mod cluster_create;
mod sim_common;

use std::io::Read as _;
use std::time::Duration;

use cluster_create::*;
use sim_common::{start_builtin, wait_for};
use taloscope_proto::machine::{
    ApplyConfigurationRequest, BootstrapRequest, apply_configuration_request::Mode,
};
use taloscope_sim::SimFleet;

/// Simulated seconds per real second: a 3+2 cluster (about 160 s simulated) in a few seconds.
const TIME_SCALE: f64 = 100.0;
const BOUND: Duration = Duration::from_secs(60);

struct Lab {
    secrets: Secrets,
    admin: (String, String),
    kube_admin: (String, String),
    /// `https://<first VM's address>:6443`.
    endpoint: String,
    /// The first VM's address: the VMs lease `.1`, `.2`, ... of the new-cluster network.
    first: std::net::Ipv4Addr,
}

fn lab(fleet: &SimFleet) -> Lab {
    let network = fleet
        .opennebula()
        .expect("OpenNebula sim")
        .new_clusters()
        .network;
    let o = network.octets();
    let first = std::net::Ipv4Addr::new(o[0], o[1], o[2], 1);
    let secrets = Secrets::new();
    Lab {
        admin: secrets.talos_admin(),
        kube_admin: secrets.kube_admin(),
        secrets,
        endpoint: format!("https://{first}:6443"),
        first,
    }
}

fn address(lab: &Lab, n: u8) -> String {
    let o = lab.first.octets();
    format!("{}.{}.{}.{}:50000", o[0], o[1], o[2], n)
}

/// `one.template.instantiate` of the new-cluster template for `role`; the VM id.
async fn instantiate(fleet: &SimFleet, role: &str, name: &str, extra: &str) -> i64 {
    let one = fleet.opennebula().expect("OpenNebula sim");
    let catalog = one.new_clusters();
    let template = if role == "controlplane" {
        catalog.controlplane_template_id
    } else {
        catalog.worker_template_id
    };
    let response = xmlrpc(
        one.xmlrpc_url(),
        "one.template.instantiate",
        &[
            string(&auth(fleet)),
            int(template),
            string(name),
            "<boolean>0</boolean>".into(),
            string(extra),
        ],
    )
    .await;
    answered_id(&response)
}

async fn talos_up(
    lab: &Lab,
    n: u8,
) -> taloscope_proto::machine::machine_service_client::MachineServiceClient<tonic::transport::Channel>
{
    let endpoint = address(lab, n);
    wait_for(
        &format!("apid with the cluster's certificate on {endpoint}"),
        BOUND,
        || async {
            let mut client = talos(&lab.secrets, &lab.admin, &endpoint).await?;
            client.version(()).await.ok()?;
            Some(client)
        },
    )
    .await
}

/// Bootstrap once on the first control plane, refused a second time; then every node Ready
/// through the new API, etcd with three members, and the admin kubeconfig that works.
async fn bootstrap_and_follow(lab: &Lab, nodes: usize, control_planes: usize) {
    let mut cp1 = talos_up(lab, 1).await;
    let waiting = cp1
        .etcd_member_list(taloscope_proto::machine::EtcdMemberListRequest::default())
        .await
        .expect_err("etcd waits for bootstrap");
    assert_eq!(waiting.code(), tonic::Code::Unavailable);
    // apid answers while the node still boots; until CRI is up Bootstrap is "not available yet".
    wait_for("Bootstrap accepted", BOUND, || {
        let mut cp1 = cp1.clone();
        async move {
            match cp1.bootstrap(BootstrapRequest::default()).await {
                Ok(_) => Some(()),
                Err(e) if e.message() == "bootstrap is not available yet" => None,
                Err(e) => panic!("first bootstrap: {e}"),
            }
        }
    })
    .await;
    let again = cp1
        .bootstrap(BootstrapRequest::default())
        .await
        .expect_err("second bootstrap");
    assert_eq!(again.code(), tonic::Code::AlreadyExists);
    assert_eq!(again.message(), "etcd data directory is not empty");
    let ready = wait_for(
        "every node Ready through the new cluster's API",
        BOUND,
        || async {
            let (status, body) = kube_get(
                &lab.endpoint,
                &lab.secrets.kubernetes.crt,
                &lab.kube_admin,
                "/api/v1/nodes",
            )
            .await?;
            let ready = ready_nodes(&body);
            (status == 200 && ready.len() == nodes).then_some(ready)
        },
    )
    .await;
    assert_eq!(ready.len(), nodes, "{ready:?}");
    let members = cp1
        .etcd_member_list(taloscope_proto::machine::EtcdMemberListRequest::default())
        .await
        .expect("members")
        .into_inner();
    let count = members.messages.first().map_or(0, |m| m.members.len());
    assert_eq!(count, control_planes, "etcd members");
    check_kubeconfig(lab, &mut cp1).await;
}

async fn check_kubeconfig(
    lab: &Lab,
    cp1: &mut taloscope_proto::machine::machine_service_client::MachineServiceClient<
        tonic::transport::Channel,
    >,
) {
    let mut stream = cp1.kubeconfig(()).await.expect("kubeconfig").into_inner();
    let mut gz = Vec::new();
    while let Some(chunk) = stream.message().await.expect("chunk") {
        gz.extend(chunk.bytes);
    }
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(&gz[..]));
    let mut files = Vec::new();
    for entry in archive.entries().expect("tar") {
        let mut entry = entry.expect("entry");
        let mut text = String::new();
        entry.read_to_string(&mut text).expect("text");
        files.push((entry.path().expect("path").display().to_string(), text));
    }
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].0, "kubeconfig");
    let config: serde_json::Value = serde_saphyr::from_str(&files[0].1).expect("kubeconfig YAML");
    assert_eq!(
        config["clusters"][0]["cluster"]["server"],
        lab.endpoint.as_str()
    );
    let b64 = |v: &serde_json::Value| {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(v.as_str().expect("b64"))
            .expect("base64");
        String::from_utf8(bytes).expect("PEM")
    };
    let user = &config["users"][0]["user"];
    let client = (
        b64(&user["client-certificate-data"]),
        b64(&user["client-key-data"]),
    );
    let (status, _) = kube_get(
        &lab.endpoint,
        &lab.secrets.kubernetes.crt,
        &client,
        "/api/v1/nodes",
    )
    .await
    .expect("the kubeconfig's client reaches the API");
    assert_eq!(status, 200);
}

/// Terminating every VM stops the nodes and the cluster disappears.
async fn terminate_all(fleet: &SimFleet, lab: &Lab, vms: &[i64]) {
    let one = fleet.opennebula().expect("OpenNebula sim");
    for vm in vms {
        let response = xmlrpc(
            one.xmlrpc_url(),
            "one.vm.action",
            &[string(&auth(fleet)), string("terminate"), int(*vm)],
        )
        .await;
        answered_id(&response);
    }
    wait_gone(fleet, lab).await;
}

async fn wait_gone(fleet: &SimFleet, lab: &Lab) {
    let state = fleet.state();
    wait_for("the cluster gone", BOUND, || async {
        state.cluster("lab").is_none().then_some(())
    })
    .await;
    assert!(
        tokio::net::TcpStream::connect(address(lab, 1))
            .await
            .is_err(),
        "apid still answers"
    );
    let api = lab.endpoint.trim_start_matches("https://").to_string();
    assert!(
        tokio::net::TcpStream::connect(api).await.is_err(),
        "the API still answers"
    );
}

#[tokio::test]
async fn user_data_vms_form_a_cluster_that_bootstraps_once_and_goes_away() {
    let sim = start_builtin("healthy", TIME_SCALE).await;
    let lab = lab(&sim.fleet);
    let started = std::time::Instant::now();
    let mut vms = Vec::new();
    for (role, name) in [
        ("controlplane", "cp-1"),
        ("controlplane", "cp-2"),
        ("controlplane", "cp-3"),
        ("worker", "w-1"),
        ("worker", "w-2"),
    ] {
        let config = lab.secrets.machine_config("lab", &lab.endpoint, role, name);
        vms.push(instantiate(&sim.fleet, role, name, &user_data_extra(&config)).await);
    }
    bootstrap_and_follow(&lab, 5, 3).await;
    // What time scale 1 would take (the sim's clock runs TIME_SCALE times faster).
    let simulated = started.elapsed().as_secs_f64() * TIME_SCALE;
    eprintln!("3+2 cluster formed in {simulated:.0} simulated seconds");
    // The sim's own steps add up to about 155 s; a loaded machine only adds to it.
    assert!(simulated >= 140.0, "{simulated} s");
    let mut worker = talos_up(&lab, 4).await;
    let refused = worker
        .bootstrap(BootstrapRequest::default())
        .await
        .expect_err("a worker does not bootstrap");
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    assert_eq!(
        refused.message(),
        "bootstrap can only be performed on a control plane node"
    );
    let cluster = sim
        .fleet
        .state()
        .cluster("lab")
        .cloned()
        .expect("cluster lab");
    let versions: Vec<String> = cluster
        .nodes()
        .iter()
        .map(|n| n.status().kubernetes.kubelet.version)
        .collect();
    assert_eq!(versions, vec!["v1.34.1"; 5]);
    let bootstraps = sim
        .fleet
        .state()
        .mutating_calls()
        .into_iter()
        .filter(|c| c.method == "MachineService.Bootstrap")
        .count();
    assert_eq!(bootstraps, 1);
    terminate_all(&sim.fleet, &lab, &vms).await;
}

#[tokio::test]
async fn vms_without_user_data_wait_in_maintenance_until_configured() {
    let sim = start_builtin("healthy", TIME_SCALE).await;
    let lab = lab(&sim.fleet);
    let mut vms = Vec::new();
    for (role, name) in [("controlplane", "cp-1"), ("worker", "w-1")] {
        vms.push(instantiate(&sim.fleet, role, name, "").await);
    }
    for (n, role, name) in [(1, "controlplane", "cp-1"), (2, "worker", "w-1")] {
        let endpoint = address(&lab, n);
        let mut client = wait_for(&format!("maintenance API on {endpoint}"), BOUND, || async {
            let mut c = maintenance(&endpoint).await?;
            let refused = c
                .version(())
                .await
                .expect_err("Version needs SideroLink admin");
            (refused.code() == tonic::Code::Unimplemented).then_some(c)
        })
        .await;
        let refused = client
            .bootstrap(BootstrapRequest::default())
            .await
            .expect_err("not in maintenance");
        assert_eq!(refused.code(), tonic::Code::Unimplemented);
        assert_eq!(refused.message(), "method Bootstrap not implemented");
        assert!(
            talos(&lab.secrets, &lab.admin, &endpoint).await.is_none(),
            "no mutual TLS in maintenance"
        );
        let config = lab.secrets.machine_config("lab", &lab.endpoint, role, name);
        let staged = ApplyConfigurationRequest {
            data: config.clone().into_bytes(),
            mode: Mode::Staged as i32,
            ..Default::default()
        };
        let refused = client
            .apply_configuration(staged)
            .await
            .expect_err("staged refused");
        assert_eq!(
            refused.message(),
            "apply configuration --mode='staged' is not supported in maintenance mode"
        );
        let apply = ApplyConfigurationRequest {
            data: config.into_bytes(),
            mode: Mode::Auto as i32,
            ..Default::default()
        };
        client.apply_configuration(apply).await.expect("applied");
    }
    bootstrap_and_follow(&lab, 2, 1).await;
    terminate_all(&sim.fleet, &lab, &vms).await;
}

#[tokio::test]
async fn a_oneflow_service_forms_the_cluster_and_its_deletion_removes_it() {
    let sim = start_builtin("healthy", TIME_SCALE).await;
    let lab = lab(&sim.fleet);
    let one = sim.fleet.opennebula().expect("OpenNebula sim");
    let role = |name: &str, count: usize| {
        let config = lab.secrets.machine_config("lab", &lab.endpoint, name, "");
        use base64::Engine as _;
        let data = base64::engine::general_purpose::STANDARD.encode(config);
        serde_json::json!({"name": name, "cardinality": count,
            "template_contents": {"CONTEXT": {"USER_DATA": data, "USER_DATA_ENCODING": "base64"}}})
    };
    let roles = serde_json::json!([role("controlplane", 3), role("worker", 2)]);
    let (status, answer) = instantiate_new_cluster_service(&sim.fleet, roles).await;
    assert_eq!(status, 201, "{answer}");
    let service: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
    let id = service["DOCUMENT"]["ID"]
        .as_str()
        .map(String::from)
        .or_else(|| service["DOCUMENT"]["ID"].as_i64().map(|i| i.to_string()))
        .expect("service id");
    bootstrap_and_follow(&lab, 5, 3).await;
    let (status, answer) = oneflow(
        one.oneflow_url(),
        &auth(&sim.fleet),
        "DELETE",
        &format!("/service/{id}"),
        "",
    )
    .await;
    assert_eq!(status, 204, "{answer}");
    wait_gone(&sim.fleet, &lab).await;
}
