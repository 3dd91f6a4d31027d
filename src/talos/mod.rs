//! The native Talos API client: mutual TLS from a talosconfig context, endpoint
//! failover, per-node calls with the `node` metadata key and client-side fan-out,
//! the Events stream, service and kernel logs, the cluster health check, COSI resource
//! reads, the certificate a server presents, bootstrap and kubeconfig of a new cluster, the
//! maintenance API of an unconfigured node, and what runs inside a node (`machine_reads`, and
//! `storage_network`'s COSI resources). Bytes on the wire <-> typed values.
mod bootstrap;
mod calls;
pub mod client;
pub mod cosi;
pub mod error;
mod etcd_maintenance;
pub mod events;
mod fan_out;
mod files;
pub mod health;
pub mod kubernetes_resources;
pub mod logs;
pub mod machine_reads;
pub mod maintenance;
mod node_actions;
pub mod served_cert;
pub mod storage_network;
pub mod tls;
pub mod types;

pub use bootstrap::{KUBECONFIG_READ_BOUND, MAX_KUBECONFIG_BYTES};
pub use client::{ClientOptions, TalosClient, fan_out, fan_out_stream};
pub use cosi::{ClusterMember, ResourceEvent, ResourceEventKind};
pub use error::TalosError;
pub use events::{EventStream, EventsItem, EventsOptions, MachineEvent, NodeEvent};
pub use files::{BOOT_ID_PATH, MAX_READ_BYTES};
pub use health::{CheckState, HealthProgress};
pub use logs::{LogLevel, LogLine, LogOptions, LogSource};
pub use maintenance::{
    CertFingerprint, apply_configuration_insecure, fingerprint_of, maintenance_fingerprint,
};
pub use tls::{Role, Roles, TlsError};
pub use types::*;
