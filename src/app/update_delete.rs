//! A whole cluster's deletion in the update step: `D` on the fleet's selected row or on the
//! cluster in use opens its plan on the action screen (the event loop reads it with
//! `prepare_delete`, as `taloscope delete` does); its acknowledgement and Start go through the
//! plan screens' one gate. Pure.
use super::action::Effect;
use super::actions::{ActionPlan, ActionPlanScreen};
use super::message::Message;
use super::screen::{Screen, TableKind};
use super::state::AppState;
use crate::cluster_lifecycle::{DeletePlan, delete_guards};

/// `D`: the deletion plan of the fleet's selected cluster, or of the cluster in use; the
/// progress instead while an action runs here.
pub fn open(state: &mut AppState) -> Vec<Effect> {
    if super::update_actions::shows_running(state) {
        return Vec::new();
    }
    let cluster = match state.screen {
        Screen::Fleet => super::tables::table(state, TableKind::Fleet)
            .selected_key(&state.tables.fleet)
            .map(String::from),
        Screen::Cluster(_) => state.current.clone(),
        _ => None,
    };
    let Some(cluster) = cluster else {
        state.message = Some(Message::warn(
            "no cluster selected: D deletes the fleet's selected cluster or the one in use",
        ));
        return Vec::new();
    };
    state.actions.back = Some(state.screen);
    let plan = ActionPlan::Delete {
        plan: None,
        warnings: Vec::new(),
    };
    state.actions.plan = Some(ActionPlanScreen::new(&cluster, plan));
    state.screen = Screen::Action;
    state.message = Some(Message::info(format!(
        "reading the delete plan of {cluster}"
    )));
    vec![Effect::PlanDelete(cluster)]
}

/// The plan `prepare_delete` read for `cluster`, with its guards (`delete_guards`, as the
/// command line evaluates them); ignored when another plan is on screen.
pub fn planned(
    state: &mut AppState,
    cluster: &str,
    read: Result<(DeletePlan, Vec<String>), String>,
) {
    let Some(screen) = state
        .actions
        .plan
        .as_mut()
        .filter(|p| p.cluster == cluster && matches!(p.plan, ActionPlan::Delete { .. }))
    else {
        return;
    };
    let (plan, warnings) = match read {
        Ok((plan, warnings)) => (Ok(plan), warnings),
        Err(e) => (Err(e), Vec::new()),
    };
    let guards = plan.as_ref().map(delete_guards).unwrap_or_default();
    screen.plan = ActionPlan::Delete {
        plan: Some(plan),
        warnings,
    };
    screen.guards.set(guards);
    state.message = None;
}

/// Whether the open plan is a delete: `r` reads it again.
pub fn is_delete(state: &AppState) -> bool {
    state
        .actions
        .plan
        .as_ref()
        .is_some_and(|p| matches!(p.plan, ActionPlan::Delete { .. }))
}

#[cfg(test)]
#[path = "update_delete_tests.rs"]
mod tests;
