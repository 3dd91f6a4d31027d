//! What runs inside a node and what it holds: CPU, memory, load and uptime, disks and volumes
//! with how full they are, links, addresses, routes, KubeSpan peers and connections, processes
//! and containers. Read through the Talos client (`collect`), folded into one document
//! (`document`, the JSON contract of `node info` and `top`), with the usage arithmetic and its
//! thresholds apart (`usage`, pure), the nodes pane's one-call-per-refresh read (`rolling`)
//! and the words the CLI and the console print (`text`).
pub mod collect;
pub mod document;
pub mod rolling;
pub mod text;
pub mod usage;

pub use collect::{
    DEFAULT_SAMPLE_SPAN, NodeIdentity, NodeResourcesError, SortKey, read_node, read_processes,
    read_usage, shown_processes, sort_nodes, sort_processes,
};
pub use document::*;
pub use rolling::{RollingUsage, read_next_measure};
pub use usage::{Gauge, Level, Thresholds};
