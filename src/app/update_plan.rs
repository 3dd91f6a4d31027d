//! Which plan `u` / `U` open (the in-place plan, the CAPI way's on a cluster Cluster API owns,
//! or the progress of a rollout that has not ended), and the update step of a rollout plan
//! screen on the console's state, parameterised by the rollout's kind: re-evaluate its guards
//! on every status change, move through the steps and the guards, cycle the target, explain;
//! the acknowledgement and Start go through the plan screens' one gate. The kind's own keys go
//! to [`PlanKeys::on_key`]. Pure.
use super::action::{Action, Effect, not_run};
use super::actions::ActionRun;
use super::message::Message;
use super::plan_keys::{cycled, moved, not_approved, other_focus, plan_key, read_guards};
use super::plan_screen::{GuardedPlan, PlanFocus, RolloutPlanScreen};
use super::screen::{Pane, Screen};
use super::state::{AppState, PlanSlot};
use super::update_upgrade::{unfinished_rollout_shown, usable_cluster};
use crate::approval::ApprovedAction;
use crate::upgrade::capi::{CapiProduct, product_name};
use crate::upgrade::{InPlaceUpgrade, LearnedReleases};

/// The CAPI-way upgrade plan screen's name (`views::capi_upgrade`): opened with the product's
/// word and the target named, if any.
const CAPI_UPGRADE: &str = "capi-upgrade";

/// The Kubernetes upgrade plan screen's name (`views::kube_plan`): opened with the target
/// named, if any.
const KUBE_PLAN: &str = "kube-plan";

/// A kind of rollout's own part of its plan screen's update step.
pub trait PlanKeys: PlanSlot {
    /// The screen its plan is shown on, and the pane `Esc` goes back to.
    const SCREEN: Screen;
    const BACK: Pane;
    /// "upgrade", as the progress log names a start.
    const WHAT: &'static str;
    /// The kind's own keys; `None` when the key is not one of them.
    fn on_key(state: &mut AppState, action: &Action) -> Option<Vec<Effect>>;
    /// Asked of the event loop after the plan was made again (the removed-API count).
    fn after_rebuild(state: &mut AppState) -> Vec<Effect>;
}

/// Where `u` / `U`, `:upgrade` / `:upgrade-k8s` lead before any in-place plan opens: the
/// progress screen while this console's rollout of the cluster has not ended, the CAPI-way
/// plan on a cluster Cluster API owns, or a message; `Ok` with the cluster to plan in place.
fn in_place_cluster(
    state: &mut AppState,
    upgrade: InPlaceUpgrade,
    target: &Option<String>,
) -> Result<String, Vec<Effect>> {
    let cluster = usable_cluster(state).ok_or_else(Vec::new)?;
    if unfinished_rollout_shown(state, &cluster) {
        return Err(Vec::new());
    }
    if !state.fleet.cluster(&cluster).is_some_and(|l| l.has_data()) {
        state.message = Some(Message::warn(format!(
            "no status for {cluster} yet: wait for the first poll (r refreshes)"
        )));
        return Err(Vec::new());
    }
    // Cluster API owns it: the CAPI way, never in place.
    if state.fleet.capi.owner(&cluster).is_some() {
        let product = product_name(CapiProduct::of(upgrade)).to_string();
        let words = std::iter::once(product).chain(target.clone()).collect();
        return Err(super::shell::open_with(state, CAPI_UPGRADE, words));
    }
    Ok(cluster)
}

/// `U`, `:upgrade-k8s [VERSION]`: the Kubernetes plan screen, or where
/// [`in_place_cluster`] leads.
pub fn open_kube_upgrade(state: &mut AppState, target: Option<String>) -> Vec<Effect> {
    if let Err(effects) = in_place_cluster(state, InPlaceUpgrade::Kubernetes, &target) {
        return effects;
    }
    state.message = None;
    super::shell::open_with(state, KUBE_PLAN, target.into_iter().collect())
}

/// `u`, `:upgrade`: the plan, or where [`in_place_cluster`] leads.
pub fn open_plan<K: PlanKeys>(state: &mut AppState, target: Option<String>) -> Vec<Effect> {
    let cluster = match in_place_cluster(state, K::IN_PLACE, &target) {
        Ok(cluster) => cluster,
        Err(effects) => return effects,
    };
    let Some(live) = state.fleet.cluster(&cluster) else {
        return Vec::new();
    };
    let learned = state.releases.get(&cluster).cloned();
    let learned = learned.unwrap_or_else(|| LearnedReleases::built_in("not learned yet"));
    match RolloutPlanScreen::<K>::open_among(&live.status, target.as_deref(), &learned) {
        Ok(mut plan) => {
            plan.read_guards(&super::plan_keys::guard_reading(state, &plan.cluster));
            *K::slot_mut(state) = Some(plan);
            state.screen = K::SCREEN;
            state.message = None;
            K::after_rebuild(state)
        }
        Err(e) => {
            state.message = Some(Message::warn(e));
            Vec::new()
        }
    }
}

/// Makes the open plan again from live status (a new target or option) and re-evaluates it.
pub fn rebuild<K: PlanKeys>(state: &mut AppState) -> Vec<Effect> {
    let Some(cluster) = K::slot(state).map(|p| p.cluster.clone()) else {
        return Vec::new();
    };
    if let Some(mut plan) = K::slot_mut(state).take() {
        if let Some(live) = state.fleet.cluster(&cluster) {
            plan.rebuild(&live.status);
        }
        *K::slot_mut(state) = Some(plan);
    }
    read_guards(state, Some(&cluster));
    K::after_rebuild(state)
}

/// Keys on a plan screen.
pub fn on_plan<K: PlanKeys>(state: &mut AppState, action: Action) -> Vec<Effect> {
    let page = state.page();
    let Some(plan) = K::slot_mut(state).as_mut() else {
        state.screen = Screen::Cluster(K::BACK);
        return Vec::new();
    };
    match action {
        Action::MoveUp
        | Action::MoveDown
        | Action::MoveFirst
        | Action::MoveLast
        | Action::PageUp
        | Action::PageDown
            if plan.focus == PlanFocus::Nodes =>
        {
            if let Some(to) = moved(plan.steps_len(), plan.step_index(), &action, page) {
                plan.step = plan.steps().get(to).map(|s| K::step_key(to, s));
            }
        }
        Action::NextPane => plan.focus = other_focus(plan.focus),
        Action::NextTarget | Action::PreviousTarget => {
            let forward = matches!(action, Action::NextTarget);
            if let Some(t) = cycled(&plan.targets, &plan.target, forward) {
                plan.target = t.clone();
            }
            return rebuild::<K>(state);
        }
        Action::Explain if plan.focus == PlanFocus::Nodes => explain_step::<K>(state),
        Action::Back => {
            *K::slot_mut(state) = None;
            state.screen = Screen::Cluster(K::BACK);
        }
        other => {
            return plan_key(state, &other)
                .or_else(|| K::on_key(state, &other))
                .unwrap_or_default();
        }
    }
    Vec::new()
}

/// `?` on a step: its title and what happens to it (why there is no plan, without one).
fn explain_step<K: PlanKeys>(state: &mut AppState) {
    let Some(plan) = K::slot(state) else {
        return;
    };
    let step = match &plan.plan {
        Ok(p) => K::explain_step(p, plan.step_index()),
        Err(e) => Some(("no plan".to_string(), e.clone())),
    };
    super::plan_keys::explain_step(state, step);
}

/// The dispatcher approved the plan on screen: start it if it still matches and no guard
/// blocks now.
pub fn start_approved<K: PlanKeys>(
    state: &mut AppState,
    approved: ApprovedAction,
    cluster: String,
    target: String,
) -> Vec<Effect> {
    read_guards(state, Some(&cluster));
    if let Some(refused) = not_approved(state, K::SCREEN, &approved) {
        return refused;
    }
    let Some(Ok(plan)) = K::slot(state).map(|screen| screen.plan.clone()) else {
        return not_run(&approved, "there is no plan".to_string());
    };
    let acks = K::slot(state)
        .map(|s| s.guards.acks.clone())
        .unwrap_or_default();
    let starting = format!("starting the {} of {cluster} to {target}", K::WHAT);
    // Says what happens now, in place of the plan's "acknowledged; s starts".
    state.message = Some(Message::info(starting));
    let run = ActionRun::Upgrade(Box::new(K::planned(plan)));
    super::update_progress::start(state, &approved, &run, &approved.action().describe());
    *K::slot_mut(state) = None;
    state.actions.back = Some(Screen::Cluster(K::BACK));
    state.current = Some(cluster);
    state.screen = Screen::Action;
    vec![Effect::RunAction {
        approved,
        run: Box::new(run),
        acks,
    }]
}
