//! The key tables of the overlays and one-line inputs: the quit question, the errors and
//! help overlays, the command line, the filter, the typed confirmation, and the too-small
//! screen; Ctrl-C quits from each.
use crossterm::event::KeyCode;

use super::action::Action;
use super::keymap::{Binding, Key};

/// Ctrl-C quits from the overlays too (q closes them); on the too-small
/// screen q quits as well.
pub(super) static CTRL_C_QUITS: &[Binding] = &[Binding {
    keys: &[Key::ctrl('c')],
    action: Action::Quit,
    help: "quit (asks first while a rollout or provision runs)",
    footer: None,
    offered: None,
}];

pub(super) static TOO_SMALL: &[Binding] = &[Binding {
    keys: &[Key::char('q'), Key::ctrl('c')],
    action: Action::Quit,
    help: "quit; every other key waits for a larger terminal",
    footer: Some("quit"),
    offered: None,
}];

pub(super) static QUIT_QUESTION: &[Binding] = &[
    Binding {
        keys: &[Key::char('y')],
        action: Action::ConfirmQuit,
        help: "quit now (a rollout's journal resumes it on the next start)",
        footer: Some("quit"),
        offered: None,
    },
    Binding {
        keys: &[
            Key::char('n'),
            Key::plain(KeyCode::Esc),
            Key::char('q'),
            Key::ctrl('c'),
        ],
        action: Action::Back,
        help: "stay (the default)",
        footer: Some("stay"),
        offered: None,
    },
];

pub(super) static ERRORS_CLOSE: &[Binding] = &[Binding {
    keys: &[Key::plain(KeyCode::Esc), Key::char('e'), Key::char('q')],
    action: Action::Back,
    help: "close",
    footer: Some("close"),
    offered: None,
}];

pub(super) static HELP_CLOSE: &[Binding] = &[Binding {
    keys: &[Key::plain(KeyCode::Esc), Key::char('?'), Key::char('q')],
    action: Action::Back,
    help: "close help",
    footer: Some("close"),
    offered: None,
}];

pub(super) static COMMAND_LINE: &[Binding] = &[
    Binding {
        keys: &[Key::plain(KeyCode::Tab)],
        action: Action::Complete,
        help: "complete command or cluster name",
        footer: Some("complete"),
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Enter)],
        action: Action::Submit,
        help: "run the command",
        footer: Some("run"),
        offered: None,
    },
];

pub(super) static COMMAND_LINE_CANCEL: &[Binding] = &[Binding {
    keys: &[Key::plain(KeyCode::Esc), Key::ctrl('c')],
    action: Action::Back,
    help: "cancel",
    footer: Some("cancel"),
    offered: None,
}];

pub(super) static FILTER: &[Binding] = &[Binding {
    keys: &[Key::plain(KeyCode::Enter)],
    action: Action::Submit,
    help: "keep the filter",
    footer: Some("keep"),
    offered: None,
}];

pub(super) static FILTER_CLEAR: &[Binding] = &[Binding {
    keys: &[Key::plain(KeyCode::Esc), Key::ctrl('c')],
    action: Action::Back,
    help: "clear the filter",
    footer: Some("clear"),
    offered: None,
}];

pub(super) static CONFIRM: &[Binding] = &[Binding {
    keys: &[Key::plain(KeyCode::Enter)],
    action: Action::Submit,
    help: "go ahead if the typed name matches, else cancel",
    footer: Some("confirm"),
    offered: None,
}];

pub(super) static CONFIRM_CANCEL: &[Binding] = &[Binding {
    keys: &[Key::plain(KeyCode::Esc), Key::ctrl('c')],
    action: Action::Back,
    help: "cancel (the default)",
    footer: Some("cancel"),
    offered: None,
}];
