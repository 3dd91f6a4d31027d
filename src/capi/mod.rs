//! The Cluster API side of the fleet: which kube contexts are management clusters, the
//! workload clusters they own and which discovered cluster each is, and each workload
//! cluster's tree as `clusterctl describe cluster` shows it (pure, over `kube`'s model).
pub mod owned;
pub mod pairing;
pub mod read;
pub mod rows;
pub mod tree;

pub use owned::{capi_owned_nodes, read_owner};
pub use pairing::{CapiOwner, WorkloadCluster, host_port, pair_workloads};
pub use read::{
    CapiView, ContextRead, Management, ManagementError, candidate_contexts, managements,
    read_context, read_management, read_view,
};
pub use rows::{TREE_HEADER, TreeRow, condition_age, condition_head, tree_rows};
pub use tree::{
    ClusterTree, ControlPlaneNode, Counts, DeploymentNode, MachineNode, MachineRole,
    MachineSetNode, cluster_tree, cluster_trees, needs_attention, tree_names, trees_named,
};

#[cfg(test)]
pub(crate) mod tree_tests;
