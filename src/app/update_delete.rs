//! A whole cluster's deletion in the update step: `D` on the fleet's selected row or on the
//! cluster in use opens its plan on the cluster plan screen (`views::cluster_plan`, which has
//! the event loop read it with `prepare_delete`, as `taloscope delete` does). Pure.
use super::action::Effect;
use super::message::Message;
use super::screen::{Screen, TableKind};
use super::state::AppState;

/// The cluster plan screen's name.
const CLUSTER_PLAN: &str = "cluster-plan";

/// `D`: the deletion plan of the fleet's selected cluster, or of the cluster in use (the
/// progress instead while an action runs here, `shell::open_with`).
pub fn open(state: &mut AppState) -> Vec<Effect> {
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
    super::shell::open_with(state, CLUSTER_PLAN, vec!["delete".into(), cluster])
}
