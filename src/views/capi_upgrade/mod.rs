//! The CAPI-way upgrade plan screen: `u` / `U` on a cluster Cluster API owns open it instead of
//! the in-place plan. It is the one plan screen (`views::plan`) over what the console reads with
//! `read_capi_plan` (as `taloscope upgrade` / `upgrade-k8s` do, `console::read_plans`);
//! its guards are `capi_read_guards`, its gate every plan's; Tab switches between the phases and
//! the guards, `r` reads the plan again, `?` on a phase says what `upgrade::explain` says of it.
//! Its update step here, the request in `update`, the drawing in `view`.

use std::convert::Infallible;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::actions::ActionRun;
use crate::app::message::Message;
use crate::app::plan_screen::{GuardReading, PlanHolder, PlanSubject};
use crate::app::screens::{Opening, ScreenName, ScreenNews, Shared, Step};
use crate::approval::MutatingAction;
use crate::capi::{CapiOwner, ClusterTree};
use crate::fleet::ClusterStatus;
use crate::tui::Look;
use crate::upgrade::capi::{
    CapiProduct, CapiUpgradePlan, VmTemplates, capi_action, capi_read_guards,
};
use crate::upgrade::{Guard, explain};
use crate::views::plan::{PlanOperation, PlanScreen, reread_guards};

mod update;
mod view;

/// The screen module's name: the shell opens it with the product's word ("talos",
/// "kubernetes") and the target named, if any.
pub const NAME: ScreenName = "capi-upgrade";

/// What the console reads for a CAPI-way plan (a screen task of this screen).
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

/// What the console read (this screen's news): the plan, and what its guards look at (the
/// tree and the workload cluster's status, or why not; the provider's VM templates for a
/// Talos upgrade).
#[derive(Debug, Clone)]
pub struct CapiPlanRead {
    pub request: CapiPlanRequest,
    pub plan: Result<CapiUpgradePlan, String>,
    pub facts: Result<(ClusterTree, ClusterStatus), String>,
    pub vm_templates: VmTemplates,
}

/// The CAPI way's part of the one plan holder: the plan asked for, what was read, and the
/// selected phase.
#[derive(Debug, Clone)]
pub struct CapiWay {
    pub request: CapiPlanRequest,
    /// `None` while the management cluster is read.
    pub read: Option<CapiPlanRead>,
    pub phase: usize,
}

impl CapiWay {
    pub fn plan(&self) -> Option<&Result<CapiUpgradePlan, String>> {
        self.read.as_ref().map(|r| &r.plan)
    }
}

impl PlanSubject for CapiWay {
    fn unready(&self) -> Option<String> {
        match self.plan() {
            None => Some("the plan is still being read".into()),
            Some(Err(e)) => Some(e.clone()),
            Some(Ok(_)) => None,
        }
    }

    /// `capi_read_guards` over what was read and the rollout another console holds; none
    /// while nothing was read.
    fn evaluate(&mut self, _cluster: &str, reading: &GuardReading<'_>, _: &[String]) -> Vec<Guard> {
        let Some(CapiPlanRead {
            plan: Ok(plan),
            facts,
            vm_templates,
            ..
        }) = &self.read
        else {
            return Vec::new();
        };
        let read = facts.as_ref().map(|(t, s)| (t, s)).map_err(String::as_str);
        let other = reading.other_rollout();
        capi_read_guards(plan, read, other.as_ref(), vm_templates)
    }

    fn approval(&self, _: &str) -> Option<MutatingAction> {
        self.plan()?.as_ref().ok().map(capi_action)
    }

    const OWN_LIST: bool = true;
}

/// The CAPI-way upgrade plan screen: the one plan screen over the CAPI way.
pub type CapiUpgradeScreen = PlanScreen<CapiWay>;

impl PlanOperation for CapiWay {
    const NAME: ScreenName = NAME;
    const TITLE: &'static str = "CAPI-way upgrade plan (u, U on a CAPI-owned cluster)";
    type Kept = ();
    /// Its only key of its own is Tab between the phases and the guards, every list's.
    type Key = Infallible;

    /// `u` / `U` on a cluster Cluster API owns: the CAPI-way plan to the target the in-place
    /// plan would choose (the one named, else its default), asked of the console.
    fn open(
        screen: &mut CapiUpgradeScreen,
        opening: &Opening,
        shared: &Shared,
    ) -> Result<Step, Message> {
        let request = update::request_of(opening, shared)?;
        let way = CapiWay {
            request: request.clone(),
            read: None,
            phase: 0,
        };
        screen.plan = Some(PlanHolder::new(&request.cluster, way));
        Ok(Step::effects(vec![update::read_task(request)]))
    }

    /// The console read the plan: shown with its guards, when it is the plan on screen.
    fn on_news(screen: &mut CapiUpgradeScreen, news: &ScreenNews, shared: &Shared) -> bool {
        let (Some(plan), Some(read)) = (screen.plan.as_mut(), news.get::<CapiPlanRead>()) else {
            return false;
        };
        if plan.plan.request != read.request || plan.plan.read.is_some() {
            return false;
        }
        plan.plan.read = Some(read.clone());
        reread_guards(plan, shared);
        true
    }

    fn list(&self) -> (usize, usize) {
        let phases = self.plan().and_then(|p| p.as_ref().ok());
        (self.phase, phases.map_or(0, |p| p.phases.len()))
    }

    fn select(&mut self, at: usize) {
        self.phase = at;
    }

    fn explain(&self) -> Option<(String, String)> {
        match self.plan()? {
            Ok(plan) => {
                let phase = plan.phases.get(self.phase)?;
                Some((phase.label(), explain::capi_phase(plan, phase)))
            }
            Err(e) => Some(("no plan".to_string(), e.clone())),
        }
    }

    /// `r`: the plan read from the management cluster again.
    fn refresh(screen: &mut CapiUpgradeScreen, _: &Shared) -> Step {
        let Some(holder) = screen.plan.as_mut() else {
            return Step::default();
        };
        holder.plan.read = None;
        holder.guards.shown.clear();
        Step::effects(vec![update::read_task(holder.plan.request.clone())])
    }

    fn run(holder: &PlanHolder<CapiWay>, _: &Shared) -> Result<ActionRun, String> {
        let plan = holder.plan.plan().ok_or("the plan is still being read")?;
        Ok(ActionRun::CapiUpgrade(Box::new(plan.clone()?)))
    }

    fn draw(
        screen: &CapiUpgradeScreen,
        area: Rect,
        buf: &mut Buffer,
        shared: &Shared,
        look: &Look,
    ) {
        view::draw(screen, area, buf, shared, look);
    }
}

#[cfg(test)]
mod tests;
