//! The key tables of the overlays and one-line inputs: the quit question, the errors,
//! help and explanation overlays, the command line, the filter, the text fields, the typed
//! confirmation, and the too-small screen; Ctrl-C quits from each.
use super::action::Action;
use super::binding::{Binding, Key, bind, quit};

#[rustfmt::skip]
pub(super) static TEXT_FIELD: &[Binding] = &[bind(&[Key::ENTER], Action::Submit, "set").footer("set")];

/// Esc and Ctrl-c leave the command line and a text field unchanged.
#[rustfmt::skip]
pub(super) static CANCEL: &[Binding] = &[bind(&[Key::ESC, Key::ctrl('c')], Action::Back, "cancel").footer("cancel")];

#[rustfmt::skip]
pub(super) static EXPLAIN_CLOSE: &[Binding] = &[bind(&[ Key::ESC, Key::char('?'), Key::char('q'), Key::ENTER, ], Action::Back, "close").footer("close")];

/// Ctrl-C quits from the overlays too (q closes them); on the too-small
/// screen q quits as well.
#[rustfmt::skip]
pub(super) static CTRL_C_QUITS: &[Binding] = &[bind(&[Key::ctrl('c')], Action::Quit, "quit (asks first while a rollout or provision runs)")];

#[rustfmt::skip]
pub(super) static TOO_SMALL: &[Binding] = &[quit("quit; every other key waits for a larger terminal").footer("quit")];

#[rustfmt::skip]
pub(super) static QUIT_QUESTION: &[Binding] = &[
    bind(&[Key::char('y')], Action::ConfirmQuit, "quit now (a rollout's journal resumes it on the next start)").footer("quit"),
    bind(&[ Key::char('n'), Key::ESC, Key::char('q'), Key::ctrl('c'), ], Action::Back, "stay (the default)").footer("stay"),
];

#[rustfmt::skip]
pub(super) static ERRORS_CLOSE: &[Binding] = &[bind(&[Key::ESC, Key::char('e'), Key::char('q')], Action::Back, "close").footer("close")];

#[rustfmt::skip]
pub(super) static HELP_CLOSE: &[Binding] = &[bind(&[Key::ESC, Key::char('?'), Key::char('q')], Action::Back, "close help").footer("close")];

#[rustfmt::skip]
pub(super) static COMMAND_LINE: &[Binding] = &[
    bind(&[Key::TAB], Action::Complete, "complete command or cluster name").footer("complete"),
    bind(&[Key::ENTER], Action::Submit, "run the command").footer("run"),
];

#[rustfmt::skip]
pub(super) static FILTER: &[Binding] = &[bind(&[Key::ENTER], Action::Submit, "keep the filter").footer("keep")];

#[rustfmt::skip]
pub(super) static FILTER_CLEAR: &[Binding] = &[bind(&[Key::ESC, Key::ctrl('c')], Action::Back, "clear the filter").footer("clear")];

#[rustfmt::skip]
pub(super) static CONFIRM: &[Binding] = &[bind(&[Key::ENTER], Action::Submit, "go ahead if the typed name matches, else cancel").footer("confirm")];

#[rustfmt::skip]
pub(super) static CONFIRM_CANCEL: &[Binding] = &[bind(&[Key::ESC, Key::ctrl('c')], Action::Back, "cancel (the default)").footer("cancel")];
