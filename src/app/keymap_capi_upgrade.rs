//! The key table of the CAPI-way upgrade plan screen's own keys: switch between the phases and
//! the guards, explain, acknowledge (start, read again and close are the plan screens' keys).
use crossterm::event::KeyCode;

use super::action::Action;
use super::keymap::{Binding, Key};
use super::keymap_upgrade::ACKNOWLEDGE;

pub(super) static CAPI_UPGRADE_PLAN: &[Binding] = &[
    Binding {
        keys: &[Key::plain(KeyCode::Tab)],
        action: Action::NextPane,
        help: "switch between the phases and the guards",
        footer: Some("focus"),
        offered: None,
    },
    ACKNOWLEDGE,
    Binding {
        keys: &[Key::char('?')],
        action: Action::Explain,
        help: "explain the selected guard or phase (:help lists keys)",
        footer: Some("why"),
        offered: None,
    },
];
