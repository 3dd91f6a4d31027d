//! The CAPI-way upgrade plan screen: `u` / `U` on a cluster Cluster API owns open it instead of
//! the in-place plan. Its plan is the one generic plan piece (`PlanHolder`) over what the
//! console reads with `CapiAccess::read_plan` (as `taloscope upgrade` / `upgrade-k8s` do,
//! `console::read_plans`); its guards are `capi_read_guards`, its gate every plan's
//! (`app::plan_keys::gate_step`). Keys in `keys`, the update step in `update`, the drawing in
//! `view`.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::binding::{KeyLine, MOVE_KEYS, intent, key_lines};
use crate::app::message::Message;
use crate::app::plan_screen::{GuardReading, PlanHolder, PlanSubject};
use crate::app::screen::{Pane, Screen};
use crate::app::screens::{
    FleetChange, Opening, ScreenModule, ScreenName, ScreenNews, Shared, Step,
};
use crate::approval::{ApprovedAction, MutatingAction};
use crate::capi::{CapiOwner, ClusterTree};
use crate::fleet::ClusterStatus;
use crate::tui::Look;
use crate::upgrade::Guard;
use crate::upgrade::capi::{
    CapiProduct, CapiUpgradePlan, VmTemplates, capi_action, capi_read_guards,
};

mod keys;
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

/// The CAPI way's part of the one plan holder: the plan asked for, and what was read.
#[derive(Debug, Clone)]
pub struct CapiWay {
    pub request: CapiPlanRequest,
    /// `None` while the management cluster is read.
    pub read: Option<CapiPlanRead>,
    /// Whether the guards, rather than the phases, have the move keys and `?`.
    pub on_guards: bool,
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

    fn guards_focused(&self) -> bool {
        self.on_guards
    }
}

/// The CAPI-way upgrade plan screen: its plan while open, and the selected phase.
#[derive(Debug, Clone, Default)]
pub struct CapiUpgradeScreen {
    pub plan: Option<PlanHolder<CapiWay>>,
    pub phase: usize,
}

impl ScreenModule for CapiUpgradeScreen {
    fn name(&self) -> ScreenName {
        NAME
    }

    fn title(&self) -> &'static str {
        "CAPI-way upgrade plan (u, U on a CAPI-owned cluster)"
    }

    fn keys(&self) -> Vec<KeyLine> {
        let mut lines = key_lines(keys::KEYS, self);
        lines.extend(key_lines(MOVE_KEYS, &()));
        lines
    }

    fn binds(&self, event: &KeyEvent) -> bool {
        intent(keys::KEYS, event).is_some() || intent(MOVE_KEYS, event).is_some()
    }

    fn open(&mut self, _shared: &Shared) -> Result<Step, Message> {
        Err(Message::warn(
            "u or U on a cluster Cluster API owns opens its CAPI-way plan",
        ))
    }

    fn open_from(&mut self, opening: &Opening, shared: &Shared) -> Result<Step, Message> {
        self.opened(opening, shared)
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        if let Some(to) = intent(MOVE_KEYS, event) {
            return self.moved(*to, shared);
        }
        match intent(keys::KEYS, event) {
            Some(key) => self.on_intent(*key, shared),
            None => Step::default(),
        }
    }

    fn on_news(&mut self, news: &ScreenNews, shared: &Shared) -> bool {
        news.get::<CapiPlanRead>()
            .is_some_and(|read| self.planned(read, shared))
    }

    fn on_fleet_change(&mut self, change: &FleetChange, shared: &Shared) -> bool {
        crate::app::plan_keys::fleet_changed(self.plan.as_mut(), change, shared)
    }

    fn on_input(&mut self, text: &str, shared: &Shared) -> Step {
        crate::app::plan_keys::ack_input(self.plan.as_mut(), text, shared)
    }

    fn on_approved(&mut self, approved: &ApprovedAction, shared: &Shared) -> Option<Step> {
        self.approved(approved, shared)
    }

    fn of_cluster_in_use(&self) -> bool {
        true
    }

    fn home(&self) -> Screen {
        Screen::Cluster(Pane::Nodes)
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        view::draw(self, area, buf, shared, look);
    }
}

#[cfg(test)]
mod tests;
