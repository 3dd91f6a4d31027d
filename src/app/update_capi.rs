//! The CAPI screen's part of the update step: `:capi` opens it, Enter explains the selected
//! object's conditions, `f` / `a` the doctor's fixes, `s` hands the object to scale to the
//! cluster plan screen (`views::cluster_plan`). Pure.
use super::action::{Action, Effect};
use super::capi::conditions_text;
use super::message::Message;
use super::queries::rows_and_selection;
use super::screen::{Pane, Screen};
use super::screens::ScreenNews;
use super::state::{AppState, Overlay};
use crate::capi::TreeRow;

/// `:capi`: the screen, for the cluster in use (else the one selected on the fleet).
pub fn open(state: &mut AppState) -> Vec<Effect> {
    let Some(cluster) = super::update_upgrade::usable_cluster(state) else {
        return Vec::new();
    };
    state.current = Some(cluster.clone());
    if state.fleet.capi.owner(&cluster).is_none() {
        let why = if state.fleet.capi.managements.is_empty() {
            "no management cluster among the kube contexts (yet)".to_string()
        } else {
            format!(
                "none of the {} management clusters owns it",
                state.fleet.capi.managements.len()
            )
        };
        state.message = Some(Message::info(format!(
            "{cluster} is not owned by Cluster API: {why}"
        )));
        return Vec::new();
    }
    state.screen = Screen::Capi;
    state.message = None;
    Vec::new()
}

/// Keys on the CAPI screen.
pub fn on_key(state: &mut AppState, action: Action) -> Vec<Effect> {
    let (rows, index) = rows_and_selection(state);
    let last = rows.len().saturating_sub(1);
    let page = usize::from(state.size.1.saturating_sub(10)).max(1);
    let to = match action {
        Action::MoveDown => (index + 1).min(last),
        Action::MoveUp => index.saturating_sub(1),
        Action::MoveFirst => 0,
        Action::MoveLast => last,
        Action::PageDown => (index + page).min(last),
        Action::PageUp => index.saturating_sub(page),
        Action::OpenSelected => {
            if let Some(row) = rows.get(index) {
                explain_row(state, row);
            }
            return Vec::new();
        }
        Action::Back => {
            state.screen = Screen::Cluster(Pane::Nodes);
            return Vec::new();
        }
        Action::OpenActions => return super::update_actions::open_menu(state),
        Action::ScaleCapi => return ask_scale(state),
        other => return super::update_panes::on_screen(state, other),
    };
    state.capi.selected = rows.get(to).map(|r| r.object.clone());
    Vec::new()
}

/// Every condition of the row's object, whole, in the explain overlay.
fn explain_row(state: &mut AppState, row: &TreeRow) {
    let now = state.wall_clock.unwrap_or(0);
    state.overlay = Some(Overlay::Explain {
        title: row.object.clone(),
        text: conditions_text(row, now),
        scroll: 0,
    });
}

/// `C` on the cluster panes: the CAPI screen (`:capi`).
pub fn open_from_cluster(state: &mut AppState) -> Vec<Effect> {
    let effects = open(state);
    if state.screen == Screen::Capi {
        state.capi.selected = None;
    }
    effects
}

/// `s` on the `:capi` screen: the replica count of the selected object (or the control
/// plane's) is asked for on the cluster plan screen; the progress instead while an action
/// runs here.
fn ask_scale(state: &mut AppState) -> Vec<Effect> {
    if super::update_actions::shows_running(state) {
        return Vec::new();
    }
    match super::queries::target_of(state) {
        Ok(target) => {
            state.actions.back = Some(Screen::Capi);
            let name = super::update_delete::CLUSTER_PLAN;
            super::shell::on_news(state, &ScreenNews::new(name, target));
            super::shell::open_with(state, name, vec!["scale".into()])
        }
        Err(why) => {
            state.message = Some(Message::warn(format!("nothing to scale: {why}")));
            Vec::new()
        }
    }
}
