//! The one runner of every operation: it takes the dispatcher's approval, claims the cluster's
//! action journal (or lets the operation keep its own typed one), settles the steps a killed
//! run left in progress, and for each batch of steps re-checks the operation's guards from a
//! fresh status, records the steps in the journal and the audit log, runs them bounded by
//! their timeout and forwards their lines with the step's elapsed time and timeout. A cancel
//! is seen between steps, or while a step only waits for what it asked to happen; never in
//! the middle of a call; a hold (the operator's pause) waits between steps until released.
//! A Lease the run holds is renewed on every step change and periodically. How the run ended
//! is written to the journal and audited once.
use std::future::Future;
use std::path::Path;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::OperationKind;
use crate::approval::{ApprovedAction, Dispatcher, MutatingAction};
use crate::guards::Guard;
use crate::journal::action::{InterruptedAction, RunningAction, begin_action, interrupted_actions};
use crate::rollout::RolloutLock;

/// One step of an operation, as its plan names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The step in the operator's words ("cp-2: reboot", "cp-3: defragment").
    pub what: String,
    /// The most it may take; the run fails when it is not done by then.
    pub timeout: Duration,
}

/// Why a step did not finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepError {
    /// A call failed, or what the step waited for went wrong.
    Failed(String),
    /// The operator cancelled while the step waited for `what` (the step's call was done).
    CancelledWhileWaiting(String),
    /// The step was not done within its timeout ([`StepContext::bounded`]).
    TimedOut,
}

/// Where a step stands as a run begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepStart {
    /// It runs.
    ToRun,
    /// Nothing to do: the plan skips it, or the run this one resumes finished it.
    Done,
    /// A killed run may have started it: it is settled ([`Operation::settle`]) before anything
    /// runs, and runs only when that says it is not done.
    Unsettled,
}

/// A Lease the run holds: renewed by the runner on every step change and every
/// `renew_every`, given back when the run ends.
pub struct HeldLease {
    pub lock: Box<dyn RolloutLock>,
    pub renew_every: Duration,
}

/// How a run that was held ends when its controls go away (the console quit while it was
/// paused): it did not end, so neither its journal nor the audit log says it did; the
/// message starts with this.
pub const DETACHED: &str = "detached";

impl From<String> for StepError {
    fn from(why: String) -> StepError {
        StepError::Failed(why)
    }
}

/// An operation the runner carries out: its subject, its steps, the guards it re-checks
/// before each step (from a fresh status: an operation reads what it needs itself), and how
/// each step is carried out and observed. Its plan and acknowledgements are what the
/// dispatcher approved ([`Operation::action`]) and the guards ask for (`Guard::needs_ack`).
pub trait Operation: Send {
    fn kind(&self) -> OperationKind;
    /// What the approval must be for: the runner refuses any other.
    fn action(&self) -> MutatingAction;
    /// The node the operation is about, when it is about one (kept in the journal).
    fn node(&self) -> Option<&str> {
        None
    }
    /// Whether a step may cordon a Kubernetes node (its end then says whether one is left so).
    fn cordons(&self) -> bool {
        false
    }
    fn steps(&self) -> Vec<Step>;
    /// The guards to pass before step `index`, evaluated now; none for a step that only
    /// restores what this run changed (refusing it would leave the change behind).
    /// (An operation that checks its steps otherwise overrides [`Operation::check_before`].)
    fn guards(&self, _index: usize) -> impl Future<Output = Vec<Guard>> + Send {
        async { Vec::new() }
    }
    /// Carries out step `index` and observes it until it is done: the line it ends with.
    fn run_step(
        &mut self,
        index: usize,
        step: &StepContext<'_>,
    ) -> impl Future<Output = Result<String, StepError>> + Send;
    /// What the run leaves when step `index` stops unfinished (timed out or cancelled while it
    /// waits), beyond a node left cordoned: "; …", or nothing.
    fn stopped_at(&self, _index: usize) -> String {
        String::new()
    }
    /// Gives back what the run holds (a Lease), whatever its outcome: a line when that
    /// failed.
    fn release(&mut self) -> impl Future<Output = Option<String>> + Send {
        async { None }
    }
    /// The run's line once every step is done (`done`: each step's line).
    fn finished(&self, done: &[String]) -> String {
        done.last()
            .cloned()
            .unwrap_or_else(|| "nothing to do".into())
    }
    /// Whether step `index` may begin now: `Err` names what blocks it. By default the step's
    /// guards ([`Operation::guards`]), none blocking with the operator's acknowledgements.
    fn check_before(
        &self,
        index: usize,
        acks: &[String],
    ) -> impl Future<Output = Result<(), String>> + Send {
        let guards = self.guards(index);
        async move {
            match guards.await.iter().find(|g| g.blocks(acks)) {
                Some(g) => Err(format!("guard \"{}\" blocks: {}", g.id.title(), g.reason)),
                None => Ok(()),
            }
        }
    }
    /// The steps that run at once, in order; each step alone unless the operation says so.
    fn batches(&self) -> Vec<Vec<usize>> {
        (0..self.steps().len()).map(|i| vec![i]).collect()
    }
    /// What step `index` is about, as the Lease names the step in progress.
    fn subject(&self, index: usize) -> String {
        self.steps()
            .get(index)
            .map(|s| s.what.clone())
            .unwrap_or_default()
    }
    /// Where step `index` stands as the run begins (a resumed run's journal says).
    fn start_of(&self, _index: usize) -> StepStart {
        StepStart::ToRun
    }
    /// Waits until what a killed run started in step `index` settles: `Ok(true)` when the step
    /// is done, `Ok(false)` when it still has to run.
    fn settle(
        &mut self,
        _index: usize,
        _step: &StepContext<'_>,
    ) -> impl Future<Output = Result<bool, StepError>> + Send {
        async { Ok(false) }
    }
    /// Runs the steps of one batch, each bounded by its timeout ([`StepContext::bounded`]):
    /// one result per step, in the batch's order; fewer when the batch stopped at a failure.
    /// By default one after the other with [`Operation::run_step`].
    fn run_batch(
        &mut self,
        steps: &[StepContext<'_>],
    ) -> impl Future<Output = Vec<Result<String, StepError>>> + Send {
        async move {
            let mut results = Vec::new();
            for step in steps {
                // Boxed: a step's future can be large, and a console runs it on a worker's stack.
                let result = step
                    .bounded(Box::pin(self.run_step(step.index, step)))
                    .await;
                let failed = result.is_err();
                results.push(result);
                if failed {
                    break;
                }
            }
            results
        }
    }
    /// The Lease this run holds, taken once as the run begins.
    fn lease(&mut self) -> Option<HeldLease> {
        None
    }
    /// Whether the operation keeps a typed journal of its own on the journal module (an
    /// upgrade's rollout journal, which a later run resumes) instead of the cluster's action
    /// journal.
    fn own_journal(&self) -> bool {
        false
    }
    /// The operator's hold took effect before step `index` (`held`), or was released.
    fn on_hold(&mut self, _index: usize, _held: bool) {}
}

/// What a running operation reports, for the command line's printer and the console's
/// progress screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperationEvent {
    /// Step `index` (0-based) of `total` begins.
    Step {
        index: usize,
        total: usize,
        what: String,
        timeout: Duration,
    },
    /// A line of step `index`, `elapsed` after it began.
    Line {
        index: usize,
        total: usize,
        elapsed: Duration,
        timeout: Duration,
        text: String,
    },
    /// A line outside any step (what giving back the run's hold did).
    Note { text: String },
}

impl OperationEvent {
    /// The line in the operator's words, without its time.
    pub fn text(&self) -> String {
        match self {
            OperationEvent::Step {
                index,
                total,
                what,
                timeout,
            } => format!(
                "step {} of {total}: {what} (times out after {})",
                index + 1,
                crate::clock::short_duration(timeout.as_secs())
            ),
            OperationEvent::Line { text, .. } | OperationEvent::Note { text } => text.clone(),
        }
    }

    /// The line with the step's elapsed time and timeout in front: "[+1m05s of 15m00s] …".
    pub fn line(&self) -> String {
        match self {
            OperationEvent::Step { .. } | OperationEvent::Note { .. } => self.text(),
            OperationEvent::Line {
                elapsed,
                timeout,
                text,
                ..
            } => format!(
                "[+{} of {}] {text}",
                crate::clock::short_duration(elapsed.as_secs()),
                crate::clock::short_duration(timeout.as_secs())
            ),
        }
    }
}

/// Where a run's events go.
pub type Events<'a> = &'a (dyn Fn(OperationEvent) + Send + Sync);

/// The operator's cancel of a running operation: set once, seen by the runner between steps
/// and by a step while it waits; with its hold (a pause), the runner waits between steps
/// while the hold is set.
#[derive(Debug, Clone)]
pub struct CancelSignal {
    cancel: watch::Receiver<bool>,
    hold: Option<watch::Receiver<bool>>,
}

/// What a held run's wait between steps ended with.
enum HoldEnd {
    Released,
    Cancelled,
    /// The hold's sender went away while it was set.
    Detached,
}

impl CancelSignal {
    /// A signal and the sender that sets it.
    pub fn new() -> (watch::Sender<bool>, CancelSignal) {
        let (tx, rx) = watch::channel(false);
        (
            tx,
            CancelSignal {
                cancel: rx,
                hold: None,
            },
        )
    }

    /// A signal with a hold: the senders of the cancel and of the hold (`true` holds the run
    /// before its next step, `false` releases it).
    pub fn holdable() -> (watch::Sender<bool>, watch::Sender<bool>, CancelSignal) {
        let (cancel, mut signal) = CancelSignal::new();
        let (hold, rx) = watch::channel(false);
        signal.hold = Some(rx);
        (cancel, hold, signal)
    }

    /// A signal nobody sets: its sender is gone, so it stays unset and waiting on it waits
    /// for ever.
    pub fn never() -> CancelSignal {
        CancelSignal::new().1
    }

    pub fn is_set(&self) -> bool {
        *self.cancel.borrow()
    }

    fn is_held(&self) -> bool {
        self.hold.as_ref().is_some_and(|h| *h.borrow())
    }

    /// Waits until it is set (for ever when its sender is gone unset).
    async fn wait(&mut self) {
        if self.cancel.wait_for(|set| *set).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// Waits until the hold is released, the cancel set, or the hold's sender gone.
    async fn released(&mut self) -> HoldEnd {
        let Some(mut hold) = self.hold.clone() else {
            return HoldEnd::Released;
        };
        let mut cancel = self.clone();
        tokio::select! {
            released = hold.wait_for(|held| !*held) => match released {
                Ok(_) => HoldEnd::Released,
                Err(_) => HoldEnd::Detached,
            },
            () = cancel.wait() => HoldEnd::Cancelled,
        }
    }
}

/// What a step is given: where its lines go, the journal, the cancel it may honour while it
/// waits.
pub struct StepContext<'a> {
    index: usize,
    total: usize,
    began: Instant,
    timeout: Duration,
    journal: Option<&'a RunningAction>,
    events: Events<'a>,
    cancel: CancelSignal,
    phases: &'a mpsc::UnboundedSender<(usize, String)>,
}

impl StepContext<'_> {
    /// The step's index in the plan.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Reports a line of the step: into the journal as its last step, and as an event.
    pub fn say(&self, text: impl Into<String>) {
        let text = text.into();
        if let Some(journal) = self.journal {
            journal.record(|r| r.step = text.clone());
        }
        (self.events)(OperationEvent::Line {
            index: self.index,
            total: self.total,
            elapsed: self.began.elapsed(),
            timeout: self.timeout,
            text,
        });
    }

    /// Reports that the step entered `phase` ("rebooting"): the Lease is renewed with it.
    pub fn phase(&self, phase: &str) {
        let _ = self.phases.send((self.index, phase.to_string()));
    }

    /// Records, before the cordon, that the run may leave `node` cordoned; `None` once it
    /// does not (uncordoned, or drained on purpose).
    pub fn left_cordoned(&self, node: Option<&str>) {
        if let Some(journal) = self.journal {
            journal.record(|r| r.left_cordoned = node.map(str::to_string));
        }
    }

    /// Sleeps `interval` while the step waits for `what`, or ends the step if the operator
    /// cancels meanwhile (the step's call is done: only the wait stops).
    pub async fn wait(&self, interval: Duration, what: &str) -> Result<(), StepError> {
        let mut cancel = self.cancel.clone();
        tokio::select! {
            () = tokio::time::sleep(interval) => Ok(()),
            () = cancel.wait() => Err(StepError::CancelledWhileWaiting(what.to_string())),
        }
    }

    /// `work` bounded by what is left of the step's timeout.
    pub async fn bounded<T>(
        &self,
        work: impl Future<Output = Result<T, StepError>>,
    ) -> Result<T, StepError> {
        let left = self.timeout.saturating_sub(self.began.elapsed());
        tokio::time::timeout(left, work)
            .await
            .unwrap_or(Err(StepError::TimedOut))
    }
}

/// What a run is given besides its operation.
pub struct Runner<'a> {
    pub approved: &'a ApprovedAction,
    /// Audits the run's start, each step and its end.
    pub dispatcher: &'a Dispatcher,
    /// Where the action journal lives.
    pub state_dir: &'a Path,
    /// The acknowledgements the operator gave (`--ack`, or the plan screen's).
    pub acks: &'a [String],
    pub cancel: CancelSignal,
    pub events: Events<'a>,
}

/// Runs the approved `operation`; `Ok` says how it ended, `Err` why it did not finish (a
/// cancel included: it starts with "cancelled" and says which steps ran and what the run
/// leaves; a held run whose controls went away starts with [`DETACHED`]).
pub async fn run<O: Operation>(operation: &mut O, runner: Runner<'_>) -> Result<String, String> {
    let action = operation.action();
    let journal = match runner.approved.check_for(&action) {
        Err(e) => Err(e),
        Ok(()) if operation.own_journal() => Ok(None),
        Ok(()) => begin_action(
            runner.state_dir,
            action.cluster(),
            &action.describe(),
            operation.node(),
        )
        .map(|journal| Some(RunningAction::new(journal)))
        .map_err(|e| e.to_string()),
    };
    let result = match journal {
        Err(e) => Err(e),
        Ok(journal) => {
            let result = steps(operation, &runner, journal.as_ref()).await;
            if let Some(text) = operation.release().await {
                if let Some(journal) = &journal {
                    journal.record(|r| r.step = text.clone());
                }
                (runner.events)(OperationEvent::Note { text });
            }
            if let Some(journal) = journal.as_ref().filter(|_| !detached(&result)) {
                journal.end(&result);
            }
            result
        }
    };
    if !detached(&result)
        && let Err(e) = runner
            .dispatcher
            .finished(runner.approved, result.clone().map(|_| ()))
    {
        tracing::warn!("{e}");
    }
    result
}

fn detached(result: &Result<String, String>) -> bool {
    result.as_ref().is_err_and(|e| e.starts_with(DETACHED))
}

/// The node and etcd actions a run now gone left unfinished (their journals no live run
/// holds), each recorded in the audit log as interrupted and marked reported, so the next
/// command or console that may act on clusters tells each once; with what could not be read,
/// audited or marked, as warnings.
pub fn report_interrupted(
    dispatcher: &Dispatcher,
    state_dir: &Path,
) -> (Vec<InterruptedAction>, Vec<String>) {
    let (found, mut warnings) = interrupted_actions(state_dir);
    for interrupted in &found {
        let record = &interrupted.record;
        if let Err(e) = dispatcher.interrupted(&record.cluster, &record.action) {
            warnings.push(e.to_string());
        }
        if let Err(e) = interrupted.mark_reported() {
            warnings.push(e.to_string());
        }
    }
    (found, warnings)
}

/// What [`report_interrupted`] found, in the order the operator is told it (the command line
/// on stderr, the console on its message line): each warning (`true`), then each interrupted
/// action in its words, with what it left behind.
pub fn interrupted_told(
    found: &[InterruptedAction],
    warnings: Vec<String>,
) -> impl Iterator<Item = (bool, String)> + '_ {
    let warnings = warnings.into_iter().map(|w| (true, w));
    warnings.chain(found.iter().map(|i| (false, i.describe())))
}

#[path = "run_steps.rs"]
mod run_steps;
use run_steps::steps;

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
