//! The update step for the Kubernetes plan screen's own part: open it
//! (`:upgrade-k8s`, `U`), pre-pull, and the removed-API count asked of the
//! event loop and folded back. Everything else a plan screen does is the one
//! update step in update_plan; the rollout's progress is update_progress's. Pure.
use super::action::{Action, Effect, RemovedApisCounted};
use super::state::AppState;
use super::update_plan::{PlanKeys, open_plan, rebuild};
use crate::upgrade::kubernetes::Kubernetes;

/// `U`, `:upgrade-k8s [VERSION]`: the Kubernetes plan, or the progress screen
/// while this console's rollout of the cluster has not ended.
pub fn open_kube_upgrade(state: &mut AppState, target: Option<String>) -> Vec<Effect> {
    open_plan::<Kubernetes>(state, target)
}

/// Asks the event loop to count removed-API objects when the plan on screen
/// has no count yet (once per plan).
pub(super) fn count_if_needed(state: &mut AppState) -> Vec<Effect> {
    let Some(screen) = state.kube_upgrade.as_mut() else {
        return Vec::new();
    };
    let Some(plan) = screen.needs_count().cloned() else {
        return Vec::new();
    };
    screen.counting();
    vec![Effect::CountRemovedApis(Box::new(plan))]
}

/// The removed-API count arrived.
pub fn on_removed_apis(state: &mut AppState, counted: RemovedApisCounted) {
    let Some(screen) = state
        .kube_upgrade
        .as_mut()
        .filter(|p| p.cluster == counted.cluster)
    else {
        return;
    };
    screen.counted(
        &counted.from,
        &counted.target,
        counted.result,
        counted.flags,
    );
    super::plan_keys::read_guards(state, Some(&counted.cluster));
}

/// Keys on the Kubernetes plan screen.
pub fn on_kube_plan(state: &mut AppState, action: Action) -> Vec<Effect> {
    super::update_plan::on_plan::<Kubernetes>(state, action)
}

/// The Kubernetes plan screen's own keys; `None` for any other key.
pub(super) fn on_kube_key(state: &mut AppState, action: &Action) -> Option<Vec<Effect>> {
    let plan = state.kube_upgrade.as_mut()?;
    match action {
        Action::TogglePrePull => {
            plan.pre_pull = !plan.pre_pull;
            Some(rebuild::<Kubernetes>(state))
        }
        _ => None,
    }
}

impl PlanKeys for Kubernetes {
    fn on_key(state: &mut AppState, action: &Action) -> Option<Vec<Effect>> {
        on_kube_key(state, action)
    }

    fn after_rebuild(state: &mut AppState) -> Vec<Effect> {
        count_if_needed(state)
    }
}

#[cfg(test)]
#[path = "update_kube_plan_tests.rs"]
mod tests;
