//! The key tables of the health checklist: `H` on the cluster panes opens it; on the
//! checklist `r` runs the checks again and Esc goes back.
use crossterm::event::KeyCode;

use super::action::Action;
use super::keymap::{Binding, Key};

/// On the cluster panes.
pub(super) static FROM_CLUSTER: &[Binding] = &[Binding {
    keys: &[Key::char('H')],
    action: Action::OpenHealth,
    help: "health checks of the cluster (a checklist that fills in; :health)",
    footer: None,
    offered: None,
}];

pub(super) static CHECKLIST: &[Binding] = &[
    Binding {
        keys: &[Key::char('r')],
        action: Action::Refresh,
        help: "run the checks again (once the run ended)",
        footer: Some("re-run"),
        offered: Some(ended),
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "back to the cluster (a running check goes on)",
        footer: Some("back"),
        offered: None,
    },
];

fn ended(state: &super::state::AppState) -> bool {
    state.health.as_ref().is_some_and(|h| !h.running())
}
