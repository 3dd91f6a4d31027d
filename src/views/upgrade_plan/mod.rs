//! The in-place upgrade plan screen, one module for both kinds of rollout: `u` and `:upgrade
//! [VERSION]` plan the Talos OS upgrade, `U` and `:upgrade-k8s [VERSION]` the Kubernetes one, on
//! a cluster taloscope upgrades in place. It is the one plan screen (`views::plan`) over the
//! rollout plan of the kind ([`RolloutPlan`], made as `taloscope upgrade --plan` and
//! `upgrade-k8s --plan` make it). What a kind adds is said once per kind ([`RolloutScreen`]: its
//! plan in `talos` and `kubernetes`, its own keys and news in `update_talos` and
//! `update_kubernetes`, its pane in `talos_view` and `kubernetes_view`): the Talos releases
//! learned at run time and the removed-API count arrive as its news. The plan every kind has in
//! `rollout`, the keys in `keys`, the update step in `update`, the drawing in `view`.

use std::fmt::Debug;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::action::Effect;
use crate::app::actions::ActionRun;
use crate::app::binding::Binding;
use crate::app::message::Message;
use crate::app::plan_screen::PlanHolder;
use crate::app::screen::{Pane, Screen};
use crate::app::screens::{Opening, ScreenName, ScreenNews, Shared, Step};
use crate::kube::removed_apis::RemovedApiCount;
use crate::tui::Look;
use crate::upgrade::kubernetes::{Kubernetes, RemovedItem};
use crate::upgrade::{LearnedReleases, TalosOs};
use crate::views::plan::{PlanOperation, PlanScreen};

mod keys;
pub mod kubernetes;
mod kubernetes_view;
mod rollout;
pub mod talos;
mod talos_view;
mod update;
mod update_kubernetes;
mod update_talos;
mod view;

pub use keys::RolloutKey;
pub use rollout::{PlanKind, RolloutPlan, RolloutPlanScreen};
pub use view::PlanPane;

/// The Talos upgrade plan's name: the shell opens it with the target named, if any.
pub const TALOS_PLAN: ScreenName = "upgrade-plan";

/// The Kubernetes upgrade plan's name: the shell opens it with the target named, if any.
pub const KUBE_PLAN: ScreenName = "kube-plan";

/// The upgrade plan screen of kind `K`: the one plan screen over its rollout plan.
pub type RolloutPlanModule<K> = PlanScreen<RolloutPlan<K>>;

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

/// What one kind of rollout says of its plan screen: only what differs between kinds (its plan
/// is its [`PlanKind`], its pane its [`PlanPane`]).
pub trait RolloutScreen: PlanKind + PlanPane + Send + Sync + 'static {
    const NAME: ScreenName;
    const TITLE: &'static str;
    /// The pane the screen goes back to when it was opened from nowhere else.
    const HOME: Pane;
    /// The kind's own key intents.
    type Key: Debug + Copy + PartialEq + Eq + Send + Sync + 'static;
    /// What the screen keeps beyond its plan, across plans.
    type Kept: Debug + Clone + Default + Send + Sync;
    /// The kind's own keys (the target's first, then its options').
    fn own_keys() -> &'static [Binding<RolloutKey<Self::Key>, RolloutPlanModule<Self>>];
    /// The releases a plan of `cluster` is offered from.
    fn releases(kept: &Self::Kept, cluster: &str) -> LearnedReleases;
    /// What the plan asks of the console once it was made (again).
    fn asks(plan: &mut RolloutPlanScreen<Self>) -> Vec<Effect>;
    /// One of its own keys on the open plan.
    fn on_own_key(module: &mut RolloutPlanModule<Self>, key: Self::Key, shared: &Shared) -> Step;
    /// News from its IO task; whether it changed what the screen shows.
    fn on_news(module: &mut RolloutPlanModule<Self>, news: &ScreenNews, shared: &Shared) -> bool;
    /// Enter on the field one of its own keys asked for.
    fn on_input(_module: &mut RolloutPlanModule<Self>, _text: &str, _shared: &Shared) -> Step {
        Step::default()
    }
}

impl<K: RolloutScreen> PlanOperation for RolloutPlan<K> {
    const NAME: ScreenName = K::NAME;
    const TITLE: &'static str = K::TITLE;
    type Kept = K::Kept;
    type Key = RolloutKey<K::Key>;
    const TAB: Option<fn(&mut Self) -> &mut bool> = Some(|plan| &mut plan.on_guards);

    fn own_keys(_: &RolloutPlanModule<K>) -> &'static [Binding<Self::Key, RolloutPlanModule<K>>] {
        K::own_keys()
    }

    fn open(
        module: &mut RolloutPlanModule<K>,
        opening: &Opening,
        shared: &Shared,
    ) -> Result<Step, Message> {
        module.opened(opening, shared)
    }

    fn on_key(module: &mut RolloutPlanModule<K>, key: Self::Key, shared: &Shared) -> Step {
        module.on_intent(key, shared)
    }

    fn on_news(module: &mut RolloutPlanModule<K>, news: &ScreenNews, shared: &Shared) -> bool {
        K::on_news(module, news, shared)
    }

    fn on_input(module: &mut RolloutPlanModule<K>, text: &str, shared: &Shared) -> Step {
        K::on_input(module, text, shared)
    }

    fn list(&self) -> (usize, usize) {
        (self.step_index(), self.steps_len())
    }

    fn select(&mut self, at: usize) {
        self.step = self.steps().get(at).map(|s| K::step_key(at, s));
    }

    fn explain(&self) -> Option<(String, String)> {
        match &self.made {
            Ok(plan) => K::explain_step(plan, self.step_index()),
            Err(e) => Some(("no plan".to_string(), e.clone())),
        }
    }

    fn run(holder: &PlanHolder<Self>, _: &Shared) -> Result<ActionRun, String> {
        let plan = holder.made.clone()?;
        Ok(ActionRun::Upgrade(Box::new(K::planned(plan))))
    }

    fn home() -> Screen {
        Screen::Cluster(K::HOME)
    }

    fn draw(
        module: &RolloutPlanModule<K>,
        area: Rect,
        buf: &mut Buffer,
        shared: &Shared,
        look: &Look,
    ) {
        view::render::<K>(module.plan.as_ref(), shared.readonly, look, area, buf);
    }
}

#[cfg(test)]
mod kubernetes_tests;
#[cfg(test)]
mod talos_tests;
