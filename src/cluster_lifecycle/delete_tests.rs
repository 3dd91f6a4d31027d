//! The delete's plan knows the VMs from the journal or `--adopt` only; the fake world
//! `operation::delete`'s tests run a delete against.
use std::sync::Mutex;

use super::*;
use crate::cluster_lifecycle::guards::tests::plan as create_plan;
use crate::cluster_lifecycle::journal::{CreateJournal, CreatedVm};
use crate::cluster_lifecycle::plan::{Delivery, EndpointChoice};
use crate::config::MachineRole;

/// A world whose VMs go after some looks.
#[derive(Default)]
pub(crate) struct Fake {
    /// VMs still there, and how many looks each takes to go.
    pub vms: Mutex<Vec<(u64, usize)>>,
    pub terminated: Mutex<bool>,
    pub contexts_removed: Mutex<bool>,
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

/// The create record of `lab` with five workers, its create journal written in `dir`.
pub(crate) fn created(dir: &Path) -> CreateRecord {
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

/// The delete plan of `lab`, which taloscope created with five VMs in `dir`.
pub(crate) fn created_lab(dir: &Path) -> DeletePlan {
    plan_delete(
        DeleteInputs {
            cluster: "lab".into(),
            record: Some(created(dir)),
            ..DeleteInputs::default()
        },
        dir,
    )
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
