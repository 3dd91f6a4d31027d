//! The in-place upgrade plan screen, one module for both kinds of rollout: `u` and `:upgrade
//! [VERSION]` plan the Talos OS upgrade, `U` and `:upgrade-k8s [VERSION]` the Kubernetes one, on
//! a cluster taloscope upgrades in place. It is the one plan screen (`views::plan`) over the
//! rollout plan of the kind ([`RolloutPlan`], made as `taloscope upgrade --plan` and
//! `upgrade-k8s --plan` make it), opened here and made again on a new target. What a kind adds
//! is said once per kind, in one file each ([`PlanKind`]: its plan, its own keys and news, its
//! pane, in `talos` and `kubernetes`): the Talos releases learned at run time and the
//! removed-API count arrive as its news. The plan every kind has in `rollout`, the keys in
//! `keys`, the drawing in `view`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::actions::ActionRun;
use crate::app::binding::Binding;
use crate::app::message::Message;
use crate::app::plan_screen::PlanHolder;
use crate::app::screen::Screen;
use crate::app::screens::{Opening, ScreenName, ScreenNews, Shared, Step};
use crate::kube::removed_apis::RemovedApiCount;
use crate::tui::Look;
use crate::upgrade::TalosOs;
use crate::upgrade::kubernetes::{Kubernetes, RemovedItem};
use crate::views::form::cycled_in;
use crate::views::plan::{PlanOperation, PlanScreen, reread_guards, status_in_use};

mod keys;
pub mod kubernetes;
mod rollout;
pub mod talos;
mod view;

pub use keys::RolloutKey;
pub use rollout::{PlanKind, RolloutPlan, RolloutPlanScreen};

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

impl<K: PlanKind> PlanOperation for RolloutPlan<K> {
    const NAME: ScreenName = K::NAME;
    const TITLE: &'static str = K::TITLE;
    type Kept = K::Kept;
    type Key = RolloutKey<K::Key>;

    fn own_keys(_: &RolloutPlanModule<K>) -> &'static [Binding<Self::Key, RolloutPlanModule<K>>] {
        K::own_keys()
    }

    /// The plan `opening` names (its first word the target, if any) on the cluster in use,
    /// with its guards read and what it asks of the console.
    fn open(
        module: &mut RolloutPlanModule<K>,
        opening: &Opening,
        shared: &Shared,
    ) -> Result<Step, Message> {
        let status = status_in_use(shared)?;
        let named = opening.words.first().map(String::as_str);
        let releases = K::releases(&module.kept, &status.name);
        let mut plan =
            RolloutPlan::<K>::open_among(status, named, &releases).map_err(Message::warn)?;
        reread_guards(&mut plan, shared);
        let effects = K::asks(&mut plan);
        module.plan = Some(plan);
        Ok(Step::effects(effects))
    }

    /// A new target makes the plan again; the kind's own keys are its own.
    fn on_key(module: &mut RolloutPlanModule<K>, key: Self::Key, shared: &Shared) -> Step {
        let Some(plan) = module.plan.as_mut() else {
            return Step::close();
        };
        match key {
            RolloutKey::NextTarget | RolloutKey::PreviousTarget => {
                let forward = key == RolloutKey::NextTarget;
                if let Some(t) = cycled_in(&plan.targets, &plan.target, forward) {
                    plan.target = t.clone();
                }
                rebuilt(plan, shared)
            }
            RolloutKey::Own(key) => K::on_own_key(plan, key, shared),
        }
    }

    fn on_news(module: &mut RolloutPlanModule<K>, news: &ScreenNews, shared: &Shared) -> bool {
        K::on_news(module, news, shared)
    }

    fn on_input(module: &mut RolloutPlanModule<K>, text: &str, shared: &Shared) -> Step {
        (module.plan.as_mut()).map_or_else(Step::default, |plan| K::on_input(plan, text, shared))
    }

    fn list(&self) -> (usize, usize) {
        (self.step_index(), self.step_keys().len())
    }

    fn select(&mut self, at: usize) {
        self.step = self.step_keys().get(at).cloned();
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
        if let Some(plan) = module.plan.as_ref() {
            view::render::<K>(plan, shared.readonly, look, area, buf);
        }
    }
}

/// `plan` made again from live status (a new target or option), its guards read again and
/// what it asks of the console asked.
fn rebuilt<K: PlanKind>(plan: &mut RolloutPlanScreen<K>, shared: &Shared) -> Step {
    if let Some(live) = shared.fleet.cluster(&plan.cluster) {
        plan.rebuild(&live.status);
    }
    reread_guards(plan, shared);
    Step::effects(K::asks(plan))
}

#[cfg(test)]
mod kubernetes_tests;
#[cfg(test)]
mod talos_tests;
