//! The in-place upgrade plan screen, one module for both kinds of rollout: `u` and `:upgrade
//! [VERSION]` plan the Talos OS upgrade, `U` and `:upgrade-k8s [VERSION]` the Kubernetes one, on
//! a cluster taloscope upgrades in place. Its plan is the rollout plan of the kind
//! (`app::plan_screen::RolloutPlanScreen` over the kinds in `talos` and `kubernetes`, made as
//! `taloscope upgrade --plan` and `upgrade-k8s --plan` make it); its gate every plan's
//! (`app::plan_keys::gate_step`). What a kind adds is said once per kind ([`RolloutScreen`]:
//! `update_talos`, `update_kubernetes`): the Talos releases learned at run time and the
//! removed-API count arrive as its news. Keys in `keys`, the update step in `update`, the
//! drawing in `talos_view` and `kubernetes_view`.

use std::fmt::Debug;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use crate::app::binding::{Binding, KeyLine, MOVE_KEYS, intent, key_lines};
use crate::app::message::Message;
use crate::app::plan_screen::RolloutPlanScreen;
use crate::app::screen::{Pane, Screen};
use crate::app::screens::{
    Ask, FleetChange, Opening, ScreenModule, ScreenName, ScreenNews, Shared, Step,
};
use crate::approval::ApprovedAction;
use crate::kube::removed_apis::RemovedApiCount;
use crate::tui::Look;
use crate::upgrade::kubernetes::{Kubernetes, RemovedItem};
use crate::upgrade::{LearnedReleases, TalosOs};
use crate::views::plan::{PlanPane, PlanView};

mod keys;
pub mod kubernetes;
mod kubernetes_view;
pub mod talos;
mod talos_view;
mod update;
mod update_kubernetes;
mod update_talos;

/// The Talos upgrade plan's name: the shell opens it with the target named, if any.
pub const TALOS_PLAN: ScreenName = "upgrade-plan";

/// The Kubernetes upgrade plan's name: the shell opens it with the target named, if any.
pub const KUBE_PLAN: ScreenName = "kube-plan";

/// The Talos upgrade plan screen.
pub type TalosPlanModule = RolloutPlanModule<TalosOs>;

/// The Kubernetes upgrade plan screen.
pub type KubePlanModule = RolloutPlanModule<Kubernetes>;

/// The Talos releases learned for a cluster (its mirrors, the registry, else the built-in
/// table), as `taloscope upgrade` learns them: the Talos plan's news.
#[derive(Debug, Clone)]
pub struct ReleasesLearned {
    pub cluster: String,
    pub learned: LearnedReleases,
}

/// A removed-API count for one plan's (from, target), or why it failed (the Kubernetes plan's
/// news; its task is the `KubernetesUpgradePlan` to count for).
#[derive(Debug, Clone)]
pub struct RemovedApisCounted {
    pub cluster: String,
    pub from: String,
    pub target: String,
    pub result: Result<Vec<RemovedApiCount>, String>,
    /// The removed flags, feature gates and admission plugins in use, checked with the count.
    pub flags: Result<Vec<RemovedItem>, String>,
}

/// What one kind of rollout says of its plan screen: only what differs between kinds.
pub trait RolloutScreen:
    PlanPane<Plan: Debug + PartialEq, Settings: Send + Sync> + Debug + Clone + Send + Sync + 'static
{
    const NAME: ScreenName;
    const TITLE: &'static str;
    /// The pane the screen goes back to when it was opened from nowhere else.
    const HOME: Pane;
    /// The kind's own key intents.
    type Key: Debug + Copy + Send + Sync + 'static;
    /// What the screen keeps beyond its plan, across plans.
    type Kept: Debug + Clone + Default + Send + Sync;
    /// The kind's own keys, between the target's and the gate's.
    fn own_keys() -> &'static [Binding<Self::Key, ()>];
    /// The releases a plan of `cluster` is offered from.
    fn releases(kept: &Self::Kept, cluster: &str) -> LearnedReleases;
    /// What the plan asks of the console once it was made (again).
    fn asks(plan: &mut RolloutPlanScreen<Self>) -> Vec<crate::app::action::Effect>;
    /// One of its own keys on the open plan.
    fn on_own_key(module: &mut RolloutPlanModule<Self>, key: Self::Key, shared: &Shared) -> Step;
    /// News from its IO task; whether it changed what the screen shows.
    fn on_news(module: &mut RolloutPlanModule<Self>, news: &ScreenNews, shared: &Shared) -> bool;
    /// Enter on the field one of its own keys asked for.
    fn on_input(_module: &mut RolloutPlanModule<Self>, _text: &str, _shared: &Shared) -> Step {
        Step::default()
    }
}

/// The upgrade plan screen of kind `K`: its plan while open, what the kind keeps, and whether
/// the input line open is a field of the kind's own (else the acknowledgement's).
#[derive(Debug, Clone)]
pub struct RolloutPlanModule<K: RolloutScreen> {
    pub plan: Option<RolloutPlanScreen<K>>,
    pub kept: K::Kept,
    own_field: bool,
}

impl<K: RolloutScreen> Default for RolloutPlanModule<K> {
    fn default() -> Self {
        RolloutPlanModule {
            plan: None,
            kept: K::Kept::default(),
            own_field: false,
        }
    }
}

impl<K: RolloutScreen> ScreenModule for RolloutPlanModule<K> {
    fn name(&self) -> ScreenName {
        K::NAME
    }

    fn title(&self) -> &'static str {
        K::TITLE
    }

    fn keys(&self) -> Vec<KeyLine> {
        let mut lines = key_lines(keys::TARGET, &());
        lines.extend(key_lines(K::own_keys(), &()));
        lines.extend(key_lines(keys::GATE, &()));
        lines.extend(key_lines(MOVE_KEYS, &()));
        lines
    }

    fn binds(&self, event: &KeyEvent) -> bool {
        intent(keys::TARGET, event).is_some()
            || intent(K::own_keys(), event).is_some()
            || intent(keys::GATE, event).is_some()
            || intent(MOVE_KEYS, event).is_some()
    }

    fn open(&mut self, shared: &Shared) -> Result<Step, Message> {
        let opening = Opening {
            from: Screen::Cluster(K::HOME),
            node: None,
            words: Vec::new(),
        };
        self.opened(&opening, shared)
    }

    fn open_from(&mut self, opening: &Opening, shared: &Shared) -> Result<Step, Message> {
        self.opened(opening, shared)
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        // A key reaches the screen only once the input line closed.
        self.own_field = false;
        if let Some(to) = intent(MOVE_KEYS, event) {
            return self.moved(*to, shared);
        }
        if let Some(key) = intent(K::own_keys(), event) {
            if self.plan.is_none() {
                return Step::close();
            }
            let step = K::on_own_key(self, *key, shared);
            self.own_field = matches!(step.ask, Some(Ask::Input { .. }));
            return step;
        }
        let key = intent(keys::TARGET, event).or_else(|| intent(keys::GATE, event));
        key.map_or_else(Step::default, |key| self.on_intent(*key, shared))
    }

    fn on_news(&mut self, news: &ScreenNews, shared: &Shared) -> bool {
        K::on_news(self, news, shared)
    }

    fn on_fleet_change(&mut self, change: &FleetChange, shared: &Shared) -> bool {
        crate::app::plan_keys::fleet_changed(self.plan.as_mut(), change, shared)
    }

    fn on_input(&mut self, text: &str, shared: &Shared) -> Step {
        if std::mem::take(&mut self.own_field) {
            return K::on_input(self, text, shared);
        }
        crate::app::plan_keys::ack_input(self.plan.as_mut(), text, shared)
    }

    fn on_approved(&mut self, approved: &ApprovedAction, shared: &Shared) -> Option<Step> {
        self.approved(approved, shared)
    }

    fn of_cluster_in_use(&self) -> bool {
        true
    }

    fn home(&self) -> Screen {
        Screen::Cluster(K::HOME)
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        let view = PlanView::<K>::new(self.plan.as_ref(), shared.readonly, look);
        (&view).render(area, buf);
    }
}

#[cfg(test)]
mod kubernetes_tests;
#[cfg(test)]
mod talos_tests;
