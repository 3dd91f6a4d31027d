//! The fleet domain: the status model of clusters, nodes and etcd (what
//! `taloscope status --output json` prints and the console shows), quorum
//! math, and the collection that fills the model from the Talos API.
pub mod collect;
pub mod quorum;
pub mod status;

pub use collect::{CollectOptions, NodePlan, NodeProbe, collect_cluster, collect_context};
pub use quorum::Quorum;
pub use status::{
    ClusterStatus, EtcdAlarmReport, EtcdMemberReport, EtcdReport, FleetStatus, NodeRole, NodeStatus,
};
