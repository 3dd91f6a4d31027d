//! The key table of the CAPI-way upgrade plan screen: switch between the phases and the
//! guards, explain, acknowledge, read the plan again, start through the dispatcher, close.
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
    Binding {
        keys: &[Key::char('s')],
        action: Action::StartUpgrade,
        help: "start the CAPI way (refused while a guard blocks; asks for the name)",
        footer: Some("start"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('r')],
        action: Action::Refresh,
        help: "read the plan from the management cluster again",
        footer: Some("reread"),
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "close the plan",
        footer: Some("back"),
        offered: None,
    },
    Binding {
        keys: &[Key::char(':')],
        action: Action::OpenCommandLine,
        help: "command line (:help, :q)",
        footer: None,
        offered: None,
    },
];
