//! Nodes that join a simulated cluster while the sim runs (a provisioned VM that booted Talos):
//! `FleetState::add_node`, which starts the new node's apid like start-up does, and the clusters
//! the sim forms from a booted machine config.
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use std::sync::atomic::AtomicU64;

use super::node;
use crate::model::error::SimError;
use crate::model::formed_cluster::Formation;
use crate::model::grow_list::NodeList;
use crate::model::scenario::{DEFAULT_IMAGE_PULL_MS, NodeSpec};
use crate::model::state::{
    ClusterState, EtcdCluster, FleetState, SimNode, first_control_plane, new_node,
};

impl ClusterState {
    /// Follows the node count: it changes when a node joins at run time.
    pub fn subscribe_joins(&self) -> watch::Receiver<usize> {
        self.nodes.subscribe()
    }
}

impl FleetState {
    /// A new node of `cluster`, booting now: apid answers on its address with the fleet's PKI
    /// (booting, then ready after the usual boot-to-ready time; a control plane then joins etcd)
    /// and its Kubernetes node follows. Refused for an unknown cluster, a hostname already in the
    /// cluster, an address already in the fleet or outside loopback, or a sim that is not running.
    pub fn add_node(&self, cluster: &str, spec: NodeSpec) -> Result<Arc<SimNode>, SimError> {
        let refuse = |reason: String| SimError::Join {
            cluster: cluster.to_string(),
            node: spec.name.clone(),
            reason,
        };
        let core = self
            .core
            .get()
            .and_then(|c| c.upgrade())
            .filter(|c| !*c.stop.borrow())
            .ok_or_else(|| refuse("the sim is not running".into()))?;
        if !spec.address.is_loopback() {
            return Err(refuse(format!(
                "address {} is outside 127.0.0.0/8",
                spec.address
            )));
        }
        let (ci, state) = self
            .clusters
            .iter()
            .enumerate()
            .find(|(_, c)| c.name == cluster && !c.is_retired())
            .map(|(i, c)| (i, c.clone()))
            .ok_or_else(|| refuse("no such cluster in the sim".into()))?;
        let node = {
            let mut by_address = self.by_address.write().unwrap_or_else(|e| e.into_inner());
            if by_address.contains_key(&spec.address) {
                return Err(refuse(format!("address {} is taken", spec.address)));
            }
            let node = state.nodes.push(|nodes| {
                if nodes.iter().any(|n| n.name() == spec.name) {
                    return Err(refuse("the hostname is taken".into()));
                }
                let endpoint = first_control_plane(nodes.iter().map(|n| (n.role(), n.address())))
                    .unwrap_or(spec.address);
                Ok(Arc::new(new_node(
                    cluster,
                    ci,
                    nodes.len(),
                    &spec,
                    endpoint,
                )))
            })?;
            by_address.insert(spec.address, (ci, node.node_index));
            node
        };
        node::join(&core, &state, &node).map_err(|source| SimError::Listen {
            cluster: cluster.to_string(),
            node: spec.name.clone(),
            address: spec.address.to_string(),
            source,
        })?;
        Ok(node)
    }

    /// A new, empty cluster formed from a machine config (its first control plane's); refused
    /// while a cluster of that name exists.
    pub(crate) fn create_cluster(
        &self,
        name: &str,
        formation: Formation,
    ) -> Result<Arc<ClusterState>, SimError> {
        self.clusters.push(|clusters| {
            if clusters.iter().any(|c| c.name == name && !c.is_retired()) {
                return Err(SimError::Join {
                    cluster: name.to_string(),
                    node: String::new(),
                    reason: "a cluster of that name exists".into(),
                });
            }
            Ok(Arc::new(ClusterState {
                name: name.to_string(),
                nodes: NodeList::new(Vec::new()),
                etcd: Mutex::new(EtcdCluster {
                    members: Vec::new(),
                    leader: None,
                    raft_term: 1,
                    raft_index: 0,
                    alarms: Vec::new(),
                    defragmented: Vec::new(),
                }),
                oneflow_max_vms: Vec::new(),
                image_pull_ms: AtomicU64::new(DEFAULT_IMAGE_PULL_MS),
                discovery_disabled: false,
                kube_proxy_disabled: false,
                kubespan: false,
                formation: Some(Arc::new(formation)),
            }))
        })
    }

    /// Powers a node off (its VM was terminated): apid stops answering and it stays down.
    pub fn power_off_node(&self, address: Ipv4Addr) -> bool {
        let Some((_, node)) = self.node_by_address(address) else {
            return false;
        };
        node::power_off(self, node);
        true
    }

    /// Deletes a machine: it powers off for good and its Kubernetes Node object goes away (a
    /// Machine deleted by Cluster API takes its Node with it: cluster-api
    /// internal/controllers/machine/machine_controller.go `deleteNode`). Its address stays
    /// taken and an etcd member it had stays until someone removes it.
    pub fn remove_node(&self, cluster: &str, name: &str) -> bool {
        let Some(node) = self.cluster(cluster).and_then(|c| c.node(name)).cloned() else {
            return false;
        };
        if !node
            .removed
            .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            node::power_off(self, &node);
        }
        true
    }

    /// Whether `address` belongs to a node of the fleet.
    pub fn address_taken(&self, address: Ipv4Addr) -> bool {
        self.by_address
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(&address)
    }
}
