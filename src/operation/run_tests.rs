use std::sync::{Arc, Mutex};

use super::*;
use crate::approval::{Answer, AuditLog, Gate, NodeOperation, Verdict};
use crate::guards::GuardId;
use crate::journal::action::ActionRecord;
use crate::rollout::LockProgress;

/// Three steps on node w-1; step `blocked_before` fails its guard, step `waits` waits for
/// ever (until cancelled or timed out), and `cancel_in` sets the cancel while it runs.
struct Fake {
    ran: Arc<Mutex<Vec<usize>>>,
    blocked_before: Option<usize>,
    waits: Option<usize>,
    cancel_in: Option<(usize, watch::Sender<bool>)>,
    /// The node its plan is about: an approval of w-1 fits only w-1's.
    node: &'static str,
    timeout: Duration,
}

impl Fake {
    fn new() -> Fake {
        Fake {
            ran: Arc::default(),
            blocked_before: None,
            waits: None,
            cancel_in: None,
            node: "w-1",
            timeout: Duration::from_secs(60),
        }
    }
}

fn reboot_of(node: &str) -> MutatingAction {
    MutatingAction::Node {
        cluster: "prod".into(),
        node: node.into(),
        operation: NodeOperation::Reboot,
    }
}

impl Operation for Fake {
    fn kind(&self) -> OperationKind {
        OperationKind::NodeReboot
    }
    fn action(&self) -> MutatingAction {
        reboot_of(self.node)
    }
    fn node(&self) -> Option<&str> {
        Some(self.node)
    }
    fn cordons(&self) -> bool {
        true
    }
    fn steps(&self) -> Vec<Step> {
        ["w-1: cordon", "w-1: reboot", "w-1: uncordon"]
            .map(|what| Step {
                what: what.into(),
                timeout: self.timeout,
            })
            .to_vec()
    }
    async fn guards(&self, index: usize) -> Vec<Guard> {
        if self.blocked_before == Some(index) {
            vec![Guard::fail(GuardId::EtcdQuorum, "a member went down")]
        } else {
            vec![Guard::pass(GuardId::EtcdQuorum, "3 of 3 healthy")]
        }
    }
    async fn run_step(
        &mut self,
        index: usize,
        step: &StepContext<'_>,
    ) -> Result<String, StepError> {
        self.ran.lock().unwrap().push(index);
        if index == 0 {
            step.left_cordoned(Some("w-1"));
        }
        if let Some((at, set)) = &self.cancel_in
            && *at == index
        {
            set.send_replace(true);
        }
        step.say(format!("working on step {}", index + 1));
        if self.waits == Some(index) {
            loop {
                step.wait(Duration::from_secs(1), "the node to come back")
                    .await?;
            }
        }
        if index == 2 {
            step.left_cordoned(None);
        }
        Ok(format!("step {} done", index + 1))
    }
}

struct Bench {
    dir: tempfile::TempDir,
    dispatcher: Dispatcher,
    approved: ApprovedAction,
    events: Arc<Mutex<Vec<OperationEvent>>>,
}

fn bench() -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let dispatcher = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let Gate::Confirm(pending) = dispatcher.request(reboot_of("w-1")) else {
        panic!("not read-only")
    };
    let Verdict::Proceed(approved) = dispatcher.answer(pending, Answer::Typed("w-1".into())) else {
        panic!("confirmed")
    };
    Bench {
        dir,
        dispatcher,
        approved,
        events: Arc::default(),
    }
}

impl Bench {
    async fn run<O: Operation>(&self, op: &mut O, cancel: CancelSignal) -> Result<String, String> {
        let events = self.events.clone();
        let sink = move |e: OperationEvent| events.lock().unwrap().push(e);
        let runner = Runner {
            approved: &self.approved,
            dispatcher: &self.dispatcher,
            state_dir: self.dir.path(),
            acks: &[],
            cancel,
            events: &sink,
        };
        run(op, runner).await
    }

    fn audit(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("audit.log")).unwrap()
    }

    fn journal(&self) -> ActionRecord {
        crate::journal::ACTIONS
            .load(&crate::journal::ACTIONS.path_for(self.dir.path(), "prod"))
            .unwrap()
            .expect("kept")
    }
}

#[tokio::test]
async fn every_step_runs_in_order_journalled_audited_and_reported_with_its_timeout() {
    let b = bench();
    let mut fake = Fake::new();
    let said = b.run(&mut fake, CancelSignal::never()).await;
    assert_eq!(said.as_deref(), Ok("step 3 done"));
    assert_eq!(*fake.ran.lock().unwrap(), [0, 1, 2]);
    let events = b.events.lock().unwrap().clone();
    assert_eq!(
        events[0],
        OperationEvent::Step {
            index: 0,
            total: 3,
            what: "w-1: cordon".into(),
            timeout: Duration::from_secs(60),
        }
    );
    assert_eq!(
        events[0].text(),
        "step 1 of 3: w-1: cordon (times out after 1m00s)"
    );
    let lines: Vec<String> = events
        .iter()
        .filter(|e| matches!(e, OperationEvent::Line { .. }))
        .map(OperationEvent::line)
        .collect();
    assert!(
        lines.iter().all(|l| l.starts_with("[+0s of 1m00s] ")),
        "every line carries its time and the step's timeout: {lines:?}"
    );
    assert!(lines.contains(&"[+0s of 1m00s] [2/3] step 2 done".to_string()));
    let audit = b.audit();
    let outcomes: Vec<&str> = audit
        .lines()
        .filter_map(|l| l.split("outcome=").nth(1))
        .collect();
    assert_eq!(
        outcomes,
        [
            "\"confirmed\"",
            "\"started\"",
            "\"step 1 of 3: w-1: cordon\"",
            "\"step 2 of 3: w-1: reboot\"",
            "\"step 3 of 3: w-1: uncordon\"",
            "\"succeeded\"",
        ]
    );
    let record = b.journal();
    assert_eq!(record.outcome.as_deref(), Some("finished"));
    assert_eq!(record.left_cordoned, None);
    assert_eq!(record.node.as_deref(), Some("w-1"));
}

#[tokio::test]
async fn a_cancel_is_seen_after_the_step_under_way_and_says_what_ran_and_what_is_left() {
    let b = bench();
    let (set, cancel) = CancelSignal::new();
    let mut fake = Fake::new();
    fake.cancel_in = Some((0, set));
    let said = b.run(&mut fake, cancel).await.unwrap_err();
    assert_eq!(*fake.ran.lock().unwrap(), [0], "no step after the cancel");
    assert_eq!(
        said,
        "cancelled before step 2 of 3 (w-1: reboot); done: step 1 done; \
         not run: w-1: reboot, w-1: uncordon; w-1 stays cordoned (uncordon it from the \
         action menu when it is back)"
    );
    assert!(b.audit().contains("outcome=\"cancelled before step 2 of 3"));
    let record = b.journal();
    assert!(record.outcome.unwrap().starts_with("cancelled before"));
    assert_eq!(record.left_cordoned.as_deref(), Some("w-1"));
}

#[tokio::test]
async fn a_cancel_while_a_step_waits_ends_the_wait_not_a_call() {
    let b = bench();
    let (set, cancel) = CancelSignal::new();
    let mut fake = Fake::new();
    // Step 2 has made its call and waits when the operator cancels.
    fake.waits = Some(1);
    fake.cancel_in = Some((1, set));
    let said = b.run(&mut fake, cancel).await;
    assert_eq!(
        said.unwrap_err(),
        "cancelled while waiting for the node to come back; w-1 stays cordoned (uncordon it \
         from the action menu when it is back)"
    );
    assert_eq!(*fake.ran.lock().unwrap(), [0, 1]);
}

#[tokio::test]
async fn a_step_past_its_timeout_fails_naming_the_step_and_its_bound() {
    let b = bench();
    let mut fake = Fake::new();
    // Step 2 waits for what never comes.
    fake.waits = Some(1);
    fake.timeout = Duration::from_millis(50);
    let said = b.run(&mut fake, CancelSignal::never()).await.unwrap_err();
    assert_eq!(
        said,
        "w-1: reboot: not done after 0s (the step's timeout); w-1 stays cordoned (uncordon \
         it from the action menu when it is back)"
    );
    assert!(
        b.audit()
            .contains("outcome=\"failed: w-1: reboot: not done after")
    );
}

#[tokio::test]
async fn the_guards_are_checked_again_before_each_step() {
    let b = bench();
    let mut fake = Fake::new();
    fake.blocked_before = Some(1);
    let said = b.run(&mut fake, CancelSignal::never()).await.unwrap_err();
    assert_eq!(*fake.ran.lock().unwrap(), [0]);
    assert!(
        said.starts_with(
            "refused before step 2 of 3 (w-1: reboot): guard \"etcd quorum\" blocks: a member \
             went down; done: step 1 done"
        ),
        "{said}"
    );
}

#[tokio::test]
async fn an_approval_of_another_action_or_a_held_journal_runs_nothing() {
    let b = bench();
    let held = begin_action(b.dir.path(), "prod", "drain node w-2", None).unwrap();
    let mut fake = Fake::new();
    let said = b.run(&mut fake, CancelSignal::never()).await.unwrap_err();
    assert!(said.contains("held by a run still alive"), "{said}");
    drop(held);
    assert!(fake.ran.lock().unwrap().is_empty());

    let mut fake = Fake::new();
    fake.node = "w-2";
    let said = b.run(&mut fake, CancelSignal::never()).await.unwrap_err();
    assert!(said.starts_with("the approval (reboot node w-1)"), "{said}");
    assert!(fake.ran.lock().unwrap().is_empty());
    assert!(
        b.audit()
            .contains("outcome=\"failed: the approval (reboot node w-1)"),
        "{}",
        b.audit()
    );
}

/// Four steps, the middle two run at once; where each starts, what settling finds and the
/// Lease it holds are set per test.
struct Batched {
    starts: [StepStart; 4],
    /// What settling a step left in progress finds: done or not.
    settles_done: bool,
    settled: Arc<Mutex<Vec<usize>>>,
    ran: Arc<Mutex<Vec<usize>>>,
    /// The middle steps wait for each other: they pass only when both run at once.
    together: Arc<tokio::sync::Barrier>,
    renewals: Arc<Mutex<Vec<LockProgress>>>,
    released: Arc<Mutex<bool>>,
    holds: Arc<Mutex<Vec<(usize, bool)>>>,
}

impl Batched {
    fn new() -> Batched {
        Batched {
            starts: [StepStart::ToRun; 4],
            settles_done: false,
            settled: Arc::default(),
            ran: Arc::default(),
            together: Arc::new(tokio::sync::Barrier::new(2)),
            renewals: Arc::default(),
            released: Arc::default(),
            holds: Arc::default(),
        }
    }
}

/// A Lease that records its renewals and its release.
struct RecordedLease {
    renewals: Arc<Mutex<Vec<LockProgress>>>,
    released: Arc<Mutex<bool>>,
}

impl RolloutLock for RecordedLease {
    fn renew<'a>(
        &'a mut self,
        progress: &'a LockProgress,
    ) -> futures::future::BoxFuture<'a, Result<(), crate::rollout::RenewFailure>> {
        self.renewals.lock().unwrap().push(progress.clone());
        Box::pin(async { Ok(()) })
    }
    fn release(self: Box<Self>) -> futures::future::BoxFuture<'static, Result<(), String>> {
        *self.released.lock().unwrap() = true;
        Box::pin(async { Ok(()) })
    }
}

impl Operation for Batched {
    fn kind(&self) -> OperationKind {
        OperationKind::NodeReboot
    }
    fn action(&self) -> MutatingAction {
        reboot_of("w-1")
    }
    fn steps(&self) -> Vec<Step> {
        ["cp-1", "w-1", "w-2", "w-3"]
            .map(|node| Step {
                what: format!("{node}: upgrade"),
                timeout: Duration::from_secs(60),
            })
            .to_vec()
    }
    async fn guards(&self, _index: usize) -> Vec<Guard> {
        Vec::new()
    }
    async fn run_step(
        &mut self,
        index: usize,
        step: &StepContext<'_>,
    ) -> Result<String, StepError> {
        self.ran.lock().unwrap().push(index);
        step.phase("rebooting");
        Ok(format!("step {} done", index + 1))
    }
    fn batches(&self) -> Vec<Vec<usize>> {
        vec![vec![0], vec![1, 2], vec![3]]
    }
    fn subject(&self, index: usize) -> String {
        ["cp-1", "w-1", "w-2", "w-3"][index].to_string()
    }
    fn start_of(&self, index: usize) -> StepStart {
        self.starts[index]
    }
    async fn settle(&mut self, index: usize, _: &StepContext<'_>) -> Result<bool, StepError> {
        self.settled.lock().unwrap().push(index);
        Ok(self.settles_done)
    }
    async fn run_batch(&mut self, steps: &[StepContext<'_>]) -> Vec<Result<String, StepError>> {
        if steps.len() == 1 {
            let step = &steps[0];
            return vec![step.bounded(self.run_step(step.index(), step)).await];
        }
        let (ran, together) = (self.ran.clone(), self.together.clone());
        let runs = steps.iter().map(|step| {
            let (ran, together) = (ran.clone(), together.clone());
            step.bounded(async move {
                together.wait().await;
                ran.lock().unwrap().push(step.index());
                step.phase("installing");
                Ok(format!("step {} done", step.index() + 1))
            })
        });
        futures::future::join_all(runs).await
    }
    fn lease(&mut self) -> Option<HeldLease> {
        Some(HeldLease {
            lock: Box::new(RecordedLease {
                renewals: self.renewals.clone(),
                released: self.released.clone(),
            }),
            renew_every: Duration::from_secs(3600),
        })
    }
    fn on_hold(&mut self, index: usize, held: bool) {
        self.holds.lock().unwrap().push((index, held));
    }
}

#[tokio::test]
async fn a_batch_runs_its_steps_at_once_and_the_lease_follows_every_step_change() {
    let b = bench();
    let mut op = Batched::new();
    let said = b.run(&mut op, CancelSignal::never()).await;
    // The middle steps pass their barrier only together: run one after the other, they
    // would wait for ever.
    assert_eq!(said.as_deref(), Ok("step 4 done"));
    let ran = op.ran.lock().unwrap().clone();
    assert_eq!((ran[0], ran[3]), (0, 3));
    assert_eq!(ran.len(), 4);
    let renewals: Vec<(usize, String, String)> = op
        .renewals
        .lock()
        .unwrap()
        .iter()
        .map(|p| (p.node_index, p.current_node.clone(), p.phase.clone()))
        .collect();
    let has = |i: usize, node: &str, phase: &str| {
        renewals.contains(&(i, node.to_string(), phase.to_string()))
    };
    assert!(
        has(1, "cp-1", "started") && has(1, "cp-1", "rebooting"),
        "{renewals:?}"
    );
    assert!(
        has(2, "w-1", "installing") && has(3, "w-2", "installing"),
        "{renewals:?}"
    );
    assert!(has(4, "w-3", "rebooting"), "{renewals:?}");
    assert!(
        *op.released.lock().unwrap(),
        "the lease is given back at the end"
    );
    assert!(b.audit().contains("outcome=\"step 3 of 4: w-2: upgrade\""));
}

#[tokio::test]
async fn a_resumed_run_settles_the_step_left_in_progress_and_skips_the_done_ones() {
    let b = bench();
    let mut op = Batched::new();
    op.starts = [
        StepStart::Done,
        StepStart::Unsettled,
        StepStart::ToRun,
        StepStart::ToRun,
    ];
    op.settles_done = true;
    op.together = Arc::new(tokio::sync::Barrier::new(1));
    let said = b.run(&mut op, CancelSignal::never()).await;
    assert_eq!(said.as_deref(), Ok("step 4 done"));
    assert_eq!(*op.settled.lock().unwrap(), [1]);
    // Step 2 finished while the console was away: only step 3 of its batch runs.
    assert_eq!(*op.ran.lock().unwrap(), [2, 3]);

    let b = bench();
    let mut op = Batched::new();
    op.starts[0] = StepStart::Unsettled;
    let said = b.run(&mut op, CancelSignal::never()).await;
    assert_eq!(said.as_deref(), Ok("step 4 done"));
    assert_eq!(*op.settled.lock().unwrap(), [0]);
    assert_eq!(
        op.ran.lock().unwrap()[0],
        0,
        "not done when settled: it runs"
    );
}

#[tokio::test]
async fn a_hold_waits_between_steps_until_released() {
    let b = bench();
    let (_cancel, hold, signal) = CancelSignal::holdable();
    hold.send_replace(true);
    let events = b.events.clone();
    // The operator releases the hold once the run says it is paused.
    let sink = move |e: OperationEvent| {
        if matches!(&e, OperationEvent::Note { text } if text.starts_with("paused before")) {
            hold.send_replace(false);
        }
        events.lock().unwrap().push(e);
    };
    let mut op = Batched::new();
    let runner = Runner {
        approved: &b.approved,
        dispatcher: &b.dispatcher,
        state_dir: b.dir.path(),
        acks: &[],
        cancel: signal,
        events: &sink,
    };
    let said = run(&mut op, runner).await;
    assert_eq!(said.as_deref(), Ok("step 4 done"));
    assert_eq!(*op.holds.lock().unwrap(), [(0, true), (0, false)]);
    let first = op.renewals.lock().unwrap()[0].clone();
    assert_eq!(
        (
            first.node_index,
            first.current_node.as_str(),
            first.phase.as_str()
        ),
        (1, "cp-1", "paused"),
        "the Lease is held while the run is"
    );
    let notes: Vec<String> = b
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, OperationEvent::Note { .. }))
        .map(OperationEvent::text)
        .collect();
    assert_eq!(
        notes,
        ["paused before step 1 of 4 (cp-1: upgrade)", "resumed"]
    );
}

#[tokio::test]
async fn a_held_run_whose_controls_go_away_is_detached_not_ended() {
    let b = bench();
    let (_cancel, hold, signal) = CancelSignal::holdable();
    hold.send_replace(true);
    drop(hold);
    let mut op = Batched::new();
    let said = b.run(&mut op, signal).await.unwrap_err();
    assert!(
        said.starts_with(
            "detached: the run's controls went away while it was paused before step 1 of 4"
        ),
        "{said}"
    );
    assert!(op.ran.lock().unwrap().is_empty());
    assert!(!*op.released.lock().unwrap(), "the lease is left to expire");
    assert!(
        !b.audit().contains("detached"),
        "not audited as ended: {}",
        b.audit()
    );
    assert_eq!(b.journal().outcome, None, "the journal keeps it unfinished");
}

#[tokio::test]
async fn a_cancel_while_held_stops_before_the_next_step() {
    let b = bench();
    let (cancel, hold, signal) = CancelSignal::holdable();
    hold.send_replace(true);
    cancel.send_replace(true);
    let mut op = Batched::new();
    let said = b.run(&mut op, signal).await.unwrap_err();
    assert!(
        said.starts_with("cancelled before step 1 of 4 (cp-1: upgrade)"),
        "{said}"
    );
    assert!(*op.released.lock().unwrap());
}
