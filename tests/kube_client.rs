//! The Kubernetes client against the Kubernetes API sim over loopback HTTPS:
//! nodes, versions, components, a rebooting node, cordon, an unreachable API
//! server and an expired client certificate.
mod kube_common;

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use kube_common::{
    CONTROL_PLANE_COMPONENTS, KubeSim, control_plane_pods, node_named, start_kube_api,
};
use taloscope::kube::removed_apis;
use taloscope::kube::{KubeClient, KubeError};
use taloscope_sim::kube_api::{KubeClusterFacts, KubeNodeFacts};

fn facts(cluster: &str, net: u8) -> KubeClusterFacts {
    let node = |name: &str, last: u8, cp: bool| KubeNodeFacts {
        name: name.into(),
        address: IpAddr::V4(Ipv4Addr::new(127, 31, net, last)),
        control_plane: cp,
        kubelet_version: "v1.34.1".into(),
        talos_version: "v1.11.3".into(),
        ready: true,
        static_pods: if cp {
            control_plane_pods("v1.34.1")
        } else {
            vec![]
        },
    };
    KubeClusterFacts {
        cluster: cluster.into(),
        kube_proxy_version: "v1.34.1".into(),
        nodes: vec![
            node("cp-1", 1, true),
            node("cp-2", 2, true),
            node("cp-3", 3, true),
            node("w-1", 4, false),
            node("w-2", 5, false),
        ],
        created_unix: 1_700_000_000,
        storage_unreachable: false,
    }
}

async fn start(cluster: &str, net: u8) -> KubeSim {
    start_kube_api(
        IpAddr::V4(Ipv4Addr::new(127, 31, net, 1)),
        facts(cluster, net),
    )
    .await
}

async fn client(f: &KubeSim, cluster: &str, expired: bool) -> KubeClient {
    let cfg = f.admin_kubeconfig(cluster, expired);
    KubeClient::new(&cfg, &format!("admin@{cluster}"), Default::default())
        .await
        .unwrap()
}

#[tokio::test]
async fn nodes_versions_and_components() {
    let f = start("kc-healthy", 1).await;
    let c = client(&f, "kc-healthy", false).await;
    assert_eq!(c.server_version().await.unwrap(), "v1.34.1");
    let nodes = c.nodes().await.unwrap();
    assert_eq!(nodes.len(), 5);
    assert!(
        nodes
            .iter()
            .all(|n| n.ready && n.kubelet_version == "v1.34.1")
    );
    let cp1 = nodes.iter().find(|n| n.name == "cp-1").unwrap();
    assert_eq!(cp1.roles, vec!["control-plane".to_string()]);
    assert_eq!(cp1.internal_ips, vec!["127.31.1.1".to_string()]);
    assert!(
        cp1.taints
            .iter()
            .any(|t| t.starts_with("node-role.kubernetes.io/control-plane"))
    );
    let components = c.control_plane_components().await.unwrap();
    assert_eq!(components.len(), 9);
    for node in ["cp-1", "cp-2", "cp-3"] {
        for name in CONTROL_PLANE_COMPONENTS {
            let comp = components
                .iter()
                .find(|x| x.node == node && x.name == name)
                .unwrap();
            assert_eq!(comp.version, "v1.34.1");
            assert!(comp.ready);
        }
    }
    assert_eq!(
        c.kube_proxy_version().await.unwrap().as_deref(),
        Some("v1.34.1")
    );
    // Nothing the sim stores is in a removed version: every count is zero.
    let removed = c.removed_api_objects("v1.31.0", "v1.32.0").await.unwrap();
    assert_eq!(removed.len(), removed_apis::removed_between(31, 32).len());
    assert!(removed.iter().all(|r| r.count == 0));
}

#[tokio::test]
async fn rebooting_node_goes_not_ready_and_returns_upgraded() {
    let f = start("kc-reboot", 2).await;
    let c = client(&f, "kc-reboot", false).await;
    f.facts.send_modify(|facts| facts.nodes[3].ready = false);
    let w1 = node_named(&c, "w-1").await;
    assert!(!w1.ready);
    f.facts.send_modify(|facts| {
        facts.nodes[3].ready = true;
        facts.nodes[3].kubelet_version = "v1.35.0".into();
    });
    let w1 = node_named(&c, "w-1").await;
    assert!(w1.ready);
    assert_eq!(w1.kubelet_version, "v1.35.0");
}

#[tokio::test]
async fn cordon_and_uncordon() {
    let f = start("kc-cordon", 3).await;
    let c = client(&f, "kc-cordon", false).await;
    c.set_cordoned("w-2", true).await.unwrap();
    let w2 = node_named(&c, "w-2").await;
    assert!(w2.unschedulable);
    c.set_cordoned("w-2", false).await.unwrap();
    let w2 = node_named(&c, "w-2").await;
    assert!(!w2.unschedulable);
}

#[tokio::test]
async fn unreachable_api_server_is_a_clear_error() {
    let f = start("kc-down", 4).await;
    let c = client(&f, "kc-down", false).await;
    f.server.stop();
    // The port stays bound until the listener task is gone; poll, bounded.
    let mut last = None;
    for _ in 0..50 {
        match tokio::time::timeout(Duration::from_secs(10), c.nodes()).await {
            Ok(Err(e)) => {
                last = Some(e);
                break;
            }
            _ => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    match last {
        Some(KubeError::Unreachable { context, .. }) => assert_eq!(context, "admin@kc-down"),
        other => panic!("expected Unreachable, got {other:?}"),
    }
}

#[tokio::test]
async fn expired_client_certificate_is_refused() {
    let f = start("kc-expired", 5).await;
    let c = client(&f, "kc-expired", true).await;
    let err = c.nodes().await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("admin@kc-expired"), "{text}");
    assert!(matches!(err, KubeError::Unauthorized { .. }), "{err:?}");
    assert!(text.contains("CertificateExpired"), "{text}");
}

#[tokio::test]
async fn an_api_server_answering_503_fails_within_the_call_timeout() {
    let f = start("kc-503", 6).await;
    let c = client(&f, "kc-503", false).await;
    // No ready kube-apiserver: the sim answers /version with 503.
    f.facts.send_modify(|facts| {
        for n in &mut facts.nodes {
            n.ready = false;
        }
    });
    let started = std::time::Instant::now();
    let result = tokio::time::timeout(Duration::from_secs(20), c.server_version()).await;
    let err = result.expect("no retrying for minutes").unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(err.to_string().contains("kc-503"), "{err}");
}
