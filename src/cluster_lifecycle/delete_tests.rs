//! The delete against a fake world: contexts go only after every VM is gone, a VM that stays
//! keeps the contexts, and the plan knows the VMs from the journal or `--adopt` only.
use std::sync::Mutex;

use super::*;
use crate::approval::{Answer, AuditLog, Dispatcher, Gate, Verdict};
use crate::cluster_lifecycle::guards::tests::plan as create_plan;
use crate::cluster_lifecycle::journal::{CreateJournal, CreatedVm};
use crate::cluster_lifecycle::plan::{Delivery, EndpointChoice};
use crate::config::MachineRole;
use crate::journal::ACTIONS;
use crate::journal::action::{ActionRecord, begin_action};

#[derive(Default)]
struct Fake {
    /// VMs still there, and how many looks each takes to go.
    vms: Mutex<Vec<(u64, usize)>>,
    terminated: Mutex<bool>,
    contexts_removed: Mutex<bool>,
}

impl DeleteSteps for Fake {
    fn terminate<'a>(&'a self, _plan: &'a DeletePlan) -> BoxFuture<'a, Result<(), String>> {
        *self.terminated.lock().unwrap() = true;
        Box::pin(async { Ok(()) })
    }

    fn remaining<'a>(&'a self, _plan: &'a DeletePlan) -> BoxFuture<'a, Result<Vec<u64>, String>> {
        let mut vms = self.vms.lock().unwrap();
        for vm in vms.iter_mut() {
            vm.1 = vm.1.saturating_sub(1);
        }
        vms.retain(|vm| vm.1 > 0);
        let left = vms.iter().map(|vm| vm.0).collect();
        Box::pin(async move { Ok(left) })
    }

    fn remove_contexts<'a>(
        &'a self,
        _plan: &'a DeletePlan,
    ) -> BoxFuture<'a, Result<String, String>> {
        assert!(
            self.vms.lock().unwrap().is_empty(),
            "contexts only after the VMs"
        );
        *self.contexts_removed.lock().unwrap() = true;
        Box::pin(async { Ok("contexts removed; backups kept".into()) })
    }
}

fn approved_by_dispatcher(dir: &Path, plan: &DeletePlan) -> ApprovedAction {
    let d = Dispatcher::new(false, AuditLog::new(dir.join("audit.log")));
    let Gate::Confirm(p) = d.request(plan.action()) else {
        panic!()
    };
    match d.answer(p, Answer::Typed(plan.cluster.clone())) {
        Verdict::Proceed(a) => a,
        Verdict::Cancelled(w) => panic!("{w}"),
    }
}

fn created(dir: &Path) -> CreateRecord {
    let p = create_plan(3, Delivery::Maintenance, EndpointChoice::FirstControlPlane);
    let mut j = CreateJournal::claim(dir, &p).unwrap();
    j.update(|r| {
        r.vms = (1..=5)
            .map(|id| CreatedVm {
                id,
                name: format!("lab-{id}"),
                role: MachineRole::Worker,
                ip: None,
                fingerprint: None,
            })
            .collect()
    })
    .unwrap();
    j.record().clone()
}

#[tokio::test]
async fn every_vm_goes_then_the_contexts_then_the_journals() {
    let dir = tempfile::tempdir().unwrap();
    let record = created(dir.path());
    let plan = plan_delete(
        DeleteInputs {
            cluster: "lab".into(),
            record: Some(record),
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
    let (tx, _rx) = mpsc::channel(64);
    let bounds = (Duration::from_millis(1), Duration::from_secs(10));
    let summary = run_delete(
        &plan,
        &fake,
        &approved_by_dispatcher(dir.path(), &plan),
        bounds,
        dir.path(),
        tx,
    )
    .await;
    assert!(summary.succeeded(), "{}", summary.line());
    assert!(*fake.contexts_removed.lock().unwrap());
    assert!(!dir.path().join("clusters/lab.json").exists());
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

/// The delete plan of `lab`, which taloscope created with five VMs in `dir`.
fn created_lab(dir: &Path) -> DeletePlan {
    plan_delete(
        DeleteInputs {
            cluster: "lab".into(),
            record: Some(created(dir)),
            ..DeleteInputs::default()
        },
        dir,
    )
}

/// The action journal the delete of `lab` kept in `dir`.
fn action_record(dir: &Path) -> ActionRecord {
    ACTIONS
        .load(&ACTIONS.path_for(dir, "lab"))
        .unwrap()
        .expect("the delete kept its journal")
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
    let (tx, _rx) = mpsc::channel(64);
    let bounds = (Duration::from_millis(1), Duration::from_secs(10));
    let approved = approved_by_dispatcher(dir.path(), &plan);
    let summary = run_delete(&plan, &fake, &approved, bounds, dir.path(), tx).await;
    let err = summary.error.expect("refused");
    assert!(err.starts_with("refused: "), "{err}");
    assert!(!*fake.terminated.lock().unwrap(), "nothing terminated");
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
    let (tx, mut rx) = mpsc::channel(64);
    let bounds = (Duration::from_millis(1), Duration::from_secs(3600));
    let approved = approved_by_dispatcher(dir.path(), &plan);
    let mut run = Box::pin(run_delete(&plan, &fake, &approved, bounds, dir.path(), tx));
    // Four VMs go at the first look; after that line the run only looks again.
    loop {
        tokio::select! {
            _ = &mut run => panic!("the VM never goes"),
            event = rx.recv() => {
                if event.expect("the run is on").line() == "1 VM(s) not gone yet" {
                    break;
                }
            }
        }
    }
    drop(run);
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
    let (tx, _rx) = mpsc::channel(64);
    let bounds = (Duration::from_millis(1), Duration::from_millis(50));
    let summary = run_delete(
        &plan,
        &fake,
        &approved_by_dispatcher(dir.path(), &plan),
        bounds,
        dir.path(),
        tx,
    )
    .await;
    let err = summary.error.expect("timed out");
    assert!(
        err.contains("[3] not gone") && err.contains("contexts are kept"),
        "{err}"
    );
    assert!(!*fake.contexts_removed.lock().unwrap());
    assert!(
        dir.path().join("clusters/lab.json").exists(),
        "journal kept"
    );
}

#[test]
fn without_a_journal_only_adopted_vms_are_known() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = plan_delete(
        DeleteInputs {
            cluster: "old".into(),
            ..DeleteInputs::default()
        },
        dir.path(),
    );
    assert_eq!(unknown.known_by, VmsKnownBy::Unknown);
    assert!(unknown.vms.is_empty());
    let adopted = plan_delete(
        DeleteInputs {
            cluster: "old".into(),
            adopted: vec![KnownVm {
                id: 9,
                name: "old-cp".into(),
            }],
            provider: Some(("one".into(), "http://127.0.0.1:2633/RPC2".into())),
            ..DeleteInputs::default()
        },
        dir.path(),
    );
    assert_eq!(
        (adopted.known_by, adopted.vms.len()),
        (VmsKnownBy::Adopted, 1)
    );
    assert_eq!(
        adopted.action().describe(),
        "delete cluster: terminate 1 VM(s), remove its contexts"
    );
}
