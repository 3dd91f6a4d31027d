//! The CAPI-way upgrade's plan screen state: `u` / `U` on a cluster Cluster API owns open this
//! plan screen instead of the in-place one. The event loop reads the plan with
//! `CapiAccess::read_plan` (as `taloscope upgrade` / `upgrade-k8s` do); its keys and guards are
//! in `update_capi_upgrade`. Pure.
use super::plan_screen::{PlanFocus, PlanGuards};
use crate::capi::{CapiOwner, ClusterTree};
use crate::fleet::ClusterStatus;
use crate::upgrade::capi::{CapiProduct, CapiUpgradePlan, VmTemplates};

/// What the event loop reads for a CAPI-way plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapiPlanRequest {
    pub cluster: String,
    pub owner: CapiOwner,
    pub product: CapiProduct,
    /// The target as `spec.version` or a template names it ("v1.34.2"), and as the dispatcher
    /// and the journal do ("1.34.2" for Kubernetes).
    pub version: String,
    pub target: String,
}

/// What the event loop read: the plan, and what its guards look at (the tree and the workload
/// cluster's status, or why not; the provider's VM templates for a Talos upgrade).
#[derive(Debug, Clone)]
pub struct CapiPlanRead {
    pub request: CapiPlanRequest,
    pub plan: Result<CapiUpgradePlan, String>,
    pub facts: Result<(ClusterTree, ClusterStatus), String>,
    pub vm_templates: VmTemplates,
}

/// The plan screen of one CAPI-way upgrade.
#[derive(Debug, Clone)]
pub struct CapiUpgradeScreen {
    pub request: CapiPlanRequest,
    /// `None` while the management cluster is read.
    pub read: Option<CapiPlanRead>,
    pub guards: PlanGuards,
    pub focus: PlanFocus,
    /// The selected phase.
    pub phase: usize,
}

impl CapiUpgradeScreen {
    pub fn plan(&self) -> Option<&Result<CapiUpgradePlan, String>> {
        self.read.as_ref().map(|r| &r.plan)
    }

    /// Why Start is refused, or `None` when it is offered.
    pub fn start_refused(&self) -> Option<String> {
        match self.plan() {
            None => Some("the plan is still being read".to_string()),
            Some(Err(e)) => Some(e.clone()),
            Some(Ok(_)) => self.guards.refusal(&self.request.cluster),
        }
    }
}
