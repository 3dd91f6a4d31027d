//! The fleet domain: the status model of clusters, nodes and etcd (what
//! `taloscope status --output json` prints and the console shows), quorum
//! math, the one collector (`round`) that fills the model from the Talos
//! and Kubernetes APIs for the console and the commands alike, the health
//! checklist a node's HealthCheck stream (or the client-side checks) fills
//! in, certificate expiry, the one severity order of what is wrong
//! (`problems`) and each cluster summed up in words (`summary`).
pub mod cert_expiry;
pub mod client_checks;
pub mod collect;
pub mod health_check;
pub mod kubernetes;
pub mod live;
pub mod membership;
pub mod poller;
pub mod problems;
pub mod quorum;
pub mod rollout_lease;
pub mod round;
pub mod status;
pub mod summary;

pub use collect::{CollectOptions, NodeProbe};
pub use health_check::{CheckMark, HealthCheckRow, HealthChecklist};
pub use kubernetes::{KubernetesFacts, apply_kubernetes, collect_kubernetes, kube_client_for};
pub use live::{ClusterLive, FleetEvent, FleetModel};
pub use membership::{Answered, NodePlan, NodeSources, node_list};
pub use poller::{LivePollers, PollerCommand, PollerHandle, PollerOptions, spawn_poller};
pub use quorum::Quorum;
pub use rollout_lease::{LeaseError, RolloutLease, give_back};
pub use round::{
    KubeSource, TalosSide, collect_cluster, collect_context, collect_discovered, collect_status,
};
pub use status::{
    ClusterStatus, ComponentReport, EtcdAlarmReport, EtcdMemberReport, EtcdReport, FleetStatus,
    KubernetesReport, NodeRole, NodeSource, NodeStatus, RolloutStatus, node_named_among,
};
