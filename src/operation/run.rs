//! The one runner of every operation: it takes the dispatcher's approval, claims the cluster's
//! action journal, and for each step re-checks the operation's guards from a fresh status,
//! records the step in the journal and the audit log, runs it bounded by its timeout and
//! forwards its lines with the step's elapsed time and timeout. A cancel is seen between
//! steps, or while a step only waits for what it asked to happen; never in the middle of a
//! call. How the run ended is written to the journal and audited once.
use std::future::Future;
use std::path::Path;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use super::OperationKind;
use crate::approval::{ApprovedAction, Dispatcher, MutatingAction};
use crate::guards::Guard;
use crate::journal::action::{ActionRecord, RunningAction, begin_action};

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
}

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
    fn guards(&self, index: usize) -> impl Future<Output = Vec<Guard>> + Send;
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
/// and by a step while it waits.
#[derive(Debug, Clone)]
pub struct CancelSignal(watch::Receiver<bool>);

impl CancelSignal {
    /// A signal and the sender that sets it.
    pub fn new() -> (watch::Sender<bool>, CancelSignal) {
        let (tx, rx) = watch::channel(false);
        (tx, CancelSignal(rx))
    }

    /// A signal nobody sets: its sender is gone, so it stays unset and waiting on it waits
    /// for ever.
    pub fn never() -> CancelSignal {
        CancelSignal::new().1
    }

    pub fn is_set(&self) -> bool {
        *self.0.borrow()
    }

    /// Waits until it is set (for ever when its sender is gone unset).
    async fn wait(&mut self) {
        if self.0.wait_for(|set| *set).await.is_err() {
            std::future::pending::<()>().await;
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
    journal: &'a RunningAction,
    events: Events<'a>,
    cancel: CancelSignal,
}

impl StepContext<'_> {
    /// Reports a line of the step: into the journal as its last step, and as an event.
    pub fn say(&self, text: impl Into<String>) {
        let text = text.into();
        self.journal.record(|r| r.step = text.clone());
        (self.events)(OperationEvent::Line {
            index: self.index,
            total: self.total,
            elapsed: self.began.elapsed(),
            timeout: self.timeout,
            text,
        });
    }

    /// Records, before the cordon, that the run may leave `node` cordoned; `None` once it
    /// does not (uncordoned, or drained on purpose).
    pub fn left_cordoned(&self, node: Option<&str>) {
        self.journal
            .record(|r| r.left_cordoned = node.map(str::to_string));
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
/// leaves).
pub async fn run<O: Operation>(operation: &mut O, runner: Runner<'_>) -> Result<String, String> {
    let action = operation.action();
    let result = match runner.approved.check_for(&action) {
        Err(e) => Err(e),
        Ok(()) => {
            match begin_action(
                runner.state_dir,
                action.cluster(),
                &action.describe(),
                operation.node(),
            ) {
                Err(e) => Err(e.to_string()),
                Ok(journal) => {
                    let journal = RunningAction::new(journal);
                    let result = steps(operation, &runner, &journal).await;
                    if let Some(text) = operation.release().await {
                        journal.record(|r| r.step = text.clone());
                        (runner.events)(OperationEvent::Note { text });
                    }
                    journal.end(&result);
                    result
                }
            }
        }
    };
    if let Err(e) = runner
        .dispatcher
        .finished(runner.approved, result.clone().map(|_| ()))
    {
        tracing::warn!("{e}");
    }
    result
}

async fn steps<O: Operation>(
    operation: &mut O,
    runner: &Runner<'_>,
    journal: &RunningAction,
) -> Result<String, String> {
    let audit = |outcome: String| {
        if let Err(e) = runner.dispatcher.progressed(runner.approved, &outcome) {
            tracing::warn!("{e}");
        }
    };
    audit("started".into());
    let plan = operation.steps();
    let total = plan.len();
    let mut done: Vec<String> = Vec::new();
    let cordons = operation.cordons();
    let leaves = || leaves(cordons, &journal.snapshot());
    for (index, step) in plan.iter().enumerate() {
        if runner.cancel.is_set() {
            return Err(format!(
                "cancelled before step {} of {total} ({}); {}{}",
                index + 1,
                step.what,
                ran(&plan, index, &done),
                leaves()
            ));
        }
        let guards = operation.guards(index).await;
        if let Some(guard) = guards.iter().find(|g| g.blocks(runner.acks)) {
            return Err(format!(
                "refused before step {} of {total} ({}): guard \"{}\" blocks: {}; {}{}",
                index + 1,
                step.what,
                guard.id.title(),
                guard.reason,
                ran(&plan, index, &done),
                leaves()
            ));
        }
        audit(format!("step {} of {total}: {}", index + 1, step.what));
        journal.record(|r| r.step = step.what.clone());
        (runner.events)(OperationEvent::Step {
            index,
            total,
            what: step.what.clone(),
            timeout: step.timeout,
        });
        let context = StepContext {
            index,
            total,
            began: Instant::now(),
            timeout: step.timeout,
            journal,
            events: runner.events,
            cancel: runner.cancel.clone(),
        };
        let outcome = tokio::time::timeout(step.timeout, operation.run_step(index, &context)).await;
        match outcome {
            Err(_) => {
                return Err(format!(
                    "{}: not done after {} (the step's timeout){}{}",
                    step.what,
                    crate::clock::short_duration(step.timeout.as_secs()),
                    operation.stopped_at(index),
                    leaves()
                ));
            }
            Ok(Err(StepError::CancelledWhileWaiting(what))) => {
                return Err(format!(
                    "cancelled while waiting for {what}{}{}",
                    operation.stopped_at(index),
                    leaves()
                ));
            }
            Ok(Err(StepError::Failed(why))) => return Err(why),
            Ok(Ok(said)) => {
                journal.record(|r| r.step = said.clone());
                (runner.events)(OperationEvent::Line {
                    index,
                    total,
                    elapsed: context.began.elapsed(),
                    timeout: step.timeout,
                    text: format!("[{}/{total}] {said}", index + 1),
                });
                done.push(said);
            }
        }
    }
    Ok(operation.finished(&done))
}

/// "done: …; not run: …" of a run stopped before step `next`.
fn ran(plan: &[Step], next: usize, done: &[String]) -> String {
    let done = if done.is_empty() {
        "none: nothing was changed".to_string()
    } else {
        done.join("; ")
    };
    let not_run: Vec<&str> = plan[next..].iter().map(|s| s.what.as_str()).collect();
    format!("done: {done}; not run: {}", not_run.join(", "))
}

/// What a run that stops now leaves, for its end's message.
fn leaves(cordons: bool, record: &ActionRecord) -> String {
    match &record.left_cordoned {
        Some(node) => {
            format!("; {node} stays cordoned (uncordon it from the action menu when it is back)")
        }
        None if cordons => "; no node was left cordoned".to_string(),
        None => String::new(),
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
