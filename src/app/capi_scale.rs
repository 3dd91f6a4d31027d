//! Scaling the CAPI way from the `:capi` screen, as the shell knows it: the object `s` scales
//! (the selected MachineDeployment, else the TalosControlPlane), handed to the cluster plan
//! screen (`views::cluster_plan`; `update_capi` hands it), and what the one runner runs for
//! an approved scale.
use crate::capi::MachineRole;
use crate::capi_scale::{ScalePlan, ScaleRequest};

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

/// What the event loop runs for an approved scale: the plan confirmed and the
/// acknowledgements typed (the runner checks the guards again with them).
#[derive(Debug, Clone)]
pub struct CapiScaleRun {
    pub plan: ScalePlan,
    pub acks: Vec<String>,
}
