//! The sim's own record of what clients did to it: every mutating call each node accepted, and
//! each node's upgrade window (from the accepted upgrade call to the node running again), so
//! tests assert from the sim's side (e.g. never two control planes upgrading at once); and the
//! files clients read (the boot id before and after a reboot); and every `Bootstrap` request a
//! node answered, whatever the answer (a second one must never be sent); and how many calls
//! of each method each node served, so tests count what a client costs the nodes.
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use super::scenario::NodeRole;

/// A mutating call a node accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MutatingCall {
    pub cluster: String,
    pub node: String,
    /// `MachineService.Upgrade`, `LifecycleService.Upgrade`, `ImageService.Pull`,
    /// `MachineService.Reboot`, `MachineService.EtcdForfeitLeadership`,
    /// `MachineService.ApplyConfiguration`.
    pub method: &'static str,
    pub at: Instant,
}

impl MutatingCall {
    /// One of the two calls that upgrade a node.
    pub fn is_upgrade(&self) -> bool {
        matches!(
            self.method,
            "MachineService.Upgrade" | "LifecycleService.Upgrade"
        )
    }
}

/// One node's upgrade, as the sim saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpgradeWindow {
    pub cluster: String,
    pub node: String,
    pub role: NodeRole,
    /// When the upgrade call was accepted.
    pub started_at: Instant,
    /// When the node was running and ready again; `None` while it is not (or never returns).
    pub ended_at: Option<Instant>,
}

impl UpgradeWindow {
    /// Whether two windows were open at the same time.
    pub fn overlaps(&self, other: &UpgradeWindow) -> bool {
        let ends_after = |w: &UpgradeWindow, t: Instant| w.ended_at.is_none_or(|end| end > t);
        ends_after(self, other.started_at) && ends_after(other, self.started_at)
    }
}

/// A file a client read through `MachineService.Read` (the boot id check reads one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRead {
    pub cluster: String,
    pub node: String,
    pub path: String,
    /// The boot the node was in when it answered.
    pub boot: u64,
    pub at: Instant,
}

/// A `MachineService.Bootstrap` request a node answered, with the answer's code (`Ok` when
/// it was accepted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootstrapRequest {
    pub cluster: String,
    pub node: String,
    pub answer: tonic::Code,
    pub at: Instant,
}

/// A method one node served, as a key of the count of its calls.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServedCall {
    pub cluster: String,
    pub node: String,
    /// The gRPC path, e.g. `/machine.MachineService/SystemStat`.
    pub method: String,
}

#[derive(Default)]
struct RecordInner {
    calls: Vec<MutatingCall>,
    windows: Vec<UpgradeWindow>,
    reads: Vec<FileRead>,
    bootstraps: Vec<BootstrapRequest>,
    served: HashMap<ServedCall, u64>,
}

/// Shared by every node's handlers.
#[derive(Default)]
pub(crate) struct SimRecord {
    inner: Mutex<RecordInner>,
}

impl SimRecord {
    fn lock(&self) -> std::sync::MutexGuard<'_, RecordInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn call(&self, cluster: &str, node: &str, method: &'static str) {
        self.lock().calls.push(MutatingCall {
            cluster: cluster.to_string(),
            node: node.to_string(),
            method,
            at: Instant::now(),
        });
    }

    /// An upgrade call was accepted: the node's window opens (unless one is open already).
    pub(crate) fn upgrade_started(&self, cluster: &str, node: &str, role: NodeRole) {
        let mut inner = self.lock();
        let open = inner
            .windows
            .iter()
            .any(|w| w.cluster == cluster && w.node == node && w.ended_at.is_none());
        if !open {
            inner.windows.push(UpgradeWindow {
                cluster: cluster.to_string(),
                node: node.to_string(),
                role,
                started_at: Instant::now(),
                ended_at: None,
            });
        }
    }

    /// The node is running and ready again (or its upgrade failed): its open window closes.
    pub(crate) fn upgrade_ended(&self, cluster: &str, node: &str) {
        let mut inner = self.lock();
        let now = Instant::now();
        for w in inner
            .windows
            .iter_mut()
            .filter(|w| w.cluster == cluster && w.node == node && w.ended_at.is_none())
        {
            w.ended_at = Some(now);
        }
    }

    pub(crate) fn file_read(&self, cluster: &str, node: &str, path: &str, boot: u64) {
        self.lock().reads.push(FileRead {
            cluster: cluster.to_string(),
            node: node.to_string(),
            path: path.to_string(),
            boot,
            at: Instant::now(),
        });
    }

    pub(crate) fn bootstrap_answered(&self, cluster: &str, node: &str, answer: tonic::Code) {
        self.lock().bootstraps.push(BootstrapRequest {
            cluster: cluster.to_string(),
            node: node.to_string(),
            answer,
            at: Instant::now(),
        });
    }

    /// A node is about to answer a call of `method` (routed to it directly or through
    /// another node's apid).
    pub(crate) fn served(&self, cluster: &str, node: &str, method: &str) {
        let key = ServedCall {
            cluster: cluster.to_string(),
            node: node.to_string(),
            method: method.to_string(),
        };
        *self.lock().served.entry(key).or_default() += 1;
    }

    pub(crate) fn served_calls(&self) -> HashMap<ServedCall, u64> {
        self.lock().served.clone()
    }

    pub(crate) fn bootstrap_requests(&self) -> Vec<BootstrapRequest> {
        self.lock().bootstraps.clone()
    }

    pub(crate) fn reads(&self) -> Vec<FileRead> {
        self.lock().reads.clone()
    }

    pub(crate) fn calls(&self) -> Vec<MutatingCall> {
        self.lock().calls.clone()
    }

    pub(crate) fn windows(&self) -> Vec<UpgradeWindow> {
        self.lock().windows.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn window(start: Instant, end: Option<Instant>) -> UpgradeWindow {
        UpgradeWindow {
            cluster: "c".into(),
            node: "n".into(),
            role: NodeRole::ControlPlane,
            started_at: start,
            ended_at: end,
        }
    }

    #[test]
    fn windows_overlap_only_when_open_together() {
        let t0 = Instant::now();
        let t1 = t0 + Duration::from_secs(1);
        let t2 = t0 + Duration::from_secs(2);
        let t3 = t0 + Duration::from_secs(3);
        assert!(!window(t0, Some(t1)).overlaps(&window(t2, Some(t3))));
        assert!(window(t0, Some(t2)).overlaps(&window(t1, Some(t3))));
        assert!(window(t0, None).overlaps(&window(t2, Some(t3))));
        assert!(!window(t2, None).overlaps(&window(t0, Some(t1))));
    }

    #[test]
    fn a_second_upgrade_call_does_not_open_a_second_window() {
        let r = SimRecord::default();
        r.upgrade_started("c", "cp-1", NodeRole::ControlPlane);
        r.upgrade_started("c", "cp-1", NodeRole::ControlPlane);
        assert_eq!(r.windows().len(), 1);
        r.upgrade_ended("c", "cp-1");
        assert!(r.windows()[0].ended_at.is_some());
        r.upgrade_started("c", "cp-1", NodeRole::ControlPlane);
        assert_eq!(r.windows().len(), 2);
    }

    #[test]
    fn served_calls_are_counted_per_node_and_method() {
        let r = SimRecord::default();
        let stat = "/machine.MachineService/SystemStat";
        r.served("c", "w-1", stat);
        r.served("c", "w-1", stat);
        r.served("c", "w-2", "/machine.MachineService/Memory");
        let served = r.served_calls();
        let count = |node: &str, method: &str| {
            let key = ServedCall {
                cluster: "c".into(),
                node: node.into(),
                method: method.into(),
            };
            served.get(&key).copied().unwrap_or(0)
        };
        assert_eq!(count("w-1", stat), 2);
        assert_eq!(count("w-2", stat), 0);
        assert_eq!(count("w-2", "/machine.MachineService/Memory"), 1);
    }
}
