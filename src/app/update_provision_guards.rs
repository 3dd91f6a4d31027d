//! The provision wizard's guards in the update step: the list `provision --plan` prints,
//! evaluated over the fleet model's live status and again on every status change; moving
//! through it and `?` on a guard; its acknowledgement and Start go through the plan screens' one
//! gate. Pure.
use super::action::{Action, Effect};
use super::plan_keys::plan_key;
use super::state::AppState;

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
