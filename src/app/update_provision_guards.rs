//! The provision wizard's guards in the update step: the list `provision --plan` prints,
//! evaluated over the fleet model's live status and again on every status change; moving
//! through it and `?` on a guard; its acknowledgement and Start go through the plan screens' one
//! gate. Pure.
use super::action::{Action, Effect};
use super::plan_keys::plan_key;
use super::plan_screen::AskedPlan;
use super::state::AppState;
use crate::provision::cluster::{cluster_addresses, guards_over_status};

/// Evaluates the open wizard's guards again over live status. Returns whether they changed.
pub fn evaluate(state: &mut AppState) -> bool {
    let Some(w) = state.provision.wizard.as_ref() else {
        return false;
    };
    let live = state.fleet.cluster(&w.cluster).filter(|l| l.has_data());
    let guards = match (&w.plan, live) {
        (AskedPlan::Ready(plan), Some(live)) => {
            let addresses = state
                .clusters
                .iter()
                .find(|c| c.name == w.cluster)
                .map(cluster_addresses)
                .unwrap_or_default();
            guards_over_status(
                plan,
                &state.provision.config,
                &addresses,
                &live.status,
                w.machine_config_endpoint.as_deref(),
                state.fleet.capi.owner(&w.cluster),
            )
        }
        _ => Vec::new(),
    };
    let Some(w) = state.provision.wizard.as_mut() else {
        return false;
    };
    let before = w.guards.shown.clone();
    w.guards.set(guards);
    w.guards.shown != before
}

/// `cluster`'s status changed: the wizard's guards again when it is the wizard's cluster.
pub fn on_status_change(state: &mut AppState, cluster: &str) -> bool {
    let shown = state
        .provision
        .wizard
        .as_ref()
        .is_some_and(|w| w.cluster == cluster);
    shown && evaluate(state)
}

/// The wizard's guard keys: Tab between the request's fields and the guards, then every plan
/// screen's keys (moves while the guards have them). `None` for any other key.
pub fn on_key(state: &mut AppState, action: &Action) -> Option<Vec<Effect>> {
    let w = state.provision.wizard.as_mut()?;
    if matches!(action, Action::NextPane) {
        w.guards_focused = !w.guards_focused;
        return Some(Vec::new());
    }
    plan_key(state, action)
}
