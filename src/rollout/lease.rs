//! What a rollout writes into its cluster's Lease: the holder, the kind, the
//! target, node i of n, the current node and its phase, as `taloscope.dev/*`
//! annotations. Encoding and decoding only; the Lease itself is kube's.
use std::collections::BTreeMap;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use super::progress::RolloutKind;

pub const ROLLOUT_LEASE_NAME: &str = "taloscope-rollout";
pub const ROLLOUT_LEASE_NAMESPACE: &str = "kube-system";

const KIND: &str = "taloscope.dev/rollout-kind";
const TARGET: &str = "taloscope.dev/target";
const NODE_INDEX: &str = "taloscope.dev/node-index";
const NODE_COUNT: &str = "taloscope.dev/node-count";
const CURRENT_NODE: &str = "taloscope.dev/current-node";
const PHASE: &str = "taloscope.dev/phase";

/// A rollout in progress on a cluster, as its rollout Lease tells it. This is
/// also the `rollout` of `taloscope status --output json` (`fleet::RolloutStatus`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct RolloutStatus {
    /// `user@host` of the console running it.
    pub holder: String,
    /// `null` when the lease names a kind this version does not know.
    pub kind: Option<RolloutKind>,
    /// "v1.12.0" or "1.35.0".
    pub target: Option<String>,
    /// The node being worked on, counted from 1.
    pub node_index: usize,
    pub node_count: usize,
    pub current_node: Option<String>,
    /// The current node's phase ("pulling", "rebooting", …), when told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// Another console's rollout on the same cluster (from its Lease), for the
/// upgrade guard "no other rollout in progress".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutInProgress {
    /// `user@host`.
    pub holder: String,
    /// The node it is on, counted from 1 as shown to operators.
    pub node_index: usize,
    pub node_count: usize,
}

/// What reading a cluster's rollout Lease told: another console's rollout (or none), or why
/// the Lease could not be read (its Kubernetes API down, the read forbidden).
pub type LeaseReading = Result<Option<RolloutInProgress>, String>;

impl RolloutStatus {
    /// For the upgrade guard "no other rollout in progress".
    pub fn as_in_progress(&self) -> RolloutInProgress {
        RolloutInProgress {
            holder: self.holder.clone(),
            node_index: self.node_index,
            node_count: self.node_count,
        }
    }
}

/// The rollout Lease as another console reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutLeaseInfo {
    pub rollout: RolloutStatus,
    /// Not renewed within its duration (or never held): nobody is rolling out.
    pub expired: bool,
}

/// The lease info reads as the rollout it shows (`info.holder`,
/// `info.as_in_progress()`), plus whether it expired.
impl std::ops::Deref for RolloutLeaseInfo {
    type Target = RolloutStatus;

    fn deref(&self) -> &RolloutStatus {
        &self.rollout
    }
}

impl RolloutLeaseInfo {
    /// Decodes a lease's holder and annotations; annotations this version
    /// does not understand read as unknown, never as an error.
    pub fn decode(
        holder: String,
        annotations: &BTreeMap<String, String>,
        expired: bool,
    ) -> RolloutLeaseInfo {
        let text = |key: &str| annotations.get(key).filter(|v| !v.is_empty()).cloned();
        let number = |key: &str| text(key).and_then(|v| v.parse().ok()).unwrap_or(0);
        RolloutLeaseInfo {
            expired,
            rollout: RolloutStatus {
                holder,
                kind: text(KIND).and_then(|k| kind_from_annotation(&k)),
                target: text(TARGET),
                node_index: number(NODE_INDEX),
                node_count: number(NODE_COUNT),
                current_node: text(CURRENT_NODE),
                phase: text(PHASE),
            },
        }
    }
}

fn kind_from_annotation(value: &str) -> Option<RolloutKind> {
    [RolloutKind::TalosUpgrade, RolloutKind::KubernetesUpgrade]
        .into_iter()
        .find(|k| k.as_str() == value)
}

/// Where the rollout is, written into the lease at each renewal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseProgress {
    /// The node being worked on, counted from 1.
    pub node_index: usize,
    pub current_node: Option<String>,
    /// A `StepPhase` word: "pulling", "rebooting", …
    pub phase: String,
}

impl LeaseProgress {
    /// Before the first node: node 1 (or 0 of 0), "starting".
    pub fn starting(node_count: usize) -> LeaseProgress {
        LeaseProgress {
            node_index: node_count.min(1),
            current_node: None,
            phase: "starting".into(),
        }
    }

    /// The annotations a renewal changes: a value sets one, `None` removes it.
    pub fn changes(&self) -> BTreeMap<String, Option<String>> {
        BTreeMap::from([
            (NODE_INDEX.to_string(), Some(self.node_index.to_string())),
            (PHASE.to_string(), Some(self.phase.clone())),
            (CURRENT_NODE.to_string(), self.current_node.clone()),
        ])
    }
}

/// The kind annotation of a lease taken to provision new nodes (not a `RolloutKind`: no
/// journal of steps goes with it).
pub const PROVISION_KIND: &str = "provision";

/// Every annotation of a lease taken to provision `vm_count` new `role` nodes.
pub fn provision_annotations(role: &str, vm_count: usize) -> BTreeMap<String, String> {
    change_annotations(
        PROVISION_KIND,
        &format!("{vm_count} new {role} node(s)"),
        vm_count,
        &LeaseProgress::starting(vm_count),
    )
}

/// Whether a lease's annotations say it was taken to provision nodes.
pub fn is_provision(annotations: &BTreeMap<String, String>) -> bool {
    annotations.get(KIND).map(String::as_str) == Some(PROVISION_KIND)
}

/// Every annotation of a rollout's lease.
pub fn lease_annotations(
    kind: RolloutKind,
    target: &str,
    node_count: usize,
    progress: &LeaseProgress,
) -> BTreeMap<String, String> {
    change_annotations(kind.as_str(), target, node_count, progress)
}

/// Every annotation of the lease of a change that is no upgrade rollout (a Cluster API scale,
/// `capi-scale`): its kind is its own word, which other consoles read as "rollout".
pub fn change_annotations(
    kind: &str,
    target: &str,
    node_count: usize,
    progress: &LeaseProgress,
) -> BTreeMap<String, String> {
    let mut map = BTreeMap::from([
        (KIND.to_string(), kind.to_string()),
        (TARGET.to_string(), target.to_string()),
        (NODE_COUNT.to_string(), node_count.to_string()),
    ]);
    for (key, value) in progress.changes() {
        if let Some(value) = value {
            map.insert(key, value);
        }
    }
    map
}

/// Where the rollout stands, for the lease's annotations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockProgress {
    /// Counted from 1, as shown to operators.
    pub node_index: usize,
    pub current_node: String,
    pub phase: String,
}

/// Why a renewal failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenewFailure {
    /// Another console has the lock now: the rollout stops before the next step.
    Lost(String),
    /// The renewal did not get through (API unreachable); tried again at the next change.
    Failed(String),
}

/// The "one rollout per cluster" lock (a Kubernetes Lease) as a run holds it: renewed with the
/// step in progress, given back when the run ends.
pub trait RolloutLock: Send + 'static {
    fn renew<'a>(
        &'a mut self,
        progress: &'a LockProgress,
    ) -> BoxFuture<'a, Result<(), RenewFailure>>;
    fn release(self: Box<Self>) -> BoxFuture<'static, Result<(), String>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotations() -> BTreeMap<String, String> {
        lease_annotations(
            RolloutKind::TalosUpgrade,
            "v1.12.0",
            5,
            &LeaseProgress {
                node_index: 3,
                current_node: Some("cp-3".into()),
                phase: "rebooting".into(),
            },
        )
    }

    #[test]
    fn annotations_decode_into_progress() {
        let info = RolloutLeaseInfo::decode("bob@jump2".into(), &annotations(), false);
        assert_eq!(info.holder, "bob@jump2");
        assert_eq!(info.kind, Some(RolloutKind::TalosUpgrade));
        assert_eq!(info.target.as_deref(), Some("v1.12.0"));
        assert_eq!((info.node_index, info.node_count), (3, 5));
        assert_eq!(info.current_node.as_deref(), Some("cp-3"));
        assert_eq!(info.phase.as_deref(), Some("rebooting"));
        assert!(!info.expired);
    }

    #[test]
    fn foreign_annotations_do_not_break_decoding() {
        let mut a = annotations();
        a.insert(KIND.into(), "mystery".into());
        a.insert(NODE_INDEX.into(), "three".into());
        let info = RolloutLeaseInfo::decode("bob@jump2".into(), &a, false);
        assert_eq!(info.kind, None);
        assert_eq!(info.node_index, 0);
        assert_eq!(info.node_count, 5);
    }

    #[test]
    fn a_provision_lease_says_so_and_reads_as_no_known_rollout_kind() {
        let a = provision_annotations("worker", 2);
        assert!(is_provision(&a));
        assert!(!is_provision(&annotations()));
        let info = RolloutLeaseInfo::decode("bob@jump2".into(), &a, false);
        assert_eq!(info.kind, None);
        assert_eq!(info.target.as_deref(), Some("2 new worker node(s)"));
        assert_eq!((info.node_index, info.node_count), (1, 2));
    }

    #[test]
    fn a_renewal_without_a_current_node_removes_it() {
        let changes = LeaseProgress::starting(5).changes();
        assert_eq!(changes.get(CURRENT_NODE), Some(&None));
        assert_eq!(changes.get(NODE_INDEX), Some(&Some("1".to_string())));
        assert_eq!(LeaseProgress::starting(0).node_index, 0);
    }
}
