//! Nodes that join a simulated cluster while the sim runs (a provisioned VM that booted Talos):
//! the append-only node list that keeps earlier `&[Arc<SimNode>]` views and node indexes valid,
//! and `FleetState::add_node`, which starts the new node's apid like the start-up path does.
use std::net::Ipv4Addr;
use std::ops::Deref;
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::watch;

use super::SimError;
use super::node;
use super::scenario::NodeSpec;
use super::state::{ClusterState, FleetState, SimNode, new_node};

/// A cluster's nodes. Each join publishes a new generation holding every node so far; older
/// generations stay alive (a few pointers each) so slices handed out earlier never dangle.
pub(crate) struct NodeList {
    first: NodeGeneration,
    grow: Mutex<()>,
    joined: watch::Sender<usize>,
}

struct NodeGeneration {
    nodes: Box<[Arc<SimNode>]>,
    next: OnceLock<Box<NodeGeneration>>,
}

impl NodeList {
    pub(crate) fn new(nodes: Vec<Arc<SimNode>>) -> NodeList {
        let (joined, _) = watch::channel(nodes.len());
        NodeList {
            first: NodeGeneration {
                nodes: nodes.into_boxed_slice(),
                next: OnceLock::new(),
            },
            grow: Mutex::new(()),
            joined,
        }
    }

    fn latest(&self) -> &NodeGeneration {
        let mut generation = &self.first;
        while let Some(next) = generation.next.get() {
            generation = next;
        }
        generation
    }

    /// Appends the node `make` builds from the current nodes (it sees the new node's index as
    /// their count); `make` may refuse, and then nothing changes.
    fn push(
        &self,
        make: impl FnOnce(&[Arc<SimNode>]) -> Result<Arc<SimNode>, SimError>,
    ) -> Result<Arc<SimNode>, SimError> {
        let _one_writer = self.grow.lock().unwrap_or_else(|e| e.into_inner());
        let last = self.latest();
        let node = make(&last.nodes)?;
        let mut all = last.nodes.to_vec();
        all.push(node.clone());
        let count = all.len();
        let _ = last.next.set(Box::new(NodeGeneration {
            nodes: all.into_boxed_slice(),
            next: OnceLock::new(),
        }));
        self.joined.send_replace(count);
        Ok(node)
    }

    /// Follows the node count (changes when a node joins).
    pub(crate) fn subscribe(&self) -> watch::Receiver<usize> {
        self.joined.subscribe()
    }
}

impl Deref for NodeList {
    type Target = [Arc<SimNode>];

    fn deref(&self) -> &[Arc<SimNode>] {
        &self.latest().nodes
    }
}

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
            .find(|(_, c)| c.name == cluster)
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
                Ok(Arc::new(new_node(cluster, ci, nodes.len(), &spec)))
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
