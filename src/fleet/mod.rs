//! The fleet domain: the status model of clusters, nodes and etcd (what
//! `taloscope status --output json` prints and the console shows), quorum
//! math, and the collection that fills the model from the Talos and
//! Kubernetes APIs.
pub mod collect;
pub mod kubernetes;
pub mod live;
pub mod poller;
pub mod quorum;
pub mod rollout_lease;
pub mod status;

pub use collect::{CollectOptions, NodePlan, NodeProbe, collect_cluster, collect_context};
pub use kubernetes::{KubernetesFacts, apply_kubernetes, collect_kubernetes, kube_client_for};
pub use live::{ClusterLive, FleetEvent, FleetModel};
pub use poller::{PollerCommand, PollerHandle, PollerOptions, spawn_poller};
pub use quorum::Quorum;
pub use rollout_lease::{LeaseError, RolloutLease};
pub use status::{
    ClusterStatus, ComponentReport, EtcdAlarmReport, EtcdMemberReport, EtcdReport, FleetStatus,
    KubernetesReport, NodeRole, NodeStatus, RolloutStatus,
};
