//! The built-in Cluster API scenarios (`capi`, `capi-clusterctl` and one per stuck fault): the
//! management and workload clusters, the faults the controller (crate::capi) injects at start,
//! and the object-name suffixes the Kubernetes API generates.
use super::scenario::{NodeRole, Scenario, build_cluster};

/// The known deadlocks of the Talos control-plane provider, injected at start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StuckFault {
    /// A control-plane rollout (TalosControlPlane `spec.version` at the next patch, v1.34.2)
    /// whose surge Machine already runs it, and whose oldest outdated control plane has an
    /// unhealthy etcd member: scale-down waits "for etcd to become healthy before scaling down"
    /// forever (the scenario starts in that state).
    /// Fixed by deleting (or removing the etcd member of) the stuck Machine.
    StuckRollout,
    /// An etcd member left behind by a Machine deleted out of band (its node powered off), with
    /// the provider's etcd audit off, as in provider releases before `auditEtcd`: etcd health
    /// fails with "expected to have 3 members, got 4". Fixed by EtcdRemoveMemberByID.
    OrphanedMember,
    /// A one-control-plane cluster whose only etcd service stopped with its data intact: no
    /// quorum, the Kubernetes API down, until a reboot starts etcd again (etcd_service).
    SingleMemberStopped,
    /// A control-plane Machine, not deleting, whose node already left etcd (a scale-down's
    /// `gracefulEtcdLeave` done, the Machine's deletion not: CACPPT #237, #225, #193): the
    /// health check fails forever ("expected to have 3 members, got 2" / etcd not Running on
    /// the node). Fixed by deleting the Machine: scale-up makes a replacement that joins.
    EtcdLeft,
    /// A control-plane rollout (to v1.34.2) whose first surge Machine never gets a VM, so
    /// never a node or addresses: the scale-down waits for every node to boot, the health
    /// check cannot reach it (configs.go "no addresses were found for node"). Fixed by
    /// deleting the surge Machine; the next surge boots.
    NodeRefLessSurge,
    /// A worker Machine deleted while a PodDisruptionBudget over the workload's pods allows no
    /// disruption: the machine controller's drain of its Node is refused at every retry, so
    /// the Machine stays deleting (cluster-api machine_controller.go `reconcileDelete`, no
    /// `nodeDrainTimeout`). Cleared once the budget allows the evictions.
    DrainBlocked,
}

/// What the `capi` scenarios hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapiSpec {
    /// The Talos cluster whose kube API is the management cluster.
    pub management: String,
    /// The workload cluster CAPI owns (also the Cluster object's name).
    pub workload: String,
    pub namespace: String,
    pub fault: Option<StuckFault>,
    /// The kubeadm providers and Cluster API Provider AWS installed beside the Talos and
    /// OpenNebula providers, as `clusterctl init` leaves a management cluster
    /// (resources.rs `CLUSTERCTL_DEFAULTS`).
    pub clusterctl_defaults: bool,
    /// The DNS domain of the workload's Kubernetes Node names (`capi-fqdn`): each Machine's
    /// nodeRef and `Hostname` address is `<hostname>.<domain>`, as kubelets on AWS register
    /// them, while Talos (and so its etcd member) keeps the short hostname.
    pub node_domain: Option<String>,
}

/// The domain `capi-fqdn` names its workload's Nodes in.
pub const FQDN_DOMAIN: &str = "example.internal";

/// The version `capi-stuck-rollout` rolls the control planes to.
pub(crate) const ROLLOUT_VERSION: &str = "v1.34.2";

/// The built-in `capi` scenarios: management cluster `capi-mgmt` (index 0), workload cluster
/// `capi-work` (index 1: 3 control planes and 2 workers; 4 control planes with
/// `capi-orphaned-member`, 1 with `capi-etcd-stopped`).
pub(crate) fn builtin(name: &str) -> Option<Scenario> {
    use NodeRole::{ControlPlane, Worker};
    let clusterctl_defaults = name == "capi-clusterctl";
    let node_domain = (name == "capi-fqdn").then(|| FQDN_DOMAIN.to_string());
    let fault = match name {
        "capi" | "capi-clusterctl" | "capi-fqdn" => None,
        "capi-stuck-rollout" => Some(StuckFault::StuckRollout),
        "capi-orphaned-member" => Some(StuckFault::OrphanedMember),
        "capi-etcd-stopped" => Some(StuckFault::SingleMemberStopped),
        "capi-etcd-leaving" => Some(StuckFault::EtcdLeft),
        "capi-no-node-ref" => Some(StuckFault::NodeRefLessSurge),
        "capi-drain-blocked" => Some(StuckFault::DrainBlocked),
        _ => return None,
    };
    let control_planes = match fault {
        Some(StuckFault::OrphanedMember | StuckFault::StuckRollout) => 4,
        Some(StuckFault::SingleMemberStopped) => 1,
        _ => 3,
    };
    let names: Vec<(String, NodeRole)> = (0..control_planes)
        .map(|i| {
            (
                format!("capi-work-cp-{}", random_suffix(11 + i)),
                ControlPlane,
            )
        })
        .chain((0..2).map(|i| (format!("capi-work-md-0-{}", random_suffix(101 + i)), Worker)))
        .collect();
    let refs: Vec<(&str, NodeRole)> = names.iter().map(|(n, r)| (n.as_str(), *r)).collect();
    Some(Scenario {
        name: name.to_string(),
        clusters: vec![
            build_cluster("capi-mgmt", 0, &[("cp-1", ControlPlane)], |_| {}),
            // The stuck rollout starts where it sticks: the surge Machine (the 4th control
            // plane) already runs the new version.
            build_cluster("capi-work", 1, &refs, |n| {
                if fault == Some(StuckFault::StuckRollout)
                    && Some(&n.name) == names.get(3).map(|(n, _)| n)
                {
                    n.kubernetes_version = ROLLOUT_VERSION.into();
                }
            }),
        ],
        capi: Some(CapiSpec {
            management: "capi-mgmt".into(),
            workload: "capi-work".into(),
            namespace: "default".into(),
            fault,
            clusterctl_defaults,
            node_domain,
        }),
        opennebula: Default::default(),
    })
}

/// The names Kubernetes's SimpleNameGenerator appends (k8s.io/apiserver
/// pkg/storage/names/generate.go: 5 characters of `bcdfghjklmnpqrstvwxz2456789`).
pub(crate) fn random_suffix(seed: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut n = seed;
    (0..5)
        .map(|_| {
            let c = ALPHABET[(n % ALPHABET.len() as u64) as usize] as char;
            n /= ALPHABET.len() as u64;
            n = n.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ seed;
            c
        })
        .collect()
}
