//! Faults a test switches on and off while the sim runs (the scenario's faults are fixed at
//! start): an etcd member that turns unhealthy between two upgrades, a node held down after its
//! next reboot until let go.
use std::sync::atomic::{AtomicBool, Ordering};

use super::state::ClusterState;

/// The runtime switches of one node.
#[derive(Default, Debug)]
pub(crate) struct InjectedFaults {
    etcd_unhealthy: AtomicBool,
    never_returns: AtomicBool,
}

impl InjectedFaults {
    pub(crate) fn etcd_unhealthy(&self) -> bool {
        self.etcd_unhealthy.load(Ordering::Relaxed)
    }

    pub(crate) fn never_returns(&self) -> bool {
        self.never_returns.load(Ordering::Relaxed)
    }
}

/// Why a fault could not be injected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cluster {cluster} has no node named {node}")]
pub struct NoSuchNode {
    pub cluster: String,
    pub node: String,
}

impl ClusterState {
    fn injected(&self, node: &str) -> Result<&InjectedFaults, NoSuchNode> {
        self.node(node)
            .map(|n| &n.injected)
            .ok_or_else(|| NoSuchNode {
                cluster: self.name().to_string(),
                node: node.to_string(),
            })
    }

    /// Makes the node's etcd member report errors (and count as unhealthy) from now on, or
    /// heals it.
    pub fn set_etcd_unhealthy(&self, node: &str, unhealthy: bool) -> Result<(), NoSuchNode> {
        self.injected(node)?
            .etcd_unhealthy
            .store(unhealthy, Ordering::Relaxed);
        Ok(())
    }

    /// Makes the node stay down after its next reboot, until this is switched off again (then
    /// it boots as after any reboot).
    pub fn set_never_returns(&self, node: &str, never: bool) -> Result<(), NoSuchNode> {
        self.injected(node)?
            .never_returns
            .store(never, Ordering::Relaxed);
        Ok(())
    }
}
