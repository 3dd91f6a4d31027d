//! The Kubernetes side of a cluster, over the API's JSON: nodes, server
//! version, control-plane static pods, kube-proxy, cordons, drains and disruption budgets, the removed-API
//! check, Leases, a node's kernel and its containers' restarts, and the Cluster API objects of a
//! management cluster. Building a client may run an exec plugin, so
//! callers build it on an IO task, never on the render path.
mod api_objects;
pub mod capi;
mod capi_machine;
mod capi_model;
mod capi_scale;
pub mod capi_write;
mod client;
mod credentials;
pub mod daemonset;
pub mod disruption;
pub mod drain;
pub mod lease;
pub mod node_runtime;
pub mod removed_apis;
mod rest;
mod types;

pub use capi::{CAPI_GROUP, CapiObjects};
pub use capi_model::{
    CapiCluster, CapiCondition, CapiVersion, InfraMachine, Machine, MachineDeployment, MachineSet,
    ObjectMeta, Owner, Replicas, TalosControlPlane,
};
pub use capi_scale::ScaledKind;
pub use client::{KubeClient, KubeError};
pub use credentials::client_certificate;
pub use daemonset::{DaemonSetRollout, KUBE_PROXY, KUBE_SYSTEM};
pub use disruption::DisruptionBudget;
pub use drain::{DrainError, DrainOptions, DrainReport, Eviction, NodePod};
pub use lease::{HeldLease, LeaseClaim, LeaseError, LeaseRecord};
#[cfg(test)]
pub(crate) use types::test_node;
pub use types::{
    CORDONED_BY_ANNOTATION, ControlPlaneComponent, KubeNode, NodeCondition, image_tag,
    match_talos_node,
};
