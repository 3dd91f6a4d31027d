//! The CAPI screen of the cluster in use (`:capi`): its Cluster API tree as its management
//! cluster was last read, the selection, and Enter's full conditions of the selected object.
//! Pure; the rows are `capi::tree_rows`, the ones `taloscope capi status` prints.
use super::action::{Action, Effect};
use super::message::Message;
use super::screen::{Pane, Screen};
use super::state::{AppState, Overlay};
use crate::capi::{CapiOwner, ClusterTree, TreeRow, condition_age, tree_rows};

/// Where the operator is on the CAPI screen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapiScreen {
    /// The selected row's object (`Machine/…`), kept across reads.
    pub selected: Option<String>,
}

/// The owner and tree of the cluster in use, when a management cluster owns it.
pub fn shown_tree(state: &AppState) -> Option<(&CapiOwner, ClusterTree)> {
    let cluster = state.current.as_deref()?;
    let owner = state.fleet.capi.owner(cluster)?;
    Some((owner, state.fleet.capi.tree(owner)?))
}

/// The rows on screen and the selected one's index.
pub fn rows_and_selection(state: &AppState) -> (Vec<TreeRow>, usize) {
    let rows = shown_tree(state)
        .map(|(_, t)| tree_rows(&t))
        .unwrap_or_default();
    let index = state
        .capi
        .selected
        .as_ref()
        .and_then(|s| rows.iter().position(|r| &r.object == s))
        .unwrap_or(0);
    (rows, index)
}

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
        Action::ScaleCapi => return super::update_capi_scale::ask(state),
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

/// `type status (severity) reason, since age` then the message indented, per condition.
pub fn conditions_text(row: &TreeRow, now: u64) -> String {
    if row.conditions.is_empty() {
        return "No conditions reported.".to_string();
    }
    let mut text = String::new();
    for c in &row.conditions {
        let mut head = format!("{} {}", c.kind, c.status);
        if !c.severity.is_empty() {
            head.push_str(&format!(" ({})", c.severity));
        }
        if !c.reason.is_empty() {
            head.push_str(&format!(" {}", c.reason));
        }
        if let Some(age) = condition_age(c, now).filter(|_| now > 0) {
            head.push_str(&format!(", since {} ago", super::health::age_text(age)));
        }
        text.push_str(&crate::printable::line(&head));
        text.push('\n');
        for line in c.message.lines() {
            text.push_str(&format!("  {}\n", crate::printable::line(line)));
        }
    }
    text.trim_end().to_string()
}
