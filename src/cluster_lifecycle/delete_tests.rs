//! The delete against a fake world: contexts go only after every VM is gone, a VM that stays
//! keeps the contexts, and the plan knows the VMs from the journal or `--adopt` only.
use std::sync::Mutex;

use super::*;
use crate::approval::{Answer, AuditLog, Dispatcher, Gate, Verdict};
use crate::cluster_lifecycle::guards::tests::plan as create_plan;
use crate::cluster_lifecycle::journal::{CreateJournal, CreatedVm};
use crate::cluster_lifecycle::plan::{Delivery, EndpointChoice};
use crate::config::MachineRole;

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
        tx,
    )
    .await;
    assert!(summary.succeeded(), "{}", summary.line());
    assert!(*fake.contexts_removed.lock().unwrap());
    assert!(!dir.path().join("clusters/lab.json").exists());
}

#[tokio::test]
async fn a_vm_that_stays_keeps_the_contexts() {
    let dir = tempfile::tempdir().unwrap();
    let plan = plan_delete(
        DeleteInputs {
            cluster: "lab".into(),
            record: Some(created(dir.path())),
            ..DeleteInputs::default()
        },
        dir.path(),
    );
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
