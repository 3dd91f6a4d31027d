//! The batches of a running rollout, after the preflight: pause and abort taken between steps,
//! every step's guards checked before its batch, the steps run together within the step timeout,
//! their progress folded into the journal and the lease renewed while they run.
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use super::{Ending, Engine, StepExecutor, StepReport, StepUpdate, humanize};
use crate::rollout::progress::{RolloutControl, RolloutOutcome, StepPhase};

/// The batches running: the engine, the executor, the operator's controls and the lease renewal.
pub(super) struct BatchRun {
    pub(super) engine: Engine,
    pub(super) executor: Arc<dyn StepExecutor>,
    pub(super) control: UnboundedReceiver<RolloutControl>,
    pub(super) renew: tokio::time::Interval,
    /// The step last changed, named when the lease is renewed.
    pub(super) last_index: usize,
    pub(super) step_timeout: Duration,
}

impl BatchRun {
    /// Runs one batch's pending steps: wait out a pause, check every step's guards, run them.
    pub(super) async fn batch(&mut self, batch: &[usize]) -> Result<(), Ending> {
        let pending = self.engine.pending_in(batch);
        if pending.is_empty() {
            return Ok(());
        }
        self.between_steps().await?;
        self.check_guards(&pending).await?;
        self.run_steps(&pending).await
    }

    pub(super) fn take_controls(&mut self) {
        while let Ok(msg) = self.control.try_recv() {
            self.engine.control(msg);
        }
    }

    /// Between steps: the only place pause and abort take effect.
    async fn between_steps(&mut self) -> Result<(), Ending> {
        self.take_controls();
        while self.engine.journal.paused && !self.engine.abort {
            tokio::select! {
                msg = self.control.recv() => match msg {
                    Some(msg) => self.engine.control(msg),
                    // The console went away while paused (quit, or its process ends): the
                    // rollout is not over, so the journal stays unfinished for a resume.
                    None => return Err(Ending::Detach),
                },
                _ = self.renew.tick() => self.engine.renew(self.last_index).await,
            }
        }
        if self.engine.abort {
            return Err(Ending::Finish(RolloutOutcome::Aborted));
        }
        if let Some(e) = self.engine.stop_reason.clone() {
            return Err(Ending::Finish(RolloutOutcome::Halted(e)));
        }
        Ok(())
    }

    /// Every step's guards, before any of the batch runs.
    async fn check_guards(&mut self, pending: &[usize]) -> Result<(), Ending> {
        for &index in pending {
            if let Err(reason) = self.executor.check_before(index).await {
                let node = self.engine.step_name(index);
                let reason = format!("before {node}: {reason}");
                self.engine.log(format!("halted {reason}"));
                return Err(Ending::Finish(RolloutOutcome::Halted(reason)));
            }
        }
        Ok(())
    }

    /// Runs the steps together, each within the step timeout, folding their updates into the
    /// journal as they come; the first failure halts once all have ended.
    async fn run_steps(&mut self, pending: &[usize]) -> Result<(), Ending> {
        let (tx, mut updates) = unbounded_channel();
        let mut running: FuturesUnordered<_> = pending
            .iter()
            .map(|&index| {
                let report = StepReport::new(index, &self.engine.step_name(index), tx.clone());
                timed_step(self.executor.clone(), index, report, self.step_timeout)
            })
            .collect();
        drop(tx);
        let mut failure: Option<(usize, String)> = None;
        while !running.is_empty() {
            tokio::select! {
                Some((index, result)) = running.next() => {
                    while let Ok((i, update)) = updates.try_recv() {
                        apply_update(&mut self.engine, i, update).await;
                    }
                    if let Err(reason) = self.step_ended(index, result).await {
                        failure.get_or_insert((index, reason));
                    }
                    self.last_index = index;
                }
                Some((index, update)) = updates.recv() => {
                    self.last_index = index;
                    apply_update(&mut self.engine, index, update).await;
                }
                Some(msg) = self.control.recv() => self.engine.control(msg),
                _ = self.renew.tick() => self.engine.renew(self.last_index).await,
            }
        }
        match failure {
            Some((index, reason)) => {
                let node = self.engine.step_name(index);
                let outcome = RolloutOutcome::Halted(format!("{node}: {reason}"));
                Err(Ending::Finish(outcome))
            }
            None => Ok(()),
        }
    }

    /// Marks a step that ended done or failed; a failure's reason is passed on.
    async fn step_ended(&mut self, index: usize, result: Result<(), String>) -> Result<(), String> {
        match result {
            Ok(()) => {
                self.engine
                    .update_step(index, |s| {
                        s.phase = StepPhase::Done;
                        s.detail.clear();
                    })
                    .await;
                Ok(())
            }
            Err(reason) => {
                let r = reason.clone();
                self.engine
                    .update_step(index, |s| {
                        s.phase = StepPhase::Failed;
                        s.error = Some(r);
                    })
                    .await;
                Err(reason)
            }
        }
    }
}

/// Step `index` run within `timeout`; a timeout is the step's failure.
async fn timed_step(
    executor: Arc<dyn StepExecutor>,
    index: usize,
    report: StepReport,
    timeout: Duration,
) -> (usize, Result<(), String>) {
    let result = match tokio::time::timeout(timeout, executor.run_step(index, report)).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "timed out after {}; the rollout stops here and nothing else is touched",
            humanize(timeout)
        )),
    };
    (index, result)
}

async fn apply_update(engine: &mut Engine, index: usize, update: StepUpdate) {
    match update {
        StepUpdate::Phase(phase, detail) => {
            let unchanged = engine
                .journal
                .steps
                .get(index)
                .is_some_and(|s| s.phase == phase && s.detail == detail);
            if !unchanged {
                engine
                    .update_step(index, |s| {
                        s.phase = phase;
                        s.detail = detail;
                    })
                    .await
            }
        }
        StepUpdate::Detail(detail) => {
            let unchanged = engine
                .journal
                .steps
                .get(index)
                .is_some_and(|s| s.detail == detail);
            if !unchanged {
                engine.update_step(index, |s| s.detail = detail).await
            }
        }
        StepUpdate::Log(line) => engine.log(line),
    }
}
