use super::*;
use crate::fleet::status::{ComponentReport, EtcdMemberReport, EtcdReport, KubernetesReport};
use crate::fleet::{CheckMark, HealthChecklist};

fn node(name: &str, address: &str, role: NodeRole) -> NodeStatus {
    NodeStatus {
        name: name.into(),
        address: address.into(),
        role,
        k8s_ready: Some(true),
        cordoned: Some(false),
        ..Default::default()
    }
}

fn member(hostname: &str) -> EtcdMemberReport {
    EtcdMemberReport {
        hostname: hostname.into(),
        healthy: true,
        ..Default::default()
    }
}

/// Three control planes and a worker, all well.
fn healthy() -> ClusterStatus {
    let cps = ["cp-1", "cp-2", "cp-3"];
    let mut nodes: Vec<NodeStatus> = cps
        .iter()
        .enumerate()
        .map(|(i, n)| node(n, &format!("127.10.0.{}", i + 2), NodeRole::Controlplane))
        .collect();
    nodes.push(node("w-1", "127.10.0.5", NodeRole::Worker));
    let components = cps
        .iter()
        .flat_map(|n| {
            [
                "kube-apiserver",
                "kube-controller-manager",
                "kube-scheduler",
            ]
            .map(|c| ComponentReport {
                node: n.to_string(),
                name: c.into(),
                version: "v1.34.1".into(),
                ready: true,
            })
        })
        .collect();
    ClusterStatus {
        name: "healthy".into(),
        role: "os:etcd:backup".into(),
        nodes,
        etcd: EtcdReport {
            members: cps.iter().map(|n| member(n)).collect(),
            ..Default::default()
        },
        kubernetes: Some(KubernetesReport {
            components,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn folded(status: &ClusterStatus) -> HealthChecklist {
    let mut list = HealthChecklist::new(status);
    for progress in client_side_checks(status) {
        list.apply(progress);
    }
    list.finish(None);
    list
}

#[test]
fn a_healthy_cluster_passes_every_check_in_upstreams_order() {
    let list = folded(&healthy());
    assert!(list.healthy, "{:?}", list.checks);
    assert_eq!(list.nodes.len(), 4);
    assert_eq!(list.nodes[0], "127.10.0.2 (cp-1)");
    assert_eq!(list.checks[0].name, "etcd to be healthy");
    assert_eq!(list.checks[5].name, "all k8s nodes to report schedulable");
}

#[test]
fn a_down_control_plane_is_named_in_the_etcd_check() {
    let mut status = healthy();
    status.etcd.members[1].healthy = false;
    status.kubernetes.as_mut().expect("kube").components[3].ready = false;
    let list = folded(&status);
    assert!(!list.healthy);
    let fail = list.first_failure().expect("a failure");
    assert_eq!(fail.name, "etcd to be healthy");
    assert_eq!(
        fail.reason,
        "127.10.0.3 (cp-2): etcd is not healthy: does not answer"
    );
    let components = &list.checks[3];
    assert_eq!(components.state, CheckMark::Fail);
    assert!(
        components
            .reason
            .contains("(cp-2): kube-apiserver is not ready")
    );
}

#[test]
fn a_not_ready_node_is_named() {
    let mut status = healthy();
    status.nodes[3].k8s_ready = Some(false);
    let list = folded(&status);
    let fail = list.first_failure().expect("a failure");
    assert_eq!(fail.name, "all k8s nodes to report ready");
    assert_eq!(fail.reason, "some nodes are not ready: [127.10.0.5 (w-1)]");
}

#[test]
fn without_kubernetes_the_kubernetes_checks_say_why() {
    let mut status = healthy();
    status.kubernetes = None;
    let list = folded(&status);
    assert_eq!(list.checks[0].state, CheckMark::Ok);
    assert_eq!(list.checks[2].state, CheckMark::Fail);
    assert_eq!(
        list.checks[2].reason,
        "no kube context is paired with this cluster"
    );
}
