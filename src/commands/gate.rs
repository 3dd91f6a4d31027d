//! The one gate every mutating command passes before anything changes: the dispatcher asked
//! with the typed `--confirm` (refused in read-only mode, audited whatever the answer), the
//! guards' acknowledgements checked against what the plan asks for, and the plan-and-approve
//! sequence of the commands whose plans carry guards.
use super::exit::{EXIT_BLOCKED, EXIT_USAGE, Stop, print_line, usage};
use super::plan_report::guarded_plan;
use super::progress::print_progress;
use crate::approval::{
    Answer, ApprovedAction, AuditLog, Dispatcher, Gate, MutatingAction, Verdict,
};
use crate::cli::{GateArgs, GlobalArgs, OutputFormat};
use crate::guards::{Guard, blocking};
use crate::operation::{CancelSignal, Events, Operation, OperationEvent, Runner};
use crate::paths::Paths;

/// Asks the dispatcher for `action`, answering its confirmation with
/// `--confirm`: refused in read-only mode, a usage error when the typed name
/// is not the cluster's.
pub(super) fn approve(
    dispatcher: &Dispatcher,
    action: MutatingAction,
    confirm: Option<&str>,
) -> Result<ApprovedAction, Stop> {
    let (what, name) = (action.confirm_noun(), action.confirm_name().to_string());
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

/// Says, on stderr, each node or etcd action a run now gone left unfinished (and what it left
/// behind, e.g. a node still cordoned), and records it in the audit log as interrupted: once,
/// at the next command that may act on clusters.
pub(super) fn report_interrupted(dispatcher: &Dispatcher, paths: &Paths) {
    let (found, errors) = crate::journal::action::interrupted_actions(&paths.state_dir);
    for error in errors {
        eprintln!("taloscope: warning: {}", crate::printable::line(&error));
    }
    for interrupted in found {
        eprintln!(
            "taloscope: {}",
            crate::printable::line(&interrupted.describe())
        );
        let record = &interrupted.record;
        if let Err(e) = dispatcher.interrupted(&record.cluster, &record.action) {
            eprintln!("taloscope: warning: {e}");
        }
        if let Err(e) = interrupted.mark_reported() {
            eprintln!("taloscope: warning: {e}");
        }
    }
}

/// Records in the audit log that the plan's guards refused the approved run; the stop names
/// the first guard that blocks and why.
pub(super) fn refuse(
    dispatcher: &Dispatcher,
    approved: &ApprovedAction,
    guards: &[Guard],
    acks: &[String],
) -> Stop {
    let first = guards.iter().find(|g| g.blocks(acks));
    let why = first.map_or("a guard blocks".to_string(), |g| {
        let mut why = format!("guard \"{}\" blocks: {}", g.id.title(), g.reason);
        if let (crate::guards::Verdict::Warn, Some(ack)) = (g.verdict, &g.needs_ack) {
            // A mistyped acknowledgement is named beside the one asked for, not taken for none.
            let given: Vec<String> = acks
                .iter()
                .map(|a| format!("--ack {:?}", crate::printable::line(a)))
                .collect();
            if given.is_empty() {
                why.push_str(&format!(" (needs --ack {ack:?})"));
            } else {
                why.push_str(&format!(
                    " (needs --ack {ack:?}; given {})",
                    given.join(", ")
                ));
            }
        }
        why
    });
    let _ = dispatcher.finished(approved, Err(format!("refused by its guards: {why}")));
    let action = approved.action();
    Stop(
        EXIT_BLOCKED,
        crate::printable::line(&format!(
            "refused: a guard blocks the {} in {}: {why}",
            action.describe(),
            action.cluster()
        )),
    )
}

/// What a plan-then-run command was asked: `--plan`, `--yes`, `--confirm`, `--ack`, `--output`.
pub(super) struct RunFlags<'a> {
    pub plan: bool,
    pub yes: bool,
    pub confirm: Option<&'a str>,
    pub acks: &'a [String],
    pub output: OutputFormat,
}

impl<'a> RunFlags<'a> {
    /// The flags of a command that flattens [`GateArgs`].
    pub fn of(gate: &'a GateArgs) -> RunFlags<'a> {
        RunFlags {
            plan: gate.plan,
            yes: gate.yes,
            confirm: gate.confirm.as_deref(),
            acks: &gate.ack,
            output: gate.output,
        }
    }
}

/// A usage error when an `--ack` is not one the plan's guards ask for: a mistyped
/// acknowledgement is named as such, not taken for a missing one.
pub(super) fn unknown_acks(guards: &[Guard], acks: &[String]) -> Result<(), Stop> {
    let asked: Vec<&str> = guards
        .iter()
        .filter_map(|g| g.needs_ack.as_deref())
        .collect();
    let Some(stray) = acks.iter().find(|a| !asked.contains(&a.trim())) else {
        return Ok(());
    };
    let stray = crate::printable::line(stray);
    Err(usage(if asked.is_empty() {
        format!("--ack {stray:?}: this plan asks for no acknowledgement")
    } else {
        let asked: Vec<String> = asked.iter().map(|a| format!("{a:?}")).collect();
        format!(
            "--ack {stray:?} is not an acknowledgement this plan asks for (it asks for {})",
            asked.join(", ")
        )
    }))
}

/// A plan that provision, create and delete print with its guards and ask the dispatcher for.
pub(super) trait GatedPlan: serde::Serialize {
    /// The verb of the hint and the refusal: "provision", "create", "delete".
    const WHAT: &'static str;
    /// The `--ack` every run of it needs, named in the "nothing done" hint.
    const ALWAYS_ACK: Option<&'static str>;
    fn table(&self) -> String;
    fn action(&self) -> MutatingAction;
}

/// The [`GatedPlan`] of a plan type with `table` and `action` methods.
macro_rules! gated_plan {
    ($plan:ty, $what:literal, $ack:expr) => {
        impl GatedPlan for $plan {
            const WHAT: &'static str = $what;
            const ALWAYS_ACK: Option<&'static str> = $ack;
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
    // What --confirm takes: the cluster, or the node of an action on one node.
    let action = plan.action();
    let confirm = action.confirm_name();
    let shown = guarded_plan(plan, &plan.table(), confirm, guards, flags.acks, json)
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
                    "nothing done: add --yes --confirm {confirm}{ack} to {}, or --plan to only plan",
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
        return Err(refuse(dispatcher, &approved, guards, flags.acks));
    }
    Ok(Some((approved, ready)))
}

/// The cancel of an approved headless run: the first SIGINT or SIGTERM sets it, and the run
/// stops after the step under way, saying what it leaves; a second one ends the process at
/// once (exit 130), and the run's journal reports it interrupted on the next start.
pub(super) fn cancel_on_signals(runtime: &tokio::runtime::Runtime) -> CancelSignal {
    use tokio::signal::unix::{SignalKind, signal};
    let (set, cancel) = CancelSignal::new();
    // Listening before the run starts: from here on a signal reaches the run, not the default
    // handler.
    let _entered = runtime.enter();
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return cancel;
    };
    runtime.spawn(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        eprintln!("taloscope: cancelling after the step under way (signal again to stop at once)");
        set.send_replace(true);
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        std::process::exit(130);
    });
    cancel
}

/// Runs the approved `operation` through the one runner, cancelled by SIGINT/SIGTERM after
/// the step under way; `events` hears its progress. The runner keeps the journal and audits
/// how it ended.
pub(super) fn run_operation<O: Operation>(
    runtime: &tokio::runtime::Runtime,
    approval: (&Dispatcher, &ApprovedAction),
    (paths, acks): (&Paths, &[String]),
    operation: &mut O,
    events: Events<'_>,
) -> Result<String, String> {
    let runner = runner(approval, (paths, acks), cancel_on_signals(runtime), events);
    runtime.block_on(crate::operation::run(operation, runner))
}

/// Runs the approved `operation` through the one runner to its end: a signal does not cancel
/// it (its kind's cancel rule is to run to its end).
pub(super) async fn run_to_its_end<O: Operation>(
    approval: (&Dispatcher, &ApprovedAction),
    (paths, acks): (&Paths, &[String]),
    operation: &mut O,
    events: Events<'_>,
) -> Result<String, String> {
    let runner = runner(approval, (paths, acks), CancelSignal::never(), events);
    crate::operation::run(operation, runner).await
}

fn runner<'a>(
    (dispatcher, approved): (&'a Dispatcher, &'a ApprovedAction),
    (paths, acks): (&'a Paths, &'a [String]),
    cancel: CancelSignal,
    events: Events<'a>,
) -> Runner<'a> {
    Runner {
        approved,
        dispatcher,
        state_dir: &paths.state_dir,
        acks,
        cancel,
        events,
    }
}

/// Prints how a headless run ended (its line for a table; `outcome`, the `--yes --output
/// json` contract, as JSON) and gives its exit code: 0 when it `succeeded`, 1 when not.
pub(super) fn finish_run(
    output: OutputFormat,
    line: &str,
    outcome: &impl serde::Serialize,
    succeeded: bool,
) -> Result<std::process::ExitCode, Stop> {
    match output {
        OutputFormat::Table => print_line(&crate::printable::line(line)),
        OutputFormat::Json => super::exit::write_stdout(
            &serde_json::to_string_pretty(outcome)
                .map(|j| j + "\n")
                .map_err(|e| Stop(1, format!("cannot encode the output as JSON: {e}")))?,
        )?,
    }
    Ok(if succeeded {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(EXIT_BLOCKED)
    })
}

/// The progress printer of an operation's events: stamped lines on stdout for a table; on
/// stderr for JSON output, whose stdout carries the outcome.
pub(super) fn progress_printer(output: OutputFormat) -> impl Fn(OperationEvent) + Send + Sync {
    move |event: OperationEvent| {
        let line = event.line();
        match output {
            OutputFormat::Table => print_progress(output, "progress", &line, &line),
            OutputFormat::Json => eprintln!("{}", crate::printable::line(&line)),
        }
    }
}
