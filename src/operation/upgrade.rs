//! The Talos OS, Kubernetes and CAPI-way upgrades as operations of the one pipeline: a kind's
//! rollout (`upgrade::runner`) run by [`run`], with its rollout journal as the operation's typed
//! journal (written on every change, resumed from after a restart), its steps in the kind's
//! batches, its pause a hold and its abort a cancel between steps, the cluster's rollout Lease
//! renewed by the runner, and its progress told as rollout events.
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::watch;

use super::{
    CancelSignal, DETACHED, HeldLease, Operation, OperationEvent, OperationKind, Runner, Step,
    StepContext, StepError, StepStart, run,
};
use crate::approval::{ApprovedAction, Dispatcher, MutatingAction};
use crate::clock::unix_now;
use crate::discovery::Cluster;
use crate::journal::ROLLOUTS;
use crate::rollout::journal::RolloutJournal;
use crate::rollout::{
    RolloutControl, RolloutEvent, RolloutHandle, RolloutKind, RolloutOutcome, StepPhase,
    StepProgress, StepReport, StepUpdate,
};
use crate::run_holder::RunHolder;
use crate::upgrade::kubernetes::Kubernetes;
use crate::upgrade::launch::{
    NewJournal, claim_on_disk, connect, journal_plan, new_journal, take_lease,
};
use crate::upgrade::runner::{KindStep, steps_match};
use crate::upgrade::{KindRollout, RunOptions, TalosOs, UpgradeKind};

/// A confirmed upgrade of kind `K`, ready to run. `options.node_timeout` is the per-step timeout.
pub struct UpgradeRun<K: UpgradeKind> {
    pub approved: ApprovedAction,
    /// Audits the run's start, each step and its end.
    pub dispatcher: Dispatcher,
    pub plan: K::Plan,
    /// Typed acknowledgements (e.g. [`crate::upgrade::SINGLE_CONTROL_PLANE_ACK`]).
    pub acks: Vec<String>,
    pub cluster: Cluster,
    pub options: RunOptions,
}

/// A confirmed Talos OS upgrade, ready to run.
pub type TalosUpgradeRun = UpgradeRun<TalosOs>;
/// A confirmed Kubernetes upgrade, ready to run.
pub type KubernetesUpgradeRun = UpgradeRun<Kubernetes>;

pub use self::spawn_upgrade as spawn_kubernetes_upgrade;
pub use self::spawn_upgrade as spawn_talos_upgrade;

/// Starts a new upgrade on the current tokio runtime. Refusals (a plan guard fails, another
/// rollout holds the cluster, the approval does not match) arrive as `Finished { Halted }`
/// before any node is touched.
pub fn spawn_upgrade<K: UpgradeKind>(
    run: UpgradeRun<K>,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutHandle {
    let journal = new_journal(NewJournal {
        kind: K::ROLLOUT,
        cluster: K::cluster(&run.plan),
        target: K::target_text(&run.plan),
        acks: &run.acks,
        plan: &run.plan,
        options: &run.options,
        steps: K::initial_steps(&run.plan),
    });
    let start = Start::<K> {
        journal,
        plan: Ok(run.plan),
        approved: run.approved,
        dispatcher: run.dispatcher,
        cluster: run.cluster,
        options: run.options,
        resumed: false,
    };
    spawn(start, events)
}

/// The resume entry point of one kind, as its own name ([`resume_upgrade_with`] of that kind).
pub type ResumeUpgrade = fn(
    RolloutJournal,
    ApprovedAction,
    Dispatcher,
    Cluster,
    RunOptions,
    UnboundedSender<RolloutEvent>,
) -> RolloutHandle;

/// Resumes a Talos OS upgrade a killed console left in its journal.
#[allow(non_upper_case_globals)]
pub const resume_talos_upgrade_with: ResumeUpgrade = resume_upgrade_with::<TalosOs>;
/// Resumes a Kubernetes upgrade a killed console left in its journal.
#[allow(non_upper_case_globals)]
pub const resume_kubernetes_upgrade_with: ResumeUpgrade = resume_upgrade_with::<Kubernetes>;

/// Resumes a rollout a killed console left in its journal: the steps it left in progress
/// settled, then from the first unfinished step after the guards pass again. The caller
/// passes the options: `RunOptions::from_journal` gives the journal's timings; the state dir,
/// kubeconfig and client timeouts are the caller's.
pub fn resume_upgrade_with<K: UpgradeKind>(
    journal: RolloutJournal,
    approved: ApprovedAction,
    dispatcher: Dispatcher,
    cluster: Cluster,
    options: RunOptions,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutHandle {
    let plan = journal_plan::<K::Plan>(&journal, K::ROLLOUT)
        .and_then(|plan| steps_match::<K>(&journal, &plan).map(|()| plan));
    let start = Start::<K> {
        journal,
        plan,
        approved,
        dispatcher,
        cluster,
        options,
        resumed: true,
    };
    spawn(start, events)
}

/// Resumes the rollout a run that did not end left in `cluster`'s journal under `state_dir`,
/// of the kind the journal names, with the journal's own timings: the console's resume
/// (`taloscope upgrade` resumes with its flags' options through [`resume_upgrade_with`]).
pub fn resume_from_journal(
    state_dir: &Path,
    cluster: Cluster,
    (approved, dispatcher): (ApprovedAction, Dispatcher),
    events: UnboundedSender<RolloutEvent>,
) -> Result<RolloutHandle, String> {
    let name = &cluster.name;
    let journal = RolloutJournal::load_unfinished(state_dir, name)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            let dir = state_dir.display();
            format!("no unfinished rollout journal of {name} under {dir}")
        })?;
    let options = RunOptions {
        state_dir: Some(state_dir.to_path_buf()),
        ..RunOptions::from_journal(&journal.options)
    };
    let resume = match journal.kind {
        RolloutKind::TalosUpgrade => resume_talos_upgrade_with,
        RolloutKind::KubernetesUpgrade => resume_kubernetes_upgrade_with,
    };
    Ok(resume(
        journal, approved, dispatcher, cluster, options, events,
    ))
}

/// A run about to start: its journal (new, or read back to resume) and its plan, or why there
/// is none.
struct Start<K: UpgradeKind> {
    journal: RolloutJournal,
    plan: Result<K::Plan, String>,
    approved: ApprovedAction,
    dispatcher: Dispatcher,
    cluster: Cluster,
    options: RunOptions,
    resumed: bool,
}

fn spawn<K: UpgradeKind>(start: Start<K>, events: UnboundedSender<RolloutEvent>) -> RolloutHandle {
    let (control, control_rx) = unbounded_channel();
    let task = tokio::spawn(launch(start, control_rx, events));
    RolloutHandle { control, task }
}

/// Checks the approval and the cluster's journal, connects, takes the rollout Lease and runs
/// the operation; every refusal before the first step is audited and told as `Started` then
/// `Finished { Halted }`.
async fn launch<K: UpgradeKind>(
    start: Start<K>,
    control: UnboundedReceiver<RolloutControl>,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutOutcome {
    let Start {
        mut journal,
        plan,
        approved,
        dispatcher,
        cluster,
        options,
        resumed,
    } = start;
    let refuse = |journal: &RolloutJournal, reason: String| {
        if let Err(e) = dispatcher.finished(&approved, Err(reason.clone())) {
            tracing::warn!("{e}");
        }
        let _ = events.send(RolloutEvent::Started(journal.summary()));
        let outcome = RolloutOutcome::Halted(reason);
        let _ = events.send(RolloutEvent::Finished {
            cluster: journal.cluster.clone(),
            outcome: outcome.clone(),
        });
        outcome
    };
    let checked = plan.and_then(|plan| check_approval::<K>(&approved, &plan).map(|()| plan));
    let plan = match checked {
        Ok(plan) => plan,
        Err(reason) => return refuse(&journal, reason),
    };
    let dir = match options.journal_dir() {
        Ok(dir) => dir,
        Err(reason) => return refuse(&journal, reason),
    };
    let path = ROLLOUTS.path_for(&dir, &journal.cluster);
    let displaces = match claim_on_disk(&path, &options) {
        Ok(displaces) => displaces,
        Err(reason) => return refuse(&journal, reason),
    };
    let observer = match connect(&cluster, &options).await {
        Ok(observer) if K::NEEDS_KUBE && observer.kube.is_none() => {
            let reason = format!(
                "cluster {} has no kube context; the Kubernetes upgrade needs the Kubernetes API",
                cluster.name
            );
            return refuse(&journal, reason);
        }
        Ok(observer) => observer,
        Err(reason) => return refuse(&journal, reason),
    };
    let lock = match take_lease(&observer, &journal, displaces.as_deref(), &options).await {
        Ok(lock) => lock,
        Err(reason) => return refuse(&journal, reason),
    };
    // From here on the rollout is this run's, also in its journal.
    journal.holder = RunHolder::this_process().to_string();
    let acks = journal.acks.clone();
    let lease = lock.map(|lock| HeldLease {
        lock,
        renew_every: options.lease_duration / 3,
    });
    let rollout = KindRollout::<K> {
        acks: acks.clone(),
        plan,
        observer,
        options,
    };
    // The approval was checked against the plan: the runner checks it names this action.
    let action = approved.action().clone();
    let mut operation =
        UpgradeOperation::new(rollout, journal, path, events, resumed, lease, action);
    operation
        .record
        .emit(RolloutEvent::Started(operation.record.journal.summary()));
    let (cancel, hold, signal) = CancelSignal::holdable();
    hold.send_replace(operation.record.journal.paused);
    let log = operation.record.logger();
    let sink = {
        let log = log.clone();
        move |event: OperationEvent| {
            if let OperationEvent::Note { text } = event {
                log(text);
            }
        }
    };
    let runner = Runner {
        approved: &approved,
        dispatcher: &dispatcher,
        state_dir: &dir,
        acks: &acks,
        cancel: signal,
        events: &sink,
    };
    // The controls are taken while the run lasts, and no longer: the events' channel closes
    // with the run.
    let result = {
        let mut running = std::pin::pin!(run(&mut operation, runner));
        let mut controls = std::pin::pin!(forward_controls(control, cancel, hold, log));
        let mut controls_gone = false;
        loop {
            tokio::select! {
                result = &mut running => break result,
                () = &mut controls, if !controls_gone => controls_gone = true,
            }
        }
    };
    operation.finish(result)
}

/// The operator's pause, resume and abort as the run's hold and cancel, until the controls go
/// away (a held run is then detached: its journal keeps it for a resume).
async fn forward_controls(
    mut control: UnboundedReceiver<RolloutControl>,
    cancel: watch::Sender<bool>,
    hold: watch::Sender<bool>,
    log: impl Fn(String),
) {
    while let Some(msg) = control.recv().await {
        match msg {
            RolloutControl::Pause => {
                hold.send_replace(true);
            }
            RolloutControl::Resume => {
                hold.send_replace(false);
            }
            RolloutControl::Abort => {
                if !cancel.send_replace(true) {
                    log("abort asked: stopping before the next node".to_string());
                }
            }
        }
    }
}

fn check_approval<K: UpgradeKind>(approved: &ApprovedAction, plan: &K::Plan) -> Result<(), String> {
    let action = approved.action();
    if K::approves(action, plan) {
        return Ok(());
    }
    Err(format!(
        "the confirmed action ({} in {}) is not this upgrade ({} {} in {})",
        action.describe(),
        action.cluster(),
        K::PRODUCT,
        K::target_text(plan),
        K::cluster(plan)
    ))
}

/// The rollout's journal as the run keeps it: written on every change, each change told as
/// an event.
struct Record {
    journal: RolloutJournal,
    path: PathBuf,
    events: UnboundedSender<RolloutEvent>,
    /// Why the journal could not be written: the run stops before its next step.
    broken: Option<String>,
}

impl Record {
    fn emit(&self, event: RolloutEvent) {
        let _ = self.events.send(event);
    }

    /// A line for the event log tail, from anywhere in the run.
    fn logger(&self) -> impl Fn(String) + Clone + Send + Sync + 'static {
        let events = self.events.clone();
        let cluster = self.journal.cluster.clone();
        move |line| {
            let _ = events.send(RolloutEvent::Log {
                cluster: cluster.clone(),
                line,
                unix: unix_now(),
            });
        }
    }

    fn log(&self, line: String) {
        (self.logger())(line)
    }

    fn save(&mut self) {
        self.journal.updated_unix = unix_now();
        if let Err(e) = self.journal.save(&self.path) {
            self.log(format!("cannot keep the journal: {e}"));
            self.broken.get_or_insert(e.to_string());
        }
    }

    fn node(&self, index: usize) -> String {
        self.journal
            .steps
            .get(index)
            .map(|s| s.node.clone())
            .unwrap_or_else(|| format!("step {}", index + 1))
    }

    /// Changes step `index`, journals it and tells it; the phase it moved into, if it moved.
    fn update_step(
        &mut self,
        index: usize,
        change: impl FnOnce(&mut StepProgress),
    ) -> Option<StepPhase> {
        let step = self.journal.steps.get_mut(index)?;
        let before = step.phase;
        change(step);
        if step.phase != StepPhase::Pending && step.started_unix.is_none() {
            step.started_unix = Some(unix_now());
        }
        if step.phase.is_final() && step.finished_unix.is_none() {
            step.finished_unix = Some(unix_now());
        }
        let progress = step.clone();
        self.save();
        self.emit(RolloutEvent::Step {
            cluster: self.journal.cluster.clone(),
            index,
            progress: progress.clone(),
        });
        (progress.phase != before).then_some(progress.phase)
    }

    /// Folds a running step's update in; a phase it moved into is told to its `step`.
    fn apply(&mut self, index: usize, update: StepUpdate, step: Option<&StepContext<'_>>) {
        let Some(current) = self.journal.steps.get(index) else {
            return;
        };
        let moved = match update {
            StepUpdate::Phase(phase, detail) => {
                if current.phase == phase && current.detail == detail {
                    return;
                }
                self.update_step(index, |s| {
                    s.phase = phase;
                    s.detail = detail;
                })
            }
            StepUpdate::Detail(detail) => {
                if current.detail == detail {
                    return;
                }
                self.update_step(index, |s| s.detail = detail)
            }
            StepUpdate::Log(line) => {
                self.log(line);
                None
            }
        };
        if let (Some(phase), Some(step)) = (moved, step) {
            step.phase(phase.as_str());
        }
    }

    /// Marks step `index` done, or failed with why; a failure names the node.
    fn ended(
        &mut self,
        index: usize,
        result: Result<(), StepError>,
        timeout: Duration,
    ) -> Result<String, StepError> {
        let reason = match result {
            Ok(()) => {
                self.update_step(index, |s| {
                    s.phase = StepPhase::Done;
                    s.detail.clear();
                });
                let step = &self.journal.steps[index];
                return Ok(format!("{}: {}: done", step.node, step.label));
            }
            Err(StepError::TimedOut) => format!(
                "timed out after {}; the rollout stops here and nothing else is touched",
                humanize(timeout)
            ),
            Err(StepError::Failed(why) | StepError::CancelledWhileWaiting(why)) => why,
        };
        self.failed(index, reason)
    }

    fn failed(&mut self, index: usize, reason: String) -> Result<String, StepError> {
        let error = reason.clone();
        self.update_step(index, |s| {
            s.phase = StepPhase::Failed;
            s.error = Some(error);
        });
        Err(StepError::Failed(format!("{}: {reason}", self.node(index))))
    }
}

/// An upgrade rollout of kind `K` as an operation.
pub struct UpgradeOperation<K: UpgradeKind> {
    rollout: KindRollout<K>,
    record: Record,
    action: MutatingAction,
    /// Where each step stands as the run begins.
    starts: Vec<StepStart>,
    /// Taken by the runner as the run begins.
    lease: Mutex<Option<HeldLease>>,
    /// The plan's guards passed (once, before the first step this run takes).
    plan_checked: AtomicBool,
    /// Why the guards halted the run, in the rollout's words.
    halted: Mutex<Option<String>>,
}

impl<K: UpgradeKind> UpgradeOperation<K> {
    fn new(
        rollout: KindRollout<K>,
        journal: RolloutJournal,
        path: PathBuf,
        events: UnboundedSender<RolloutEvent>,
        resumed: bool,
        lease: Option<HeldLease>,
        action: MutatingAction,
    ) -> UpgradeOperation<K> {
        let starts = starts(&journal, &K::batches(&rollout.plan), resumed);
        UpgradeOperation {
            rollout,
            record: Record {
                journal,
                path,
                events,
                broken: None,
            },
            action,
            starts,
            lease: Mutex::new(lease),
            plan_checked: AtomicBool::new(false),
            halted: Mutex::new(None),
        }
    }

    /// How the rollout ended, kept in its journal and told; a detached run ends nothing.
    fn finish(mut self, result: Result<String, String>) -> RolloutOutcome {
        let outcome = match result {
            Ok(_) => RolloutOutcome::Completed,
            Err(e) if e.starts_with(DETACHED) => {
                let reason = "the console went away while the rollout was paused; its journal \
                              keeps it for a resume";
                self.record.log(reason.to_string());
                return RolloutOutcome::Halted(reason.to_string());
            }
            Err(e) if e.starts_with("cancelled") => RolloutOutcome::Aborted,
            Err(e) => {
                let halted = self.halted.get_mut().ok().and_then(Option::take);
                RolloutOutcome::Halted(halted.unwrap_or(e))
            }
        };
        self.record.journal.outcome = Some(outcome.clone());
        if Path::new(&self.record.path).exists() {
            self.record.save();
        }
        self.record.emit(RolloutEvent::Finished {
            cluster: self.record.journal.cluster.clone(),
            outcome: outcome.clone(),
        });
        outcome
    }

    fn halt(&self, reason: String) {
        if let Ok(mut halted) = self.halted.lock() {
            *halted = Some(reason);
        }
    }
}

/// Where each step stands as a run begins: final steps are done; a step a killed run left
/// started is settled, and on a resume so are the pending steps of the next batch (it may have
/// been started before the journal said so).
fn starts(journal: &RolloutJournal, batches: &[Vec<usize>], resumed: bool) -> Vec<StepStart> {
    let steps = &journal.steps;
    let mut starts: Vec<StepStart> = steps
        .iter()
        .map(|s| match s.phase {
            StepPhase::Pending => StepStart::ToRun,
            phase if phase.is_final() => StepStart::Done,
            _ => StepStart::Unsettled,
        })
        .collect();
    if resumed {
        let next = batches.iter().find(|batch| {
            batch
                .iter()
                .any(|&i| steps.get(i).is_some_and(|s| !s.phase.is_final()))
        });
        for &i in next.into_iter().flatten() {
            if let Some(start) = starts.get_mut(i).filter(|s| **s == StepStart::ToRun) {
                *start = StepStart::Unsettled;
            }
        }
    }
    starts
}

impl<K: UpgradeKind> Operation for UpgradeOperation<K> {
    fn kind(&self) -> OperationKind {
        OperationKind::of(&self.action)
    }

    fn action(&self) -> MutatingAction {
        self.action.clone()
    }

    fn steps(&self) -> Vec<Step> {
        self.record
            .journal
            .steps
            .iter()
            .map(|s| Step {
                what: format!("{}: {}", s.node, s.label),
                timeout: self.rollout.options.node_timeout,
            })
            .collect()
    }

    fn batches(&self) -> Vec<Vec<usize>> {
        K::batches(&self.rollout.plan)
    }

    fn subject(&self, index: usize) -> String {
        self.record.node(index)
    }

    fn start_of(&self, index: usize) -> StepStart {
        self.starts.get(index).copied().unwrap_or(StepStart::Done)
    }

    fn own_journal(&self) -> bool {
        true
    }

    fn lease(&mut self) -> Option<HeldLease> {
        self.lease.get_mut().ok().and_then(Option::take)
    }

    /// The plan's guards once, before the first step this run takes (after the steps a killed
    /// run left were settled), then the step's guards over live status.
    async fn check_before(&self, index: usize, _acks: &[String]) -> Result<(), String> {
        if let Some(e) = &self.record.broken {
            return Err(format!("cannot keep the journal: {e}"));
        }
        if !self.plan_checked.swap(true, Ordering::SeqCst)
            && let Err(reason) = K::preflight(&self.rollout).await
        {
            self.halt(reason.clone());
            return Err(reason);
        }
        if let Err(reason) = K::check_before(&self.rollout, index).await {
            let halted = format!("before {}: {reason}", self.record.node(index));
            self.record.log(format!("halted {halted}"));
            self.halt(halted);
            return Err(reason);
        }
        Ok(())
    }

    async fn run_step(
        &mut self,
        _index: usize,
        step: &StepContext<'_>,
    ) -> Result<String, StepError> {
        let mut results = self.run_batch(std::slice::from_ref(step)).await;
        results
            .pop()
            .unwrap_or_else(|| Err(StepError::Failed("the step did not run".into())))
    }

    /// The batch's steps at once, each within the step timeout, their updates folded into the
    /// journal as they come.
    async fn run_batch(&mut self, steps: &[StepContext<'_>]) -> Vec<Result<String, StepError>> {
        let timeout = self.rollout.options.node_timeout;
        let UpgradeOperation {
            rollout, record, ..
        } = self;
        // The journal is first written once the guards passed.
        record.save();
        let rollout = &*rollout;
        let (tx, mut updates) = unbounded_channel();
        let mut running: FuturesUnordered<_> = steps
            .iter()
            .map(|step| {
                let index = step.index();
                let report = StepReport::new(index, &record.node(index), tx.clone());
                async move {
                    let work = async {
                        let live = K::step(rollout, index).map_err(StepError::Failed)?;
                        live.run(&report).await.map_err(StepError::Failed)
                    };
                    (index, step.bounded(work).await)
                }
            })
            .collect();
        drop(tx);
        let context = |index: usize| steps.iter().find(|s| s.index() == index);
        let mut ended: Vec<(usize, Result<String, StepError>)> = Vec::new();
        while !running.is_empty() {
            tokio::select! {
                Some((index, result)) = running.next() => {
                    while let Ok((i, update)) = updates.try_recv() {
                        record.apply(i, update, context(i));
                    }
                    ended.push((index, record.ended(index, result, timeout)));
                }
                Some((index, update)) = updates.recv() => {
                    record.apply(index, update, context(index));
                }
            }
        }
        steps
            .iter()
            .map(|step| {
                let at = ended.iter().position(|(i, _)| *i == step.index());
                match at {
                    Some(at) => ended.swap_remove(at).1,
                    None => Err(StepError::Failed(format!(
                        "{}: the step did not end",
                        record.node(step.index())
                    ))),
                }
            })
            .collect()
    }

    /// Waits, within the step timeout, until the node of a step a killed run left settles.
    async fn settle(&mut self, index: usize, step: &StepContext<'_>) -> Result<bool, StepError> {
        let timeout = self.rollout.options.node_timeout;
        let node = self.record.node(index);
        self.record.log(format!(
            "{node}: was in progress when the last run stopped; waiting for it to settle"
        ));
        let rollout = &self.rollout;
        let settled = step
            .bounded(async {
                let live = K::step(rollout, index).map_err(StepError::Failed)?;
                live.settle().await.map_err(StepError::Failed)
            })
            .await;
        match settled {
            Ok(true) => {
                self.record.update_step(index, |s| {
                    s.phase = StepPhase::Done;
                    s.detail = "finished while the console was away".into();
                });
                Ok(true)
            }
            Ok(false) => {
                self.record.update_step(index, |s| {
                    s.phase = StepPhase::Pending;
                    s.detail.clear();
                    s.started_unix = None;
                });
                Ok(false)
            }
            Err(StepError::TimedOut) => {
                let reason = format!("did not settle within {timeout:?}");
                self.record.failed(index, reason).map(|_| false)
            }
            Err(StepError::Failed(why) | StepError::CancelledWhileWaiting(why)) => {
                self.record.failed(index, why).map(|_| false)
            }
        }
    }

    fn on_hold(&mut self, _index: usize, held: bool) {
        self.record.journal.paused = held;
        self.record.save();
        let cluster = self.record.journal.cluster.clone();
        self.record.emit(if held {
            RolloutEvent::Paused { cluster }
        } else {
            RolloutEvent::Resumed { cluster }
        });
    }
}

/// "15m", "90s", "1h30m".
fn humanize(d: Duration) -> String {
    let secs = d.as_secs();
    match (secs / 3600, (secs % 3600) / 60, secs % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, 0, 0) => format!("{h}h"),
        (h, m, _) => format!("{h}h{m}m"),
    }
}

#[cfg(test)]
#[path = "upgrade_tests.rs"]
mod tests;
