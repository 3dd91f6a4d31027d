use std::sync::Mutex;

use futures::FutureExt;

use super::*;
use crate::rollout::journal::JOURNAL_FORMAT;
use crate::rollout::{RolloutKind, RolloutOutcome};

/// A scripted executor: records what ran, fails or hangs where told.
#[derive(Default)]
struct Script {
    ran: Mutex<Vec<usize>>,
    checked: Mutex<Vec<usize>>,
    refuse_preflight: Option<String>,
    fail_check_at: Option<usize>,
    fail_step: Option<usize>,
    hang_step: Option<usize>,
    settled_done: bool,
    /// Each step waits on this before finishing (None: finish at once).
    gate: Option<tokio::sync::watch::Receiver<bool>>,
}

impl StepExecutor for Script {
    fn preflight(&self) -> BoxFuture<'_, Result<(), String>> {
        let r = self.refuse_preflight.clone().map_or(Ok(()), Err);
        async move { r }.boxed()
    }
    fn check_before(&self, index: usize) -> BoxFuture<'_, Result<(), String>> {
        self.checked.lock().unwrap().push(index);
        let r = if self.fail_check_at == Some(index) {
            Err("etcd healthy: member cp-3 unhealthy".to_string())
        } else {
            Ok(())
        };
        async move { r }.boxed()
    }
    fn settle(&self, _index: usize) -> BoxFuture<'_, Result<bool, String>> {
        let done = self.settled_done;
        async move { Ok(done) }.boxed()
    }
    fn run_step(&self, index: usize, report: StepReport) -> BoxFuture<'_, Result<(), String>> {
        async move {
            self.ran.lock().unwrap().push(index);
            report.phase(StepPhase::Installing, "phase upgrade");
            report.log("phase upgrade started");
            if self.hang_step == Some(index) {
                futures::future::pending::<()>().await;
            }
            if let Some(mut gate) = self.gate.clone() {
                let _ = gate.wait_for(|open| *open).await;
            }
            if self.fail_step == Some(index) {
                return Err("error validating etcd for upgrade: member unhealthy".into());
            }
            Ok(())
        }
        .boxed()
    }
}

fn setup(dir: &std::path::Path, nodes: usize, batches: Vec<Vec<usize>>) -> EngineSetup {
    let steps = (0..nodes)
        .map(|i| StepProgress::pending(&format!("n-{}", i + 1), "upgrade to v1.12.0"))
        .collect();
    EngineSetup {
        journal: RolloutJournal {
            format: JOURNAL_FORMAT,
            cluster: "lab".into(),
            kind: RolloutKind::TalosUpgrade,
            target: "v1.12.0".into(),
            holder: "alice@ops1".into(),
            acks: vec![],
            plan: serde_json::Value::Null,
            options: serde_json::Value::Null,
            steps,
            paused: false,
            outcome: None,
            updated_unix: 0,
        },
        journal_path: crate::journal::ROLLOUTS.path_for(dir, "lab"),
        batches,
        step_timeout: Duration::from_millis(300),
        renew_every: Duration::from_secs(60),
        lock: None,
        resumed: false,
    }
}

fn singles(n: usize) -> Vec<Vec<usize>> {
    (0..n).map(|i| vec![i]).collect()
}

async fn run(
    setup: EngineSetup,
    script: Arc<Script>,
) -> (RolloutOutcome, Vec<RolloutEvent>, RolloutJournal) {
    let path = setup.journal_path.clone();
    let (tx, mut rx) = unbounded_channel();
    let handle = spawn_rollout(setup, script, tx);
    let outcome = tokio::time::timeout(Duration::from_secs(10), handle.task)
        .await
        .expect("rollout ends")
        .expect("task");
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    let journal = RolloutJournal::load(&path)
        .expect("journal readable")
        .unwrap_or_else(|| panic!("no journal at {path:?}"));
    (outcome, events, journal)
}

#[tokio::test]
async fn every_step_runs_in_order_after_its_guards_and_the_journal_says_completed() {
    let dir = tempfile::tempdir().unwrap();
    let script = Arc::new(Script::default());
    let (outcome, events, journal) = run(setup(dir.path(), 3, singles(3)), script.clone()).await;
    assert_eq!(outcome, RolloutOutcome::Completed);
    assert_eq!(*script.ran.lock().unwrap(), vec![0, 1, 2]);
    assert_eq!(*script.checked.lock().unwrap(), vec![0, 1, 2]);
    assert!(journal.steps.iter().all(|s| s.phase == StepPhase::Done));
    assert_eq!(journal.outcome, Some(RolloutOutcome::Completed));
    assert!(matches!(events.first(), Some(RolloutEvent::Started(_))));
    assert!(events.iter().any(|e| matches!(
        e,
        RolloutEvent::Log { line, .. } if line == "n-2: phase upgrade started"
    )));
}

#[tokio::test]
async fn a_failing_guard_halts_before_the_step_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let script = Arc::new(Script {
        fail_check_at: Some(1),
        ..Default::default()
    });
    let (outcome, _, journal) = run(setup(dir.path(), 3, singles(3)), script.clone()).await;
    let RolloutOutcome::Halted(reason) = outcome else {
        panic!("not halted: {outcome:?}");
    };
    assert!(
        reason.contains("before n-2") && reason.contains("cp-3 unhealthy"),
        "{reason}"
    );
    assert_eq!(*script.ran.lock().unwrap(), vec![0]);
    assert_eq!(journal.steps[1].phase, StepPhase::Pending);
}

#[tokio::test]
async fn a_refused_preflight_touches_nothing_and_writes_no_journal() {
    let dir = tempfile::tempdir().unwrap();
    let script = Arc::new(Script {
        refuse_preflight: Some("client role: os:reader may not upgrade".into()),
        ..Default::default()
    });
    let s = setup(dir.path(), 2, singles(2));
    let path = s.journal_path.clone();
    let (tx, _rx) = unbounded_channel();
    let outcome = spawn_rollout(s, script.clone(), tx).task.await.unwrap();
    assert!(matches!(outcome, RolloutOutcome::Halted(r) if r.contains("os:reader")));
    assert!(script.ran.lock().unwrap().is_empty());
    assert!(!path.exists());
}

#[tokio::test]
async fn a_step_timeout_fails_that_node_and_touches_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let script = Arc::new(Script {
        hang_step: Some(1),
        ..Default::default()
    });
    let (outcome, _, journal) = run(setup(dir.path(), 3, singles(3)), script.clone()).await;
    assert!(matches!(&outcome, RolloutOutcome::Halted(r) if r.starts_with("n-2: timed out")));
    assert_eq!(*script.ran.lock().unwrap(), vec![0, 1]);
    assert_eq!(journal.steps[1].phase, StepPhase::Failed);
    assert_eq!(journal.steps[2].phase, StepPhase::Pending);
}

#[tokio::test]
async fn a_failed_step_halts_with_the_servers_words() {
    let dir = tempfile::tempdir().unwrap();
    let script = Arc::new(Script {
        fail_step: Some(0),
        ..Default::default()
    });
    let (outcome, _, journal) = run(setup(dir.path(), 2, singles(2)), script).await;
    assert!(
        matches!(&outcome, RolloutOutcome::Halted(r) if r == "n-1: error validating etcd for upgrade: member unhealthy")
    );
    assert_eq!(
        journal.steps[0].error.as_deref(),
        Some("error validating etcd for upgrade: member unhealthy")
    );
}

#[tokio::test]
async fn abort_finishes_the_running_step_then_stops_and_pause_waits_for_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (open, gate) = tokio::sync::watch::channel(false);
    let script = Arc::new(Script {
        gate: Some(gate),
        ..Default::default()
    });
    let mut s = setup(dir.path(), 3, singles(3));
    s.step_timeout = Duration::from_secs(10);
    let (tx, mut rx) = unbounded_channel();
    let handle = spawn_rollout(s, script.clone(), tx);
    // Pause while n-1 runs; it finishes, n-2 does not start until resumed.
    loop {
        let e = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("event")
            .expect("open");
        if matches!(&e, RolloutEvent::Step { index: 0, progress, .. } if progress.phase == StepPhase::Installing)
        {
            break;
        }
    }
    handle.control.send(RolloutControl::Pause).unwrap();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("event")
            .expect("open");
        if matches!(e, RolloutEvent::Paused { .. }) {
            break;
        }
    }
    open.send_replace(true);
    let done_first = async {
        loop {
            match rx.recv().await {
                Some(RolloutEvent::Step {
                    index: 0, progress, ..
                }) if progress.phase == StepPhase::Done => {
                    return;
                }
                Some(_) => {}
                None => panic!("engine ended early"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), done_first)
        .await
        .expect("n-1 done while paused");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        *script.ran.lock().unwrap(),
        vec![0],
        "paused: n-2 must wait"
    );
    handle.control.send(RolloutControl::Abort).unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(5), handle.task)
        .await
        .expect("ends")
        .unwrap();
    assert_eq!(outcome, RolloutOutcome::Aborted);
    assert_eq!(*script.ran.lock().unwrap(), vec![0]);
}

#[tokio::test]
async fn a_resumed_journal_settles_the_interrupted_step_and_runs_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let script = Arc::new(Script {
        settled_done: true,
        ..Default::default()
    });
    let mut s = setup(dir.path(), 3, singles(3));
    s.journal.steps[0].phase = StepPhase::Done;
    s.journal.steps[1].phase = StepPhase::Rebooting;
    let (outcome, _, journal) = run(s, script.clone()).await;
    assert_eq!(outcome, RolloutOutcome::Completed);
    assert_eq!(*script.ran.lock().unwrap(), vec![2]);
    assert!(journal.steps.iter().all(|s| s.phase == StepPhase::Done));
}

#[test]
fn durations_read_like_an_operator_writes_them() {
    assert_eq!(humanize(Duration::from_secs(900)), "15m");
    assert_eq!(humanize(Duration::from_secs(90)), "1m30s");
    assert_eq!(humanize(Duration::from_secs(5400)), "1h30m");
    assert_eq!(humanize(Duration::from_secs(0)), "0s");
}

#[tokio::test]
async fn a_console_gone_while_paused_leaves_the_journal_resumable() {
    let dir = tempfile::tempdir().unwrap();
    let script = Arc::new(Script::default());
    let s = setup(dir.path(), 3, singles(3));
    let path = s.journal_path.clone();
    let (tx, mut rx) = unbounded_channel();
    let handle = spawn_rollout(s, script.clone(), tx);
    // Paused before the first step: the engine waits between steps.
    handle.control.send(RolloutControl::Pause).unwrap();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("event")
            .expect("open");
        if matches!(e, RolloutEvent::Paused { .. }) {
            break;
        }
    }
    drop(handle.control);
    let outcome = tokio::time::timeout(Duration::from_secs(5), handle.task)
        .await
        .expect("ends")
        .unwrap();
    assert!(matches!(outcome, RolloutOutcome::Halted(ref r) if r.contains("went away")));
    let journal = RolloutJournal::load(&path)
        .expect("readable")
        .expect("kept");
    assert_eq!(journal.outcome, None, "not ended: {journal:?}");
    assert!(journal.is_unfinished());
    assert!(journal.paused);
}
