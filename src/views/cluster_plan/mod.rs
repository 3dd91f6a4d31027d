//! The plan of an operation on a whole cluster that the console reads as the command does, on
//! the one plan holder: its deletion (`D` on the fleet or a cluster, read with `prepare_delete`
//! as `taloscope delete` does), its CAPI scale (`s` on `:capi`: the new replica count typed in a
//! popup, then read with `prepare_scale` as `taloscope scale` does) and its CAPI-way upgrade
//! (`u` / `U` on a cluster Cluster API owns, instead of the in-place plan: read with
//! `read_capi_plan` as `taloscope upgrade` / `upgrade-k8s` do; its phases a list beside the
//! guards, `?` on a phase what `upgrade::explain` says of it), on the one plan screen
//! (`views::plan`). The plan kinds here, the replica count's keys and the pure update step in
//! `update`, the upgrade's request in `upgrade`, the drawing in `view` and `replicas`; the
//! console reads the plans (`console::read_plans`) and runs the approved one on its one runner.
use std::collections::BTreeMap;

use crate::app::actions::{ActionRun, delete_headline};
use crate::app::plan_screen::{GuardReading, PlanHolder, PlanSubject};
use crate::app::screens::ScreenName;
use crate::approval::MutatingAction;
use crate::capi::ClusterTree;
use crate::capi_scale::{PreparedScale, ScaleRequest, ScaleTarget};
use crate::cluster_lifecycle::{DeletePlan, delete_guards};
use crate::fleet::ClusterStatus;
use crate::guards::Guard;
use crate::upgrade::LearnedReleases;
use crate::upgrade::capi::{CapiUpgradePlan, VmTemplates, capi_action, capi_read_guards};
use crate::views::plan::PlanScreen;

mod replicas;
mod update;
mod upgrade;
mod view;

pub use upgrade::CapiPlanRequest;

/// The screen module's name: its news and tasks are addressed to it.
pub const NAME: ScreenName = "cluster-plan";

/// The most digits the replica count takes (the bounds guard refuses above 100 anyway).
const MAX_DIGITS: usize = 3;

/// What the operator asked to plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    Delete,
    /// The object scaled, and the replica count typed.
    Scale {
        target: ScaleTarget,
        request: ScaleRequest,
    },
    /// The CAPI-way upgrade to the target asked.
    Upgrade(CapiPlanRequest),
}

/// A plan as the console read it, by kind: only what differs between a delete and a scale.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant, reason = "one plan on screen at a time")]
pub enum Planned {
    /// The delete plan, and what could not be read (the Lease), shown above the guards.
    Delete(DeletePlan, Vec<String>),
    Scale(PreparedScale),
    /// The CAPI-way upgrade plan, and what its guards look at: the tree and the workload
    /// cluster's status (or why not), the provider's VM templates for a Talos upgrade.
    Upgrade(
        CapiUpgradePlan,
        Result<(ClusterTree, ClusterStatus), String>,
        VmTemplates,
    ),
}

impl Planned {
    /// The guards the headless command evaluates over what it read: `delete_guards`, those
    /// `prepare_scale` evaluated (the fleet's own status is not what the scale reads: the
    /// talosconfig Secret's endpoints are), or `capi_read_guards` with the rollout another
    /// console holds as `reading` sees it now.
    fn guards(&self, reading: &GuardReading<'_>) -> Vec<Guard> {
        match self {
            Planned::Delete(plan, _) => delete_guards(plan),
            Planned::Scale(prepared) => prepared.guards.clone(),
            Planned::Upgrade(plan, facts, vm_templates) => {
                let read = facts.as_ref().map(|(t, s)| (t, s)).map_err(String::as_str);
                let other = reading.other_rollout();
                capi_read_guards(plan, read, other.as_ref(), vm_templates)
            }
        }
    }

    fn action(&self) -> MutatingAction {
        match self {
            Planned::Delete(plan, _) => plan.action(),
            Planned::Scale(prepared) => prepared.plan.action(),
            Planned::Upgrade(plan, ..) => capi_action(plan),
        }
    }

    /// What the one runner runs for it.
    fn run(&self) -> ActionRun {
        match self {
            Planned::Delete(plan, _) => ActionRun::Delete(plan.clone()),
            Planned::Scale(prepared) => ActionRun::CapiScale(Box::new(prepared.plan.clone())),
            Planned::Upgrade(plan, ..) => ActionRun::CapiUpgrade(Box::new(plan.clone())),
        }
    }
}

/// The screen's plan: what was asked, the plan read (`None` until it came, why not when it
/// could not be read), and an upgrade's selected phase.
#[derive(Debug, Clone)]
pub struct ClusterPlan {
    pub asked: Asked,
    pub read: Option<Result<Planned, String>>,
    pub phase: usize,
}

/// The screen's plan on the one plan holder.
pub type ClusterPlanHolder = PlanHolder<ClusterPlan>;

impl ClusterPlan {
    fn planned(&self) -> Option<&Planned> {
        self.read.as_ref()?.as_ref().ok()
    }

    /// The CAPI-way upgrade plan read, if that is what it is.
    pub fn upgrade(&self) -> Option<&CapiUpgradePlan> {
        match self.planned()? {
            Planned::Upgrade(plan, ..) => Some(plan),
            _ => None,
        }
    }

    /// The screen's title: the action in the operator's words.
    pub fn title(&self, cluster: &str) -> String {
        match (&self.asked, self.approval(cluster)) {
            (Asked::Delete, Some(action)) => delete_headline(&action),
            (Asked::Delete, None) => format!("delete cluster {cluster}"),
            (Asked::Scale { .. }, Some(action)) => format!("{} in {cluster}", action.describe()),
            (Asked::Scale { target, request }, None) => format!(
                "scale {} to {} replicas (Cluster API) in {cluster}",
                target.object, request.replicas
            ),
            (Asked::Upgrade(request), _) => format!(
                "upgrade {cluster} the Cluster API way through {}",
                request.owner
            ),
        }
    }
}

impl PlanSubject for ClusterPlan {
    fn unready(&self) -> Option<String> {
        match (&self.read, &self.asked) {
            (Some(Ok(_)), _) => None,
            (Some(Err(why)), _) => Some(why.clone()),
            (None, Asked::Delete) => Some(
                "reading the cluster's create journal, provider and rollout Lease first".into(),
            ),
            (None, Asked::Scale { .. }) => {
                Some("reading the Cluster API tree and the workload cluster first".into())
            }
            (None, Asked::Upgrade(_)) => Some("the plan is still being read".into()),
        }
    }

    fn evaluate(&mut self, _cluster: &str, reading: &GuardReading<'_>, _: &[String]) -> Vec<Guard> {
        (self.planned()).map_or_else(Vec::new, |planned| planned.guards(reading))
    }

    fn approval(&self, _: &str) -> Option<MutatingAction> {
        self.planned().map(Planned::action)
    }

    /// An upgrade's phases are a list beside its guards (Tab switches); a delete or a scale
    /// has its guards alone.
    fn has_list(&self) -> bool {
        matches!(self.asked, Asked::Upgrade(_))
    }
}

/// What the screen has the console read: the plan `asked` of `cluster`.
#[derive(Debug, Clone)]
pub struct ClusterPlanTask {
    pub cluster: String,
    pub asked: Asked,
}

/// What the console read for the screen: the task it answers, and the plan read or why not.
#[derive(Debug, Clone)]
pub struct ClusterPlanNews {
    pub task: ClusterPlanTask,
    pub read: Result<Planned, String>,
}

/// The screen: the one plan screen over the cluster plan, with what it keeps beside its plan.
pub type ClusterPlanScreen = PlanScreen<ClusterPlan>;

/// What the cluster plan screen keeps beside its plan.
#[derive(Debug, Clone, Default)]
pub struct ClusterPlanKept {
    /// The replica count being typed for a scale before its plan: the object it is for, and
    /// the digits typed so far.
    pub scale: Option<(ScaleTarget, String)>,
    /// The Talos releases learned for each cluster, which a CAPI-way upgrade's target is
    /// chosen among.
    pub releases: BTreeMap<String, LearnedReleases>,
}

#[cfg(test)]
mod delete_tests;
#[cfg(test)]
mod scale_tests;
#[cfg(test)]
mod upgrade_tests;
