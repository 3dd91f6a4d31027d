//! The delete against a fake world through the runner: contexts go only after every VM is
//! gone, a VM that stays keeps the contexts, another action's hold refuses it, and a killed
//! delete is reported interrupted with its last step.
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::*;
use crate::approval::{Answer, ApprovedAction, AuditLog, Dispatcher, Gate, Verdict};
use crate::cluster_lifecycle::delete::tests::{Fake, created, created_lab};
use crate::cluster_lifecycle::{DESTROYS_ACK, DeleteInputs, VmsKnownBy, plan_delete};
use crate::journal::ACTIONS;
use crate::journal::action::{ActionRecord, begin_action};
use crate::operation::{CancelSignal, OperationEvent, Runner, run};

fn dispatcher(dir: &Path) -> Dispatcher {
    Dispatcher::new(false, AuditLog::new(dir.join("audit.log")))
}

fn approved_by(d: &Dispatcher, plan: &DeletePlan) -> ApprovedAction {
    let Gate::Confirm(p) = d.request(plan.action()) else {
        panic!("not read-only")
    };
    match d.answer(p, Answer::Typed(plan.cluster.clone())) {
        Verdict::Proceed(a) => a,
        Verdict::Cancelled(w) => panic!("{w}"),
    }
}

/// Runs the delete of `plan` in `dir` through the runner, its lines into `lines`.
async fn delete(
    dir: &Path,
    plan: DeletePlan,
    fake: Fake,
    bounds: (Duration, Duration),
    lines: Arc<Mutex<Vec<String>>>,
) -> (Result<String, String>, ClusterDelete<Fake>) {
    let d = dispatcher(dir);
    let approved = approved_by(&d, &plan);
    let events = move |e: OperationEvent| lines.lock().unwrap().push(e.text());
    let mut operation = ClusterDelete::new(plan, fake, bounds);
    let runner = Runner {
        approved: &approved,
        dispatcher: &d,
        state_dir: dir,
        acks: &[DESTROYS_ACK.to_string()],
        cancel: CancelSignal::never(),
        events: &events,
    };
    let result = run(&mut operation, runner).await;
    (result, operation)
}

/// The action journal the delete of `lab` kept in `dir`.
fn action_record(dir: &Path) -> ActionRecord {
    ACTIONS
        .load(&ACTIONS.path_for(dir, "lab"))
        .unwrap()
        .expect("the delete kept its journal")
}

#[tokio::test]
async fn every_vm_goes_then_the_contexts_then_the_journals() {
    let dir = tempfile::tempdir().unwrap();
    let plan = plan_delete(
        DeleteInputs {
            cluster: "lab".into(),
            record: Some(created(dir.path())),
            talos_context: Some("lab".into()),
            kube_context: Some("admin@lab".into()),
            ..DeleteInputs::default()
        },
        dir.path(),
    );
    assert_eq!(
        (plan.known_by, plan.vms.len()),
        (VmsKnownBy::CreateJournal, 5)
    );
    assert_eq!(plan.journals, [dir.path().join("clusters/lab.json")]);
    let fake = Fake {
        vms: Mutex::new((1..=5).map(|id| (id, id as usize)).collect()),
        ..Fake::default()
    };
    let bounds = (Duration::from_millis(1), Duration::from_secs(10));
    let lines = Arc::default();
    let (result, operation) = delete(dir.path(), plan, fake, bounds, Arc::clone(&lines)).await;
    assert_eq!(
        result.as_deref(),
        Ok("cluster lab deleted: no VM, context or journal of it left")
    );
    assert!(*operation.world.contexts_removed.lock().unwrap());
    assert!(!dir.path().join("clusters/lab.json").exists());
    let lines = lines.lock().unwrap().clone();
    assert!(
        lines.contains(&"[2/4] every VM is gone".to_string())
            && lines.contains(&"VM lab-5 (5) is gone".to_string()),
        "{lines:#?}"
    );
    let record = action_record(dir.path());
    assert_eq!(
        (record.action.as_str(), record.outcome.as_deref()),
        (
            "delete cluster: terminate 5 VM(s), remove its contexts",
            Some("finished")
        ),
        "{record:?}"
    );
    assert!(record.step.starts_with("removed "), "{record:?}");
}

#[tokio::test]
async fn a_delete_is_refused_while_another_action_holds_the_cluster_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let plan = created_lab(dir.path());
    let held = begin_action(dir.path(), "lab", "reboot node lab-1", Some("lab-1")).unwrap();
    let fake = Fake {
        vms: Mutex::new(vec![(1, 1)]),
        ..Fake::default()
    };
    let bounds = (Duration::from_millis(1), Duration::from_secs(10));
    let (result, operation) = delete(dir.path(), plan, fake, bounds, Arc::default()).await;
    let err = result.expect_err("refused");
    assert!(err.starts_with("refused: "), "{err}");
    assert!(
        !*operation.world.terminated.lock().unwrap(),
        "nothing terminated"
    );
    drop(held);
}

#[tokio::test]
async fn a_killed_delete_is_reported_interrupted_with_its_last_step() {
    let dir = tempfile::tempdir().unwrap();
    let plan = created_lab(dir.path());
    // A VM that never goes: the run is dropped mid-follow, as a killed process ends it.
    let fake = Fake {
        vms: Mutex::new(vec![(3, usize::MAX)]),
        ..Fake::default()
    };
    let d = dispatcher(dir.path());
    let approved = approved_by(&d, &plan);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let events = move |e: OperationEvent| {
        let _ = tx.send(e.text());
    };
    let mut operation = ClusterDelete::new(
        plan,
        fake,
        (Duration::from_millis(1), Duration::from_secs(3600)),
    );
    let acks = [DESTROYS_ACK.to_string()];
    let runner = Runner {
        approved: &approved,
        dispatcher: &d,
        state_dir: dir.path(),
        acks: &acks,
        cancel: CancelSignal::never(),
        events: &events,
    };
    let mut running = Box::pin(run(&mut operation, runner));
    // Four VMs go at the first look; after that line the run only looks again.
    loop {
        tokio::select! {
            _ = &mut running => panic!("the VM never goes"),
            line = rx.recv() => {
                if line.expect("the run is on") == "1 VM(s) not gone yet" {
                    break;
                }
            }
        }
    }
    drop(running);
    let (found, errors) = crate::journal::action::interrupted_actions(dir.path());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(found.len(), 1, "{found:?}");
    let text = found[0].describe();
    assert!(
        text.starts_with(
            "delete cluster: terminate 5 VM(s), remove its contexts in lab was interrupted"
        ) && text.contains("last step: 1 VM(s) not gone yet"),
        "{text}"
    );
}

#[tokio::test]
async fn a_vm_that_stays_keeps_the_contexts() {
    let dir = tempfile::tempdir().unwrap();
    let plan = created_lab(dir.path());
    let fake = Fake {
        vms: Mutex::new(vec![(3, usize::MAX)]),
        ..Fake::default()
    };
    let bounds = (Duration::from_millis(1), Duration::from_millis(50));
    let (result, operation) = delete(dir.path(), plan, fake, bounds, Arc::default()).await;
    let err = result.expect_err("timed out");
    assert!(
        err.contains("[3] not gone") && err.contains("contexts are kept"),
        "{err}"
    );
    assert!(!*operation.world.contexts_removed.lock().unwrap());
    assert!(
        dir.path().join("clusters/lab.json").exists(),
        "journal kept"
    );
}
