//! The rollout engine, the same for the Talos OS and the Kubernetes upgrade: batches of steps
//! in order, guards re-run before every step (halt with the failing guard's reason), a timeout
//! per step, pause / resume / abort between steps (never mid-step), the journal written on every
//! change, the lease renewed on every step change and periodically, and progress as events.
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::journal::RolloutJournal;
use super::lease::{LockProgress, RenewFailure, RolloutLock};
use super::progress::{
    RolloutControl, RolloutEvent, RolloutHandle, RolloutOutcome, StepPhase, StepProgress,
    StepReport, StepUpdate,
};
use crate::clock::unix_now;

/// What a rollout kind does per step. Methods take `&self` because worker batches run several
/// steps at once.
pub trait StepExecutor: Send + Sync + 'static {
    /// Every guard of the whole rollout, once before the first step (also on resume). `Err` is
    /// the reason to refuse, naming the failing guard.
    fn preflight(&self) -> BoxFuture<'_, Result<(), String>>;
    /// The guards re-checked over live status right before step `index`. `Err` halts.
    fn check_before(&self, index: usize) -> BoxFuture<'_, Result<(), String>>;
    /// A step a killed run left in progress: wait until its node settles. `Ok(true)` when it
    /// is now done, `Ok(false)` when it still needs its step run.
    fn settle(&self, index: usize) -> BoxFuture<'_, Result<bool, String>>;
    /// Runs step `index` until done; `Err` is why it failed (verbatim from the server where it
    /// came from there).
    fn run_step(&self, index: usize, report: StepReport) -> BoxFuture<'_, Result<(), String>>;
}

/// How a rollout runs.
pub struct EngineSetup {
    /// The journal to start from (new, or loaded to resume); the engine keeps it current.
    pub journal: RolloutJournal,
    pub journal_path: PathBuf,
    /// Step indices that run together, in order. Steps not listed are not run.
    pub batches: Vec<Vec<usize>>,
    pub step_timeout: Duration,
    /// How often the lock is renewed while nothing changes.
    pub renew_every: Duration,
    pub lock: Option<Box<dyn RolloutLock>>,
    /// The journal comes from a killed run: the next batch may have been started before the
    /// journal said so, so its steps are settled first too.
    pub resumed: bool,
}

/// Starts the engine on the current tokio runtime.
pub fn spawn_rollout(
    setup: EngineSetup,
    executor: Arc<dyn StepExecutor>,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutHandle {
    let (control, control_rx) = unbounded_channel();
    let task = tokio::spawn(run_rollout(setup, executor, control_rx, events));
    RolloutHandle { control, task }
}

struct Engine {
    journal: RolloutJournal,
    path: PathBuf,
    lock: Option<Box<dyn RolloutLock>>,
    events: UnboundedSender<RolloutEvent>,
    /// A journal write failed, or the lock was lost: the rollout stops before the next step.
    stop_reason: Option<String>,
    abort: bool,
}

impl Engine {
    fn cluster(&self) -> String {
        self.journal.cluster.clone()
    }

    fn emit(&self, event: RolloutEvent) {
        let _ = self.events.send(event);
    }

    fn log(&self, line: String) {
        self.emit(RolloutEvent::Log {
            cluster: self.cluster(),
            line,
            unix: unix_now(),
        });
    }

    fn save(&mut self) {
        self.journal.updated_unix = unix_now();
        if let Err(e) = self.journal.save(&self.path) {
            self.log(format!("cannot keep the journal: {e}"));
            self.stop_reason.get_or_insert(e.to_string());
        }
    }

    /// Changes one step; emits it, journals it, and renews the lock when the phase moved.
    async fn update_step(&mut self, index: usize, change: impl FnOnce(&mut StepProgress)) {
        let Some(step) = self.journal.steps.get_mut(index) else {
            return;
        };
        let before = step.phase;
        change(step);
        if step.phase != StepPhase::Pending && step.started_unix.is_none() {
            step.started_unix = Some(unix_now());
        }
        if step.phase.is_final() && step.finished_unix.is_none() {
            step.finished_unix = Some(unix_now());
        }
        let progress = step.clone();
        // Journal and lease first: whatever was shown has been written.
        self.save();
        if progress.phase != before {
            self.renew(index).await;
        }
        self.emit(RolloutEvent::Step {
            cluster: self.cluster(),
            index,
            progress,
        });
    }

    async fn renew(&mut self, index: usize) {
        let Some(step) = self.journal.steps.get(index) else {
            return;
        };
        let progress = LockProgress {
            node_index: index + 1,
            current_node: step.node.clone(),
            phase: step.phase.as_str().to_string(),
        };
        let result = match self.lock.as_mut() {
            Some(lock) => lock.renew(&progress).await,
            None => return,
        };
        match result {
            Ok(()) => {}
            Err(RenewFailure::Failed(e)) => {
                self.log(format!("cannot renew the rollout lease: {e}"))
            }
            Err(RenewFailure::Lost(e)) => {
                self.log(e.clone());
                self.stop_reason.get_or_insert(e);
            }
        }
    }

    fn control(&mut self, msg: RolloutControl) {
        match msg {
            RolloutControl::Pause if !self.journal.paused => {
                self.journal.paused = true;
                self.emit(RolloutEvent::Paused {
                    cluster: self.cluster(),
                });
                self.save();
            }
            RolloutControl::Resume if self.journal.paused => {
                self.journal.paused = false;
                self.emit(RolloutEvent::Resumed {
                    cluster: self.cluster(),
                });
                self.save();
            }
            RolloutControl::Abort if !self.abort => {
                self.abort = true;
                self.log("abort asked: stopping before the next node".to_string());
            }
            _ => {}
        }
    }

    async fn finish(mut self, outcome: RolloutOutcome) -> RolloutOutcome {
        self.journal.outcome = Some(outcome.clone());
        if self.path.exists() {
            self.save();
        }
        if let Some(lock) = self.lock.take()
            && let Err(e) = lock.release().await
        {
            self.log(format!("cannot release the rollout lease: {e}"));
        }
        self.emit(RolloutEvent::Finished {
            cluster: self.cluster(),
            outcome: outcome.clone(),
        });
        outcome
    }

    /// Stops following the rollout without ending it: the journal stays as it is (paused,
    /// unfinished) and the lease is left to expire, so the same holder can take it back.
    fn detach(self) -> RolloutOutcome {
        let reason =
            "the console went away while the rollout was paused; its journal keeps it for a resume";
        self.log(reason.to_string());
        RolloutOutcome::Halted(reason.to_string())
    }

    fn step_name(&self, index: usize) -> String {
        self.journal
            .steps
            .get(index)
            .map(|s| s.node.clone())
            .unwrap_or_else(|| format!("step {}", index + 1))
    }
}

/// How a run ends before its last batch.
enum Ending {
    /// Aborted, or halted with a reason the journal already shows.
    Finish(RolloutOutcome),
    /// Step `index` failed for this reason: mark it, then halt.
    StepFailed(usize, String),
    /// The console went away while paused.
    Detach,
}

impl Engine {
    async fn end(self, ending: Ending) -> RolloutOutcome {
        match ending {
            Ending::Finish(outcome) => self.finish(outcome).await,
            Ending::StepFailed(index, reason) => fail_and_halt(self, index, reason).await,
            Ending::Detach => self.detach(),
        }
    }

    /// The steps of `batch` still pending.
    fn pending_in(&self, batch: &[usize]) -> Vec<usize> {
        batch
            .iter()
            .copied()
            .filter(|&i| {
                self.journal
                    .steps
                    .get(i)
                    .is_some_and(|s| s.phase == StepPhase::Pending)
            })
            .collect()
    }
}

/// Runs a rollout to its end. The journal file is first written once the preflight passed.
pub async fn run_rollout(
    setup: EngineSetup,
    executor: Arc<dyn StepExecutor>,
    control: UnboundedReceiver<RolloutControl>,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutOutcome {
    let mut engine = Engine {
        journal: setup.journal,
        path: setup.journal_path,
        lock: setup.lock,
        events,
        stop_reason: None,
        abort: false,
    };
    engine.emit(RolloutEvent::Started(engine.journal.summary()));
    let interrupted = interrupted_steps(&engine.journal, &setup.batches, setup.resumed);
    let prepared = prepare(
        &mut engine,
        executor.as_ref(),
        &interrupted,
        setup.step_timeout,
    )
    .await;
    if let Err(ending) = prepared {
        return engine.end(ending).await;
    }
    let mut renew = tokio::time::interval(setup.renew_every.max(Duration::from_millis(100)));
    renew.tick().await;
    let mut run = batches::BatchRun {
        engine,
        executor,
        control,
        renew,
        last_index: 0,
        step_timeout: setup.step_timeout,
    };
    for batch in &setup.batches {
        if let Err(ending) = run.batch(batch).await {
            return run.engine.end(ending).await;
        }
    }
    run.take_controls();
    run.engine.finish(RolloutOutcome::Completed).await
}

/// Steps a killed run left started, and on a resume the pending steps of the next batch (it
/// may have been started before the journal said so): each is settled before anything runs.
fn interrupted_steps(
    journal: &RolloutJournal,
    batches: &[Vec<usize>],
    resumed: bool,
) -> Vec<usize> {
    let steps = &journal.steps;
    let mut interrupted: Vec<usize> = (0..steps.len())
        .filter(|&i| steps[i].phase != StepPhase::Pending && !steps[i].phase.is_final())
        .collect();
    if resumed {
        let next_batch = batches.iter().find(|batch| {
            batch
                .iter()
                .any(|&i| steps.get(i).is_some_and(|s| !s.phase.is_final()))
        });
        for &i in next_batch.into_iter().flatten() {
            let pending = steps.get(i).is_some_and(|s| s.phase == StepPhase::Pending);
            if pending && !interrupted.contains(&i) {
                interrupted.push(i);
            }
        }
    }
    interrupted
}

/// Settles the interrupted steps (done, or back to pending), runs the preflight, and writes the
/// journal file for the first time.
async fn prepare(
    engine: &mut Engine,
    executor: &dyn StepExecutor,
    interrupted: &[usize],
    step_timeout: Duration,
) -> Result<(), Ending> {
    for &index in interrupted {
        let node = engine.step_name(index);
        engine.log(format!(
            "{node}: was in progress when the last run stopped; waiting for it to settle"
        ));
        match tokio::time::timeout(step_timeout, executor.settle(index)).await {
            Ok(Ok(true)) => {
                engine
                    .update_step(index, |s| {
                        s.phase = StepPhase::Done;
                        s.detail = "finished while the console was away".into();
                    })
                    .await
            }
            Ok(Ok(false)) => engine.update_step(index, reset_to_pending).await,
            Ok(Err(reason)) => return Err(Ending::StepFailed(index, reason)),
            Err(_) => {
                let reason = format!("did not settle within {step_timeout:?}");
                return Err(Ending::StepFailed(index, reason));
            }
        }
    }
    if let Err(reason) = executor.preflight().await {
        return Err(Ending::Finish(RolloutOutcome::Halted(reason)));
    }
    engine.save();
    Ok(())
}

fn reset_to_pending(s: &mut StepProgress) {
    s.phase = StepPhase::Pending;
    s.detail.clear();
    s.started_unix = None;
}

async fn fail_and_halt(mut engine: Engine, index: usize, reason: String) -> RolloutOutcome {
    let r = reason.clone();
    engine
        .update_step(index, |s| {
            s.phase = StepPhase::Failed;
            s.error = Some(r);
        })
        .await;
    let node = engine.step_name(index);
    engine
        .finish(RolloutOutcome::Halted(format!("{node}: {reason}")))
        .await
}

/// "15m", "90s", "1h30m".
pub fn humanize(d: Duration) -> String {
    let secs = d.as_secs();
    match (secs / 3600, (secs % 3600) / 60, secs % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, 0, 0) => format!("{h}h"),
        (h, m, _) => format!("{h}h{m}m"),
    }
}

#[path = "engine_batches.rs"]
mod batches;

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
