//! How every headless command ends: one table of exit codes, one `Stop` that
//! carries the code and the reason (also as JSON with `--output json`), and one
//! way to ask the dispatcher, so a refusal reads and exits the same whatever
//! the command.
use std::io::Write;
use std::process::ExitCode;

use crate::approval::{Answer, ApprovedAction, Dispatcher, Gate, MutatingAction, Verdict};
use crate::cli::OutputFormat;

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

/// The exit code of a run as `output` says it: with `--output json` a stop is also one JSON
/// line on stdout (`{"event":"stopped","data":{"exit_code":1,"message":"…"}}`), so a script
/// reading stdout reads JSON also when there was nothing to do or the run was refused.
pub(super) fn exit_code_as(result: Result<ExitCode, Stop>, output: OutputFormat) -> ExitCode {
    if output == OutputFormat::Json
        && let Err(Stop(code, message)) = &result
        && !message.is_empty()
    {
        let stopped = serde_json::json!({"exit_code": code, "message": message});
        print_line(&json_line("stopped", &stopped));
    }
    exit_code(result)
}

/// One event of a run as a JSON line: `{"event": kind, "data": value}`.
pub(super) fn json_line<T: serde::Serialize>(kind: &str, value: &T) -> String {
    serde_json::to_string(&serde_json::json!({"event": kind, "data": value}))
        .unwrap_or_else(|e| format!("{{\"event\":\"error\",\"data\":\"{e}\"}}"))
}

/// One progress event as a JSON line, with its local time and UTC offset
/// ("time": "2026-11-30T16:20:57+01:00").
pub(super) fn json_line_at<T: serde::Serialize>(
    kind: &str,
    value: &T,
    (zone, unix): (crate::clock::Zone, u64),
) -> String {
    let time = zone.timestamp(unix);
    serde_json::to_string(&serde_json::json!({"event": kind, "time": time, "data": value}))
        .unwrap_or_else(|e| format!("{{\"event\":\"error\",\"data\":\"{e}\"}}"))
}

/// Writes `line` and a newline to stdout, flushed; a closed pipe (`| head`) is not an error.
pub(super) fn print_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out
        .write_all(line.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
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

/// Without --yes, once the plan is printed: `--plan` ends there (exit 1 when a guard blocks);
/// neither flag is a usage error saying how to run it (`run`: "--yes --confirm w to scale").
pub(super) fn plan_only(plan_flag: bool, blocked: bool, run: &str) -> Result<(), Stop> {
    match (plan_flag, blocked) {
        (true, false) => Ok(()),
        (true, true) => Err(Stop(EXIT_BLOCKED, String::new())),
        (false, _) => Err(usage(format!(
            "nothing done: add {run}, or --plan to only plan"
        ))),
    }
}

/// [`approve`], then — the plan printed by `show` for table output — refused when a guard
/// blocks (audited as such): the gate provision, create and delete pass in one order.
pub(super) fn approve_unless_blocked(
    dispatcher: &Dispatcher,
    action: MutatingAction,
    confirm: Option<&str>,
    blocked: bool,
    what: &str,
    show: impl FnOnce(),
) -> Result<ApprovedAction, Stop> {
    let approved = approve(dispatcher, action, confirm)?;
    show();
    if blocked {
        let _ = dispatcher.finished(&approved, Err("refused by its guards".into()));
        return Err(Stop(
            EXIT_BLOCKED,
            format!("refused: a guard blocks the {what}"),
        ));
    }
    Ok(approved)
}
