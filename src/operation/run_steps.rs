//! The steps of one run, after its approval and journal: the steps a killed run left in
//! progress settled, then each batch in order: the cancel and the hold taken between steps,
//! every step of the batch checked, begun, run at once and ended; the Lease renewed on every
//! step change and periodically, and lost only between steps.
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{Instant, Interval};

use super::{
    DETACHED, HeldLease, HoldEnd, Operation, OperationEvent, Runner, Step, StepContext, StepError,
    StepStart,
};
use crate::journal::action::{ActionRecord, RunningAction};
use crate::rollout::{LockProgress, RenewFailure};

/// The Lease a run holds, with what it was last renewed with.
struct Lease {
    held: HeldLease,
    tick: Interval,
    /// The step and phase it names.
    at: Option<(usize, String)>,
    /// Another run has it now: this one stops before its next step.
    lost: Option<String>,
}

impl Lease {
    fn new(held: HeldLease) -> Lease {
        let every = held.renew_every.max(Duration::from_millis(100));
        let mut tick = tokio::time::interval_at(Instant::now() + every, every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        Lease {
            held,
            tick,
            at: None,
            lost: None,
        }
    }

    /// Renews it naming step `index` (`subjects`: what each step is about) in `phase`; a
    /// failure is said on `runner`'s events.
    async fn renew(&mut self, runner: &Runner<'_>, subjects: &[String], at: Option<(usize, &str)>) {
        if let Some((index, phase)) = at {
            self.at = Some((index, phase.to_string()));
        }
        let Some((index, phase)) = self.at.clone() else {
            return;
        };
        let progress = LockProgress {
            node_index: index + 1,
            current_node: subjects.get(index).cloned().unwrap_or_default(),
            phase,
        };
        match self.held.lock.renew(&progress).await {
            Ok(()) => {}
            Err(RenewFailure::Failed(e)) => (runner.events)(OperationEvent::Note {
                text: format!("cannot renew the lease: {e}"),
            }),
            Err(RenewFailure::Lost(e)) => {
                (runner.events)(OperationEvent::Note { text: e.clone() });
                self.lost.get_or_insert(e);
            }
        }
    }
}

/// Waits for the next tick of `lease`, for ever without one.
async fn tick(lease: &mut Option<Lease>) {
    match lease {
        Some(lease) => {
            lease.tick.tick().await;
        }
        None => std::future::pending::<()>().await,
    }
}

/// Runs the steps with the Lease the operation holds, given back however the run ends, unless
/// it was detached (the Lease is then left to expire, so the same holder can take it back).
pub(super) async fn steps<O: Operation>(
    operation: &mut O,
    runner: &Runner<'_>,
    journal: Option<&RunningAction>,
) -> Result<String, String> {
    let mut lease = operation.lease().map(Lease::new);
    let result = batches(operation, runner, journal, &mut lease).await;
    let detached = result.as_ref().is_err_and(|e| e.starts_with(DETACHED));
    if let Some(lease) = lease.filter(|_| !detached)
        && let Err(e) = lease.held.lock.release().await
    {
        (runner.events)(OperationEvent::Note {
            text: format!("cannot give back the lease: {e}"),
        });
    }
    result
}

async fn batches<O: Operation>(
    operation: &mut O,
    runner: &Runner<'_>,
    journal: Option<&RunningAction>,
    lease: &mut Option<Lease>,
) -> Result<String, String> {
    let audit = |outcome: String| {
        if let Err(e) = runner.dispatcher.progressed(runner.approved, &outcome) {
            tracing::warn!("{e}");
        }
    };
    audit("started".into());
    let plan = operation.steps();
    let total = plan.len();
    let subjects: Vec<String> = (0..total).map(|i| operation.subject(i)).collect();
    let mut finished: Vec<bool> = (0..total)
        .map(|i| operation.start_of(i) == StepStart::Done)
        .collect();
    let (phases, mut phase_rx) = mpsc::unbounded_channel();
    let context = |index: usize| StepContext {
        index,
        total,
        began: Instant::now(),
        timeout: plan[index].timeout,
        journal,
        events: runner.events,
        cancel: runner.cancel.clone(),
        phases: &phases,
    };
    let mut done: Vec<String> = Vec::new();
    let cordons = operation.cordons();
    let leaves = || leaves(cordons, journal.map(RunningAction::snapshot).as_ref());

    let unsettled: Vec<usize> = (0..total)
        .filter(|&i| operation.start_of(i) == StepStart::Unsettled)
        .collect();
    for index in unsettled {
        let step = context(index);
        match step.bounded(Box::pin(operation.settle(index, &step))).await {
            Ok(settled) => finished[index] = settled,
            Err(StepError::TimedOut) => {
                return Err(format!(
                    "{}: did not settle within {} (the step's timeout)",
                    plan[index].what,
                    crate::clock::short_duration(plan[index].timeout.as_secs())
                ));
            }
            Err(StepError::Failed(why) | StepError::CancelledWhileWaiting(why)) => {
                return Err(why);
            }
        }
    }

    for batch in operation.batches() {
        let pending: Vec<usize> = batch
            .into_iter()
            .filter(|&i| i < total && !finished[i])
            .collect();
        let Some(&next) = pending.first() else {
            continue;
        };
        let stopped = |how: &str, finished: &[bool], done: &[String]| {
            format!(
                "{how} before step {} of {total} ({}); {}{}",
                next + 1,
                plan[next].what,
                ran(&plan, finished, done),
                leaves()
            )
        };
        if runner.cancel.is_held() {
            operation.on_hold(next, true);
            (runner.events)(OperationEvent::Note {
                text: format!(
                    "paused before step {} of {total} ({})",
                    next + 1,
                    plan[next].what
                ),
            });
            // Held, the run still holds its Lease: renewed naming the step it waits before.
            if let Some(lease) = lease.as_mut() {
                lease.renew(runner, &subjects, Some((next, "paused"))).await;
            }
            let mut signal = runner.cancel.clone();
            let mut released = std::pin::pin!(signal.released());
            let released = loop {
                tokio::select! {
                    released = &mut released => break released,
                    () = tick(lease) => {
                        if let Some(lease) = lease.as_mut() {
                            lease.renew(runner, &subjects, None).await;
                        }
                    }
                }
            };
            match released {
                HoldEnd::Released => {
                    operation.on_hold(next, false);
                    (runner.events)(OperationEvent::Note {
                        text: "resumed".into(),
                    });
                }
                HoldEnd::Cancelled => {}
                HoldEnd::Detached => {
                    return Err(format!(
                        "{DETACHED}: the run's controls went away while it was paused before \
                         step {} of {total} ({}); its journal keeps it for a resume",
                        next + 1,
                        plan[next].what
                    ));
                }
            }
        }
        if runner.cancel.is_set() {
            return Err(stopped("cancelled", &finished, &done));
        }
        if let Some(lost) = lease.as_ref().and_then(|l| l.lost.clone()) {
            return Err(stopped(&format!("stopped ({lost})"), &finished, &done));
        }
        for &index in &pending {
            if let Err(why) = operation.check_before(index, runner.acks).await {
                return Err(format!(
                    "refused before step {} of {total} ({}): {why}; {}{}",
                    index + 1,
                    plan[index].what,
                    ran(&plan, &finished, &done),
                    leaves()
                ));
            }
        }
        for &index in &pending {
            let step = &plan[index];
            audit(format!("step {} of {total}: {}", index + 1, step.what));
            if let Some(journal) = journal {
                journal.record(|r| r.step = step.what.clone());
            }
            (runner.events)(OperationEvent::Step {
                index,
                total,
                what: step.what.clone(),
                timeout: step.timeout,
            });
            if let Some(lease) = lease.as_mut() {
                lease
                    .renew(runner, &subjects, Some((index, "started")))
                    .await;
            }
        }
        let contexts: Vec<StepContext<'_>> = pending.iter().map(|&i| context(i)).collect();
        let results = {
            let mut batch = Box::pin(operation.run_batch(&contexts));
            loop {
                tokio::select! {
                    results = &mut batch => break results,
                    Some((index, phase)) = phase_rx.recv() => {
                        if let Some(lease) = lease.as_mut() {
                            lease.renew(runner, &subjects, Some((index, &phase))).await;
                        }
                    }
                    () = tick(lease) => {
                        if let Some(lease) = lease.as_mut() {
                            lease.renew(runner, &subjects, None).await;
                        }
                    }
                }
            }
        };
        // The phases the batch reported as it ended.
        while let Ok((index, phase)) = phase_rx.try_recv() {
            if let Some(lease) = lease.as_mut() {
                lease.renew(runner, &subjects, Some((index, &phase))).await;
            }
        }
        let mut failure = None;
        for (step, result) in contexts.iter().zip(results) {
            let index = step.index;
            let what = &plan[index].what;
            let why = match result {
                Ok(said) => {
                    if let Some(journal) = journal {
                        journal.record(|r| r.step = said.clone());
                    }
                    (runner.events)(OperationEvent::Line {
                        index,
                        total,
                        elapsed: step.began.elapsed(),
                        timeout: plan[index].timeout,
                        text: format!("[{}/{total}] {said}", index + 1),
                    });
                    finished[index] = true;
                    done.push(said);
                    continue;
                }
                Err(StepError::TimedOut) => format!(
                    "{what}: not done after {} (the step's timeout){}{}",
                    crate::clock::short_duration(plan[index].timeout.as_secs()),
                    operation.stopped_at(index),
                    leaves()
                ),
                Err(StepError::CancelledWhileWaiting(waited)) => format!(
                    "cancelled while waiting for {waited}{}{}",
                    operation.stopped_at(index),
                    leaves()
                ),
                Err(StepError::Failed(why)) => why,
            };
            failure.get_or_insert(why);
        }
        if let Some(why) = failure {
            return Err(why);
        }
        if pending.iter().any(|&i| !finished[i]) {
            return Err(stopped("stopped", &finished, &done));
        }
    }
    Ok(operation.finished(&done))
}

/// "done: …; not run: …" of a run stopped with the steps not `finished` left.
fn ran(plan: &[Step], finished: &[bool], done: &[String]) -> String {
    let done = if done.is_empty() {
        "none: nothing was changed".to_string()
    } else {
        done.join("; ")
    };
    let not_run: Vec<&str> = plan
        .iter()
        .zip(finished)
        .filter(|(_, finished)| !**finished)
        .map(|(s, _)| s.what.as_str())
        .collect();
    format!("done: {done}; not run: {}", not_run.join(", "))
}

/// What a run that stops now leaves, for its end's message.
fn leaves(cordons: bool, record: Option<&ActionRecord>) -> String {
    match record.and_then(|r| r.left_cordoned.as_ref()) {
        Some(node) => {
            format!("; {node} stays cordoned (uncordon it from the action menu when it is back)")
        }
        None if cordons => "; no node was left cordoned".to_string(),
        None => String::new(),
    }
}
