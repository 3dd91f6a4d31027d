//! Scaling the CAPI way from the `:capi` screen, its state: the object `s` scales (the
//! selected MachineDeployment, else the TalosControlPlane) while its new replica count is
//! typed, the plan `prepare_scale` read for the action screen, and the running scale's tally.
use crate::capi::MachineRole;
use crate::capi_scale::{MachineChange, PreparedScale, ScaleEvent, ScalePlan, ScaleRequest};
use crate::guards::Guard;

/// The most digits the replica count takes (the bounds guard refuses above 100 anyway).
pub const MAX_DIGITS: usize = 3;

/// What `s` scales: one object of the cluster in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleTarget {
    pub cluster: String,
    pub role: MachineRole,
    /// The MachineDeployment, for workers.
    pub deployment: Option<String>,
    /// "TalosControlPlane default/w-cp", as the plan names it.
    pub object: String,
    /// `spec.replicas` as the tree on screen shows it.
    pub replicas: u32,
    /// Why this object when the selected row is not it ("the selected row is a Machine").
    pub note: Option<String>,
}

impl ScaleTarget {
    pub fn request(&self, replicas: u32) -> ScaleRequest {
        ScaleRequest {
            role: self.role,
            deployment: self.deployment.clone(),
            replicas,
        }
    }
}

/// The action screen's plan of one scale: `None` until the event loop has read both sides
/// (`prepare_scale`, as `taloscope scale` does).
#[derive(Debug, Clone)]
pub struct CapiScalePlan {
    pub target: ScaleTarget,
    pub request: ScaleRequest,
    pub read: Option<Result<PreparedScale, String>>,
}

impl CapiScalePlan {
    pub fn prepared(&self) -> Option<&PreparedScale> {
        self.read.as_ref().and_then(|r| r.as_ref().ok())
    }
}

/// What the event loop reads for a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapiScaleAsk {
    pub cluster: String,
    pub request: ScaleRequest,
}

/// What the event loop runs for an approved scale: the plan confirmed and the
/// acknowledgements typed (the runner checks the guards again with them).
#[derive(Debug, Clone)]
pub struct CapiScaleRun {
    pub plan: ScalePlan,
    pub acks: Vec<String>,
}

/// The running (or last) scale's tally, from its runner's events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScaleProgress {
    pub cluster: String,
    /// The action's words, as the action progress names it.
    pub what: String,
    pub object: String,
    pub role: Option<MachineRole>,
    pub from: u32,
    pub to: u32,
    pub created: u32,
    pub got_node: u32,
    pub ready: u32,
    pub deleting: u32,
    pub deleted: u32,
    /// Polls that read etcd, and how many found it healthy (control planes).
    pub polls: u32,
    pub healthy_polls: u32,
    /// The last poll's etcd verdict.
    pub etcd: Option<(bool, String)>,
    pub waiting: Option<String>,
}

impl ScaleProgress {
    pub fn of(plan: &ScalePlan, what: String) -> ScaleProgress {
        ScaleProgress {
            cluster: plan.cluster.clone(),
            what,
            object: plan.object(),
            role: Some(plan.role),
            from: plan.from,
            to: plan.to,
            ..ScaleProgress::default()
        }
    }

    /// Folds one event in; the line for the progress log, when it earns one (an etcd poll
    /// only when its verdict changed).
    pub fn fold(&mut self, event: &ScaleEvent) -> Option<String> {
        match event {
            ScaleEvent::Machine(change) => {
                let count = match change {
                    MachineChange::Created { .. } => &mut self.created,
                    MachineChange::GotNode { .. } => &mut self.got_node,
                    MachineChange::Ready { .. } => &mut self.ready,
                    MachineChange::Deleting { .. } => &mut self.deleting,
                    MachineChange::Deleted { .. } => &mut self.deleted,
                };
                *count += 1;
            }
            ScaleEvent::Etcd {
                healthy, reason, ..
            } => {
                self.polls += 1;
                self.healthy_polls += u32::from(*healthy);
                let same = self.etcd.as_ref().is_some_and(|(_, r)| r == reason);
                self.etcd = Some((*healthy, reason.clone()));
                if same {
                    return None;
                }
            }
            ScaleEvent::Waiting { reason } => self.waiting = Some(reason.clone()),
            ScaleEvent::Note { .. } => {}
        }
        Some(event.line())
    }
}

/// The scale state of the console.
#[derive(Debug, Clone, Default)]
pub struct CapiScaleState {
    /// The object whose replica count is being typed.
    pub asking: Option<ScaleTarget>,
    /// The scale run here last (kept after it ends).
    pub progress: Option<ScaleProgress>,
}

/// The guards of a read plan: those `prepare_scale` evaluated over what it read (the fleet's
/// own status is not what the scale reads: the talosconfig Secret's endpoints are).
pub fn guards_of(plan: &CapiScalePlan) -> Vec<Guard> {
    plan.prepared()
        .map(|p| p.guards.clone())
        .unwrap_or_default()
}

/// Why Start is refused before the guards are looked at.
pub fn unready(plan: &CapiScalePlan) -> Option<String> {
    match &plan.read {
        None => Some("reading the Cluster API tree and the workload cluster first".into()),
        Some(Err(e)) => Some(e.clone()),
        Some(Ok(_)) => None,
    }
}
