//! The Kubernetes side of a cluster, through the kube crate: nodes, server
//! version, control-plane static pods, kube-proxy, cordons and drains, the removed-API
//! check and Leases. Building a client may run an exec plugin, so
//! callers build it on an IO task, never on the render path.
mod client;
pub mod drain;
pub mod exec_plugin;
pub mod lease;
pub mod removed_apis;
mod types;

pub use client::{KubeClient, KubeError};
pub use drain::{DrainError, DrainOptions, DrainReport, Eviction, NodePod};
pub use lease::{HeldLease, LeaseClaim, LeaseError, LeaseRecord};
pub use types::{
    CORDONED_BY_ANNOTATION, ControlPlaneComponent, KubeNode, NodeCondition, image_tag,
    match_talos_node,
};
