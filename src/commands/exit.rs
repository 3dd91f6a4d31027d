//! How every headless command ends: one table of exit codes, one `Stop` that
//! carries the code and the reason, and one way to ask the dispatcher, so a
//! refusal reads and exits the same whatever the command.
use std::process::ExitCode;

use crate::approval::{Answer, ApprovedAction, Dispatcher, Gate, MutatingAction, Verdict};

/// Refused (read-only, a guard blocks), or not done (a node did not answer,
/// a VM did not join, a rollout did not finish).
pub(super) const EXIT_BLOCKED: u8 = 1;
/// A usage or configuration error: wrong flags, a `--confirm` that is not the
/// cluster's name, an unreadable config file. Nothing was changed.
pub(super) const EXIT_USAGE: u8 = 2;

/// A reason to stop, with its exit code; an empty reason prints nothing.
pub(super) struct Stop(pub(super) u8, pub(super) String);

pub(super) fn usage(message: impl Into<String>) -> Stop {
    Stop(EXIT_USAGE, message.into())
}

/// The exit code of a run; a stop says its reason on stderr first.
pub(super) fn exit_code(result: Result<ExitCode, Stop>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(Stop(code, message)) => {
            if !message.is_empty() {
                eprintln!("taloscope: {message}");
            }
            ExitCode::from(code)
        }
    }
}

/// Asks the dispatcher for `action`, answering its confirmation with
/// `--confirm`: refused in read-only mode, a usage error when the typed name
/// is not the cluster's.
pub(super) fn approve(
    dispatcher: &Dispatcher,
    action: MutatingAction,
    confirm: Option<&str>,
) -> Result<ApprovedAction, Stop> {
    let (what, name) = match &action {
        MutatingAction::Node { .. } => ("node", action.confirm_name().to_string()),
        _ => ("cluster", action.cluster().to_string()),
    };
    let pending = match dispatcher.request(action) {
        Gate::Refused(why) => return Err(Stop(EXIT_BLOCKED, why)),
        Gate::Confirm(p) => p,
    };
    let answer = match confirm {
        Some(typed) => Answer::Typed(typed.to_string()),
        None => Answer::Cancel,
    };
    match dispatcher.answer(pending, answer) {
        Verdict::Proceed(approved) => Ok(approved),
        Verdict::Cancelled(why) => Err(usage(format!(
            "{why}; --confirm must be the {what} name {name:?}"
        ))),
    }
}
