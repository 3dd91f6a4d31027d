//! The CAPI-way upgrade's plan screen state: `u` / `U` on a cluster Cluster API owns open this
//! plan screen instead of the in-place one. The event loop reads the plan with
//! `CapiAccess::read_plan` (as `taloscope upgrade` / `upgrade-k8s` do); its own keys are in
//! `update_capi_upgrade`, its gate is every plan's. Pure.
use super::plan_screen::{GuardReading, GuardedPlan, PlanFocus, PlanGuards};
use crate::approval::MutatingAction;
use crate::capi::{CapiOwner, ClusterTree};
use crate::fleet::ClusterStatus;
use crate::upgrade::capi::{
    CapiProduct, CapiUpgradePlan, VmTemplates, capi_action, capi_read_guards,
};

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
}

/// Through the plan screens' one gate (`plan_keys`): its guards are `capi_read_guards` over
/// what the event loop read and the rollout another console holds.
impl GuardedPlan for CapiUpgradeScreen {
    fn cluster(&self) -> &str {
        &self.request.cluster
    }

    fn guards(&self) -> &PlanGuards {
        &self.guards
    }

    fn guards_mut(&mut self) -> &mut PlanGuards {
        &mut self.guards
    }

    fn unready(&self) -> Option<String> {
        match self.plan() {
            None => Some("the plan is still being read".into()),
            Some(Err(e)) => Some(e.clone()),
            Some(Ok(_)) => None,
        }
    }

    fn read_guards(&mut self, reading: &GuardReading<'_>) {
        let Some(CapiPlanRead {
            plan: Ok(plan),
            facts,
            vm_templates,
            ..
        }) = &self.read
        else {
            self.guards.shown.clear();
            return;
        };
        let read = facts.as_ref().map(|(t, s)| (t, s)).map_err(String::as_str);
        let other = reading.other_rollout();
        let guards = capi_read_guards(plan, read, other.as_ref(), vm_templates);
        self.guards.set(guards);
    }

    fn approval(&self) -> Option<MutatingAction> {
        match self.plan()? {
            Ok(plan) => Some(capi_action(plan)),
            Err(_) => None,
        }
    }

    fn guards_focused(&self) -> bool {
        self.focus == PlanFocus::Guards
    }
}
