//! The plan of an operation on a whole cluster, on the one plan holder: its deletion (`D` on
//! the fleet or a cluster, read with `prepare_delete` as `taloscope delete` does) and its CAPI
//! scale (`s` on `:capi`: the new replica count typed in a popup, then read with
//! `prepare_scale` as `taloscope scale` does), on the one plan screen (`views::plan`). The plan
//! kinds here, the replica count's keys and the pure update step in `update`, the drawing in
//! `view` and `replicas`; the console reads the plans (`console::read_plans`) and runs the
//! approved one on its one runner.
use crate::app::actions::{ActionRun, delete_headline};
use crate::app::plan_screen::{GuardReading, PlanHolder, PlanSubject};
use crate::app::screens::ScreenName;
use crate::approval::MutatingAction;
use crate::capi_scale::{PreparedScale, ScaleRequest, ScaleTarget};
use crate::cluster_lifecycle::{DeletePlan, delete_guards};
use crate::guards::Guard;
use crate::views::plan::PlanScreen;

mod replicas;
mod update;
mod view;

/// The screen module's name: its news and tasks are addressed to it.
pub const NAME: ScreenName = "cluster-plan";

/// The most digits the replica count takes (the bounds guard refuses above 100 anyway).
const MAX_DIGITS: usize = 3;

/// What the operator asked to plan.
#[derive(Debug, Clone)]
pub enum Asked {
    Delete,
    /// The object scaled, and the replica count typed.
    Scale {
        target: ScaleTarget,
        request: ScaleRequest,
    },
}

/// A plan as the console read it, by kind: only what differs between a delete and a scale.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant, reason = "one plan on screen at a time")]
pub enum Planned {
    /// The delete plan, and what could not be read (the Lease), shown above the guards.
    Delete(DeletePlan, Vec<String>),
    Scale(PreparedScale),
}

impl Planned {
    /// The guards the headless command evaluates over what it read: `delete_guards`, or
    /// those `prepare_scale` evaluated (the fleet's own status is not what the scale reads:
    /// the talosconfig Secret's endpoints are).
    fn guards(&self) -> Vec<Guard> {
        match self {
            Planned::Delete(plan, _) => delete_guards(plan),
            Planned::Scale(prepared) => prepared.guards.clone(),
        }
    }

    fn action(&self) -> MutatingAction {
        match self {
            Planned::Delete(plan, _) => plan.action(),
            Planned::Scale(prepared) => prepared.plan.action(),
        }
    }

    /// What the one runner runs for it.
    fn run(&self) -> ActionRun {
        match self {
            Planned::Delete(plan, _) => ActionRun::Delete(plan.clone()),
            Planned::Scale(prepared) => ActionRun::CapiScale(Box::new(prepared.plan.clone())),
        }
    }
}

/// The screen's plan: what was asked, and the plan read (`None` until it came, why not when
/// it could not be read).
#[derive(Debug, Clone)]
pub struct ClusterPlan {
    pub asked: Asked,
    pub read: Option<Result<Planned, String>>,
}

/// The screen's plan on the one plan holder.
pub type ClusterPlanHolder = PlanHolder<ClusterPlan>;

impl ClusterPlan {
    fn planned(&self) -> Option<&Planned> {
        self.read.as_ref()?.as_ref().ok()
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
        }
    }

    fn evaluate(
        &mut self,
        _cluster: &str,
        _reading: &GuardReading<'_>,
        _: &[String],
    ) -> Vec<Guard> {
        self.planned().map(Planned::guards).unwrap_or_default()
    }

    fn approval(&self, _: &str) -> Option<MutatingAction> {
        self.planned().map(Planned::action)
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

/// The screen: the one plan screen over the cluster plan, the replica count being typed for a
/// scale before its plan (`kept`: the object a scale is for, and the digits typed so far).
pub type ClusterPlanScreen = PlanScreen<ClusterPlan>;

#[cfg(test)]
mod delete_tests;
#[cfg(test)]
mod scale_tests;
