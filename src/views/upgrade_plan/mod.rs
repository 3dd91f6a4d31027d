//! The Kubernetes upgrade plan screen: `U` and `:upgrade-k8s [VERSION]` on a cluster taloscope
//! upgrades in place. Its plan is the rollout plan of the Kubernetes kind
//! (`app::kube_plan::KubePlanScreen`, made by `KubernetesUpgradePlan::new` as
//! `taloscope upgrade-k8s --plan` makes it); the removed-API count is its IO task
//! (`console::run_upgrade_plan::count_removed`), its gate every plan's
//! (`app::plan_keys::gate_step`). Keys in `keys`, the update step in `update`, the drawing in
//! `view`.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::binding::{KeyLine, MOVE_KEYS, intent, key_lines};
use crate::app::kube_plan::KubePlanScreen;
use crate::app::message::Message;
use crate::app::screen::{Pane, Screen};
use crate::app::screens::{
    FleetChange, Opening, ScreenModule, ScreenName, ScreenNews, Shared, Step,
};
use crate::approval::ApprovedAction;
use crate::kube::removed_apis::RemovedApiCount;
use crate::tui::Look;
use crate::upgrade::kubernetes::RemovedItem;

mod keys;
mod update;
mod view;

/// The screen module's name: the shell opens it with the target named, if any.
pub const NAME: ScreenName = "kube-plan";

/// A removed-API count for one plan's (from, target), or why it failed (this screen's news;
/// its task is the `KubernetesUpgradePlan` to count for).
#[derive(Debug, Clone)]
pub struct RemovedApisCounted {
    pub cluster: String,
    pub from: String,
    pub target: String,
    pub result: Result<Vec<RemovedApiCount>, String>,
    /// The removed flags, feature gates and admission plugins in use, checked with the count.
    pub flags: Result<Vec<RemovedItem>, String>,
}

/// The Kubernetes upgrade plan screen: its plan while open.
#[derive(Debug, Clone, Default)]
pub struct KubePlanModule {
    pub plan: Option<KubePlanScreen>,
}

impl ScreenModule for KubePlanModule {
    fn name(&self) -> ScreenName {
        NAME
    }

    fn title(&self) -> &'static str {
        "Kubernetes upgrade plan (U, :upgrade-k8s)"
    }

    fn keys(&self) -> Vec<KeyLine> {
        let mut lines = key_lines(keys::KEYS, self);
        lines.extend(key_lines(MOVE_KEYS, &()));
        lines
    }

    fn binds(&self, event: &KeyEvent) -> bool {
        intent(keys::KEYS, event).is_some() || intent(MOVE_KEYS, event).is_some()
    }

    fn open(&mut self, shared: &Shared) -> Result<Step, Message> {
        let opening = Opening {
            from: Screen::Cluster(Pane::Versions),
            node: None,
            words: Vec::new(),
        };
        self.opened(&opening, shared)
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
        news.get::<RemovedApisCounted>()
            .is_some_and(|counted| self.counted(counted, shared))
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
        Screen::Cluster(Pane::Versions)
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        view::draw(self, area, buf, shared, look);
    }
}

#[cfg(test)]
mod tests;
