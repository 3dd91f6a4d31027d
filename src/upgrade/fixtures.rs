//! Cluster statuses for the plan and guard tests: a healthy 3 + 2 cluster on Talos v1.11.3
//! and the ways it goes wrong. Loopback addresses only.
use crate::fleet::{
    ClusterStatus, EtcdMemberReport, EtcdReport, KubernetesReport, NodeRole, NodeStatus, Quorum,
};
use crate::talos::MachineStage;
use crate::versions::{TalosVersion, Version};

pub fn version(text: &str) -> TalosVersion {
    Version::parse(text).expect("test version parses")
}

pub fn node(name: &str, index: u8, role: NodeRole, talos: &str) -> NodeStatus {
    NodeStatus {
        name: name.to_string(),
        address: format!("127.10.0.{}", index + 2),
        role,
        source: Default::default(),
        talos_version: Some(talos.to_string()),
        stage: Some(MachineStage::Running),
        ready: true,
        unmet_conditions: vec![],
        error: None,
        kubelet_version: Some("v1.34.1".to_string()),
        k8s_ready: Some(true),
        cordoned: Some(false),
        not_a_member: false,
    }
}

/// One etcd member per control plane; `leader` leads.
pub fn cluster(name: &str, nodes: Vec<NodeStatus>, leader: &str) -> ClusterStatus {
    let members: Vec<EtcdMemberReport> = nodes
        .iter()
        .filter(|n| n.role == NodeRole::Controlplane)
        .enumerate()
        .map(|(i, n)| EtcdMemberReport {
            id: format!("{:016x}", i + 1),
            hostname: n.name.clone(),
            leader: n.name == leader,
            healthy: true,
            ..Default::default()
        })
        .collect();
    let mut status = ClusterStatus {
        name: name.to_string(),
        reachable: true,
        role: "os:admin".to_string(),
        nodes,
        etcd: EtcdReport {
            members,
            alarms: vec![],
            quorum: Quorum::default(),
        },
        kubernetes: Some(KubernetesReport {
            server_version: Some("v1.34.1".to_string()),
            ..Default::default()
        }),
        rollout: None,
        rollout_unread: None,
        error: None,
    };
    recount(&mut status);
    status
}

pub fn recount(status: &mut ClusterStatus) {
    status.etcd.quorum = Quorum::of_members(
        status
            .etcd
            .members
            .iter()
            .map(|m| (m.is_learner, m.healthy)),
    );
}

/// cp-1 (leader), cp-2, cp-3, w-1, w-2, all on `talos`.
pub fn healthy_on(talos: &str) -> ClusterStatus {
    let nodes = vec![
        node("cp-1", 0, NodeRole::Controlplane, talos),
        node("cp-2", 1, NodeRole::Controlplane, talos),
        node("cp-3", 2, NodeRole::Controlplane, talos),
        node("w-1", 3, NodeRole::Worker, talos),
        node("w-2", 4, NodeRole::Worker, talos),
    ];
    cluster("healthy", nodes, "cp-1")
}

pub fn healthy() -> ClusterStatus {
    healthy_on("v1.11.3")
}

pub fn set_member_healthy(status: &mut ClusterStatus, hostname: &str, healthy: bool) {
    for m in status
        .etcd
        .members
        .iter_mut()
        .filter(|m| m.hostname == hostname)
    {
        m.healthy = healthy;
        m.errors = if healthy {
            vec![]
        } else {
            vec!["context deadline exceeded".to_string()]
        };
    }
    recount(status);
}

/// cp-2 does not answer: node unreachable, its etcd member unhealthy.
pub fn cp2_down() -> ClusterStatus {
    let mut status = healthy();
    status.name = "cp2-down".to_string();
    if let Some(cp2) = status.nodes.iter_mut().find(|n| n.name == "cp-2") {
        cp2.error = Some("connection refused".to_string());
        cp2.stage = None;
        cp2.ready = false;
        cp2.talos_version = None;
        cp2.k8s_ready = Some(false);
    }
    set_member_healthy(&mut status, "cp-2", false);
    status
}

pub fn single_cp() -> ClusterStatus {
    let nodes = vec![
        node("cp-1", 0, NodeRole::Controlplane, "v1.11.3"),
        node("w-1", 1, NodeRole::Worker, "v1.11.3"),
    ];
    cluster("single", nodes, "cp-1")
}

/// The releases a loopback registry lists: the built-in table's and `tag` (a patch released
/// after it, say), as a console or command learns them.
pub fn registry_releases(tag: &str) -> crate::upgrade::LearnedReleases {
    crate::upgrade::LearnedReleases {
        releases: crate::versions::TalosReleases::from_tags(&[tag], false),
        origin: crate::upgrade::ReleasesOrigin::Registry {
            registry: "127.0.0.1:5000".into(),
            repository: "siderolabs/installer".into(),
            age_seconds: 0,
        },
    }
}
