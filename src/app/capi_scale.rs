//! Scaling the CAPI way from the `:capi` screen, its state: the object `s` scales (the
//! selected MachineDeployment, else the TalosControlPlane) while its new replica count is
//! typed, the plan `prepare_scale` read for the action screen, and the running scale's tally.
use crate::capi::MachineRole;
use crate::capi_scale::{PreparedScale, ScalePlan, ScaleRequest};
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

/// The scale state of the console.
#[derive(Debug, Clone, Default)]
pub struct CapiScaleState {
    /// The object whose replica count is being typed.
    pub asking: Option<ScaleTarget>,
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
