//! The one gate every mutating command passes before anything changes: the dispatcher asked
//! with the typed `--confirm` (refused in read-only mode, audited whatever the answer), the
//! guards' acknowledgements checked against what the plan asks for, the plan-and-approve
//! sequence ([`CommandGate::pass`]), the run on the one runner, and how a run ends.
use super::exit::{EXIT_BLOCKED, Stop, exit_if, json, print_line, usage, write_stdout};
use super::plan_report::{PlanReport, PlanText};
use super::progress::progress_printer;
use crate::approval::{
    Answer, ApprovedAction, AuditLog, Dispatcher, Gate, MutatingAction, Verdict,
};
use crate::cli::{GateArgs, GlobalArgs, OutputFormat};
use crate::guards::Guard;
use crate::operation::{CancelSignal, Events, Operation, Runner};
use crate::paths::Paths;

/// Says, on stderr, each node or etcd action a run now gone left unfinished (and what it left
/// behind, e.g. a node still cordoned), recorded in the audit log as interrupted: once, at the
/// next command that may act on clusters.
fn report_interrupted(dispatcher: &Dispatcher, paths: &Paths) {
    let (found, warnings) = crate::operation::report_interrupted(dispatcher, &paths.state_dir);
    for (warning, told) in crate::operation::interrupted_told(&found, warnings) {
        let warning = if warning { "warning: " } else { "" };
        eprintln!("taloscope: {warning}{}", crate::printable::line(&told));
    }
}

/// Records in the audit log that the plan's guards refused the approved run; the stop names
/// the first guard that blocks and why.
fn refuse(
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

/// A usage error when an `--ack` is not one the plan's guards ask for: a mistyped
/// acknowledgement is named as such, not taken for a missing one.
fn unknown_acks(guards: &[Guard], acks: &[String]) -> Result<(), Stop> {
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

/// The gate of one command run: its dispatcher, where its journals are and the flags it was
/// given. [`CommandGate::pass`] is the one plan-and-approve sequence of every mutating command;
/// its runs go through the one runner.
pub(super) struct CommandGate<'a> {
    pub dispatcher: Dispatcher,
    pub paths: &'a Paths,
    pub flags: &'a GateArgs,
    /// The stdout of `--yes` is stamped progress lines only (a rollout's): its plan table is
    /// printed there only when a guard refuses it.
    pub progress_only: bool,
}

impl<'a> CommandGate<'a> {
    pub fn new(global: &GlobalArgs, paths: &'a Paths, flags: &'a GateArgs) -> CommandGate<'a> {
        CommandGate {
            dispatcher: Dispatcher::new(global.readonly, AuditLog::new(paths.audit_log())),
            paths,
            flags,
            progress_only: false,
        }
    }

    /// The plan (the command's part of its report), the action it asks the dispatcher for and
    /// its guards, through the gate (`check_mode` has made sure of `--plan`, or `--yes` with
    /// `--confirm`). An `--ack` no guard asks for is a usage error. `--plan` prints the report
    /// and ends the command: a stop with exit 0 and nothing more to say, or exit 1 when a guard
    /// blocks. `--yes`: the interrupted actions of
    /// earlier runs said, the dispatcher's approval asked (read-only refusal, typed name,
    /// audit), the plan printed for a table (unless `progress_only`), and a refusal (audited) when a guard blocks.
    pub fn pass<P: PlanText>(
        &self,
        plan: P,
        action: MutatingAction,
        guards: &[Guard],
    ) -> Result<ApprovedAction, Stop> {
        let (acks, output) = (&self.flags.ack, self.flags.output);
        unknown_acks(guards, acks)?;
        let confirm = action.confirm_name().to_string();
        let report = PlanReport::new(plan, guards, acks);
        if self.flags.plan {
            write_stdout(&report.text(output, &confirm)?)?;
            let code = if report.blocked { EXIT_BLOCKED } else { 0 };
            return Err(Stop(code, String::new()));
        }
        let approved = self.confirm(action)?;
        if output == OutputFormat::Table && (report.blocked || !self.progress_only) {
            write_stdout(&report.text(output, &confirm)?)?;
        }
        if report.blocked {
            return Err(refuse(&self.dispatcher, &approved, guards, acks));
        }
        Ok(approved)
    }

    /// The dispatcher's approval of `action`, the interrupted actions of earlier runs said
    /// first: what [`CommandGate::pass`] asks once the plan may run, and what a resumed run
    /// (whose plan is its journal's) asks alone. Its confirmation is answered with
    /// `--confirm`: refused in read-only mode, a usage error when the typed name is not the
    /// cluster's (or the node's).
    pub fn confirm(&self, action: MutatingAction) -> Result<ApprovedAction, Stop> {
        report_interrupted(&self.dispatcher, self.paths);
        let (what, name) = (action.confirm_noun(), action.confirm_name().to_string());
        let pending = match self.dispatcher.request(action) {
            Gate::Refused(why) => return Err(Stop(EXIT_BLOCKED, why)),
            Gate::Confirm(p) => p,
        };
        let answer = match &self.flags.confirm {
            Some(typed) => Answer::Typed(typed.to_string()),
            None => Answer::Cancel,
        };
        match self.dispatcher.answer(pending, answer) {
            Verdict::Proceed(approved) => Ok(approved),
            Verdict::Cancelled(why) => Err(usage(format!(
                "{why}; --confirm must be the {what} name {name:?}"
            ))),
        }
    }

    /// Runs the approved `operation` through the one runner, cancelled by SIGINT/SIGTERM after
    /// the step under way (the gate's signal rule), saying what it leaves; `events` hears its
    /// progress. The runner keeps the journal and audits how it ended: a run a second signal
    /// ended at once is reported interrupted by its journal on the next start.
    pub fn run<O: Operation>(
        &self,
        runtime: &tokio::runtime::Runtime,
        approved: &ApprovedAction,
        operation: &mut O,
        events: Events<'_>,
    ) -> Result<String, String> {
        let (set, cancel) = CancelSignal::new();
        on_signals(runtime, move || {
            set.send_replace(true);
        });
        let runner = self.runner(approved, cancel, events);
        runtime.block_on(crate::operation::run(operation, runner))
    }

    /// Runs the approved `operation` through the one runner to its end: a signal does not
    /// cancel it (its kind's cancel rule is to run to its end).
    pub async fn run_to_its_end<O: Operation>(
        &self,
        approved: &ApprovedAction,
        operation: &mut O,
        events: Events<'_>,
    ) -> Result<String, String> {
        let runner = self.runner(approved, CancelSignal::never(), events);
        crate::operation::run(operation, runner).await
    }

    /// Runs the approved `operation` as [`CommandGate::run`] does, its progress on the one
    /// printer, and says how it ended on `subject`: its line for a table, its [`RunOutcome`]
    /// as JSON; exit 0 when it succeeded, 1 when not.
    pub fn run_to_exit<O: Operation>(
        &self,
        runtime: &tokio::runtime::Runtime,
        approved: &ApprovedAction,
        operation: &mut O,
        subject: impl serde::Serialize,
    ) -> Result<std::process::ExitCode, Stop> {
        let output = self.flags.output;
        let result = self.run(
            runtime,
            approved,
            operation,
            &progress_printer(output, None),
        );
        let succeeded = result.is_ok();
        let message = result.unwrap_or_else(|e| e);
        match output {
            OutputFormat::Table => print_line(&crate::printable::line(&message)),
            OutputFormat::Json => write_stdout(&json(&RunOutcome {
                subject,
                succeeded,
                message,
            })?)?,
        }
        Ok(exit_if(!succeeded))
    }

    fn runner<'r>(
        &'r self,
        approved: &'r ApprovedAction,
        cancel: CancelSignal,
        events: Events<'r>,
    ) -> Runner<'r> {
        Runner {
            approved,
            dispatcher: &self.dispatcher,
            state_dir: &self.paths.state_dir,
            acks: &self.flags.ack,
            cancel,
            events,
        }
    }
}

/// The signal rule of every approved headless run: the first SIGINT or SIGTERM calls `stop`,
/// which asks the run to stop after the step under way (said on stderr); a second one ends the
/// process at once (exit 130).
pub(super) fn on_signals(runtime: &tokio::runtime::Runtime, stop: impl FnOnce() + Send + 'static) {
    use tokio::signal::unix::{SignalKind, signal};
    // Listening before the run starts: from here on a signal reaches the run, not the default
    // handler.
    let _entered = runtime.enter();
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    runtime.spawn(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        eprintln!("taloscope: cancelling after the step under way (signal again to stop at once)");
        stop();
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        std::process::exit(130);
    });
}

/// How a run ended: the `--yes --output json` contract, its subject's fields beside
/// `succeeded` and `message`.
#[derive(serde::Serialize)]
struct RunOutcome<S> {
    #[serde(flatten)]
    subject: S,
    succeeded: bool,
    message: String,
}
