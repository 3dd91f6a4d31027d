//! The poller's Kubernetes side against the Talos sim plus the Kubernetes API
//! sim: a cluster paired by name gets its Kubernetes facts in the same round
//! as its Talos nodes, and an API server that only answers 503 (which kube
//! retries for minutes) costs the round no more than the call timeout.
mod kube_common;
mod talos_common;

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use kube_common::{control_plane_pods, start_kube_api};
use talos_common::{Sim, fast, scenario, start, within};
use taloscope::discovery::{Sources, discover};
use taloscope::fleet::{FleetEvent, KubernetesFacts, PollerOptions, spawn_poller};
use taloscope::talos::ClientOptions;
use taloscope_sim::kube_api::kubeconfig;
use taloscope_sim::kube_api::{KubeClusterFacts, KubeNodeFacts};

/// The healthy cluster as Kubernetes sees it; without the control-plane
/// static pods no kube-apiserver is ready and `/version` answers 503.
fn kube_facts(sim: &Sim, apiserver_ready: bool) -> KubeClusterFacts {
    let names = ["cp-1", "cp-2", "cp-3", "w-1", "w-2"];
    let nodes = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let control_plane = name.starts_with("cp");
            KubeNodeFacts {
                name: name.to_string(),
                address: sim.address("healthy", i).parse().expect("an address"),
                control_plane,
                kubelet_version: "v1.34.1".into(),
                talos_version: "v1.11.3".into(),
                ready: true,
                static_pods: if control_plane && apiserver_ready {
                    control_plane_pods("v1.34.1")
                } else {
                    vec![]
                },
            }
        })
        .collect();
    KubeClusterFacts {
        cluster: "healthy".into(),
        kube_proxy_version: "v1.34.1".into(),
        nodes,
        created_unix: 1_700_000_000,
        storage_unreachable: false,
    }
}

/// Runs one poller round of the `healthy` cluster paired with a kube API
/// sim; returns how many Talos nodes answered and the Kubernetes facts.
async fn one_round_with_kube(
    apiserver_ready: bool,
    client: ClientOptions,
) -> (usize, Option<KubernetesFacts>, Duration) {
    let sim = start(scenario("healthy")).await;
    let ip = IpAddr::V4(Ipv4Addr::new(127, 31, 0, 1));
    let api = start_kube_api(ip, kube_facts(&sim, apiserver_ready)).await;
    let cfg = api.admin_kubeconfig("healthy", false);
    let kubeconfig_path = sim.dir.path().join("kubeconfig");
    kubeconfig::write(&kubeconfig_path, &cfg).expect("kubeconfig written");

    let discovery = discover(&Sources {
        talosconfigs: vec![sim.fleet.talosconfig_path()],
        kubeconfigs: vec![kubeconfig_path],
        ..Default::default()
    });
    let cluster = discovery
        .cluster("healthy")
        .cloned()
        .expect("the healthy cluster");
    assert!(
        cluster.kube.is_some() && cluster.talos.is_some(),
        "{cluster:?}"
    );
    let (tx, mut rx) = tokio::sync::mpsc::channel(256);
    let options = PollerOptions {
        focused_interval: Duration::from_millis(300),
        background_interval: Duration::from_secs(600),
        client,
        max_concurrent_clusters: 2,
    };
    let started = tokio::time::Instant::now();
    let poller = spawn_poller(vec![cluster], discovery.kubeconfig.clone(), options, tx);
    let (mut talos_nodes, mut kube) = (0, None);
    within(20, "one round with both sides", async {
        loop {
            match rx.recv().await.expect("the poller is still sending") {
                FleetEvent::Node { node, .. } if node.error.is_none() => talos_nodes += 1,
                FleetEvent::Kubernetes { facts, .. } => kube = Some(*facts),
                FleetEvent::PollFinished { .. } => return,
                _ => {}
            }
        }
    })
    .await;
    let took = started.elapsed();
    within(5, "shutdown", poller.shutdown()).await;
    api.server.stop();
    sim.fleet.shutdown().await;
    (talos_nodes, kube, took)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paired_cluster_reports_its_kubernetes_side_in_the_round() {
    let (talos_nodes, kube, _) = one_round_with_kube(true, fast()).await;
    assert_eq!(talos_nodes, 5);
    let kube = kube.expect("Kubernetes facts in the round");
    assert_eq!(kube.report.error, None);
    assert_eq!(kube.report.server_version.as_deref(), Some("v1.34.1"));
    assert_eq!(kube.report.kube_proxy_version.as_deref(), Some("v1.34.1"));
    assert_eq!(kube.report.components.len(), 9);
    assert_eq!(kube.nodes.len(), 5);
    assert!(
        kube.nodes
            .iter()
            .all(|n| n.ready && n.kubelet_version == "v1.34.1")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_server_answering_503_does_not_hold_the_round() {
    let client = ClientOptions {
        connect_timeout: Duration::from_millis(500),
        call_timeout: Duration::from_secs(1),
        ..fast()
    };
    let (talos_nodes, kube, took) = one_round_with_kube(false, client).await;
    assert_eq!(talos_nodes, 5);
    let kube = kube.expect("Kubernetes facts in the round");
    let error = kube.report.error.expect("an error for the Kubernetes side");
    assert!(error.contains("admin@healthy"), "{error}");
    assert!(took < Duration::from_secs(5), "the round took {took:?}");
}
