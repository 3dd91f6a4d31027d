//! How every headless command ends: one table of exit codes, one `Stop` that
//! carries the code and the reason (also as JSON with `--output json`), and one
//! way to ask the dispatcher (and, for plans with guards, one plan-and-approve
//! gate), so a refusal reads and exits the same whatever the command.
use std::io::Write;
use std::process::ExitCode;

use super::upgrade_output::guarded_plan;
use crate::approval::{
    Answer, ApprovedAction, AuditLog, Dispatcher, Gate, MutatingAction, Verdict,
};
use crate::cli::{GlobalArgs, OutputFormat};
use crate::guards::{Guard, blocking};
use crate::paths::Paths;

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

/// A dispatcher for this run: read-only as `--readonly` says, auditing into the state dir.
pub(super) fn dispatcher(global: &GlobalArgs, paths: &Paths) -> Dispatcher {
    Dispatcher::new(global.readonly, AuditLog::new(paths.audit_log()))
}

/// Records in the audit log that the plan's guards refused the approved run; the stop says so.
pub(super) fn refuse(dispatcher: &Dispatcher, approved: &ApprovedAction, what: &str) -> Stop {
    let _ = dispatcher.finished(approved, Err("refused by its guards".into()));
    Stop(EXIT_BLOCKED, format!("refused: a guard blocks the {what}"))
}

/// What a plan-then-run command was asked: `--plan`, `--yes`, `--confirm`, `--ack`, `--output`.
pub(super) struct RunFlags<'a> {
    pub plan: bool,
    pub yes: bool,
    pub confirm: Option<&'a str>,
    pub acks: &'a [String],
    pub output: OutputFormat,
}

/// The [`RunFlags`] of a command's arguments (provision, create and delete name them alike).
macro_rules! run_flags {
    ($args:expr) => {
        $crate::commands::exit::RunFlags {
            plan: $args.plan,
            yes: $args.yes,
            confirm: $args.confirm.as_deref(),
            acks: &$args.ack,
            output: $args.output,
        }
    };
}
pub(super) use run_flags;

/// A plan that provision, create and delete print with its guards and ask the dispatcher for.
pub(super) trait GatedPlan: serde::Serialize {
    /// The verb of the hint and the refusal: "provision", "create", "delete".
    const WHAT: &'static str;
    /// The `--ack` every run of it needs, named in the "nothing done" hint.
    const ALWAYS_ACK: Option<&'static str>;
    fn cluster(&self) -> &str;
    fn table(&self) -> String;
    fn action(&self) -> MutatingAction;
}

/// The [`GatedPlan`] of a plan type with a `cluster` field and `table` and `action` methods.
macro_rules! gated_plan {
    ($plan:ty, $what:literal, $ack:expr) => {
        impl GatedPlan for $plan {
            const WHAT: &'static str = $what;
            const ALWAYS_ACK: Option<&'static str> = $ack;
            fn cluster(&self) -> &str {
                &self.cluster
            }
            fn table(&self) -> String {
                <$plan>::table(self)
            }
            fn action(&self) -> MutatingAction {
                <$plan>::action(self)
            }
        }
    };
}
gated_plan!(crate::provision::ProvisionPlan, "provision", None);
gated_plan!(crate::cluster_lifecycle::CreatePlan, "create", None);
gated_plan!(crate::capi_scale::ScalePlan, "scale", None);
gated_plan!(
    crate::cluster_lifecycle::DeletePlan,
    "delete",
    Some(crate::cluster_lifecycle::DESTROYS_ACK)
);

/// The plan-and-approve gate of provision, create and delete. Without `--yes` the plan and its
/// guards are printed: `--plan` ends there (exit 1 when a guard blocks), else the stop says
/// how to run it. With `--yes`: `ready` (what the run needs, checked before anything is
/// asked), then the dispatcher's approval, the plan printed for table output, and a refusal
/// (audited) when a guard blocks. `None`: `--plan` printed it, no guard blocks, nothing to run.
pub(super) fn plan_then_approve<P: GatedPlan, R>(
    dispatcher: &Dispatcher,
    plan: &P,
    guards: &[Guard],
    flags: &RunFlags,
    ready: impl FnOnce() -> Result<R, Stop>,
) -> Result<Option<(ApprovedAction, R)>, Stop> {
    let blocked = blocking(guards, flags.acks);
    let json = flags.output == OutputFormat::Json;
    let shown = guarded_plan(
        plan,
        &plan.table(),
        plan.cluster(),
        guards,
        flags.acks,
        json,
    )
    .map_err(|e| Stop(EXIT_USAGE, e))?;
    // The table carries names read from the network: printed without control characters.
    let shown = if json {
        shown
    } else {
        crate::printable::lines(&shown)
    };
    if !flags.yes {
        print_line(shown.trim_end());
        return match (flags.plan, blocked) {
            (true, false) => Ok(None),
            (true, true) => Err(Stop(EXIT_BLOCKED, String::new())),
            (false, _) => {
                let ack = P::ALWAYS_ACK.map_or(String::new(), |a| format!(" --ack {a:?}"));
                Err(usage(format!(
                    "nothing done: add --yes --confirm {}{ack} to {}, or --plan to only plan",
                    plan.cluster(),
                    P::WHAT
                )))
            }
        };
    }
    let ready = ready()?;
    let approved = approve(dispatcher, plan.action(), flags.confirm)?;
    if !json {
        print_line(shown.trim_end());
    }
    if blocked {
        return Err(refuse(dispatcher, &approved, P::WHAT));
    }
    Ok(Some((approved, ready)))
}
