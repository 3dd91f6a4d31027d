//! The create journal of one cluster, `<state dir>/clusters/<cluster>.json`: the plan, the
//! VMs created (ids before anything else happens to them), the secrets bundle's path, the VMs
//! configured, and "bootstrap sent" written BEFORE Bootstrap is sent, so a killed run resumes
//! without a second set of VMs or a second Bootstrap. Held by its run like a provision journal;
//! a delete reads it to know the cluster's VMs.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::plan::CreatePlan;
use super::progress::CreatePhase;
use crate::cluster_config::MergedEntries;
use crate::config::MachineRole;
use crate::journal::{CREATES, Journal, JournalError, live_holder};
use crate::run_holder::RunHolder;

#[derive(Debug, thiserror::Error)]
pub enum CreateJournalError {
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error(
        "create journal {} is for another plan ({theirs}); finish or delete that cluster first",
        path.display()
    )]
    OtherPlan { path: PathBuf, theirs: String },
}

/// One VM the create made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedVm {
    pub id: u64,
    pub name: String,
    pub role: MachineRole,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
    /// The maintenance API's certificate fingerprint the operator confirmed: a resumed run
    /// applies the config to that certificate only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

/// When Bootstrap was sent, and to which node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootstrapSent {
    pub node: String,
    /// RFC 3339 UTC.
    pub at: String,
    /// The node answered "bootstrap is not available yet" (it did not bootstrap): a resumed
    /// run may send it again. False while the outcome is unknown or it was accepted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_available_yet: bool,
}

/// The journal as kept on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateRecord {
    pub cluster: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
    pub plan: CreatePlan,
    /// The VMs were asked for (set before the provider is called: a run killed in the middle
    /// looks for them by name instead of asking again).
    #[serde(default)]
    pub vms_requested: bool,
    #[serde(default)]
    pub vms: Vec<CreatedVm>,
    /// The OneFlow service, when the VMs are a service's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<u64>,
    /// The Kubernetes endpoint as resolved (`https://HOST:6443`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The secrets bundle once written: a resumed run loads it, never generates another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<PathBuf>,
    /// VM ids whose config was applied (maintenance) or whose Talos answered (user-data).
    #[serde(default)]
    pub configured: BTreeSet<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_sent: Option<BootstrapSent>,
    /// The furthest phase done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<CreatePhase>,
    /// Every entry the run merged into the operator's files, with its fingerprint: what a
    /// delete removes, and nothing else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergedEntries>,
}

impl CreateRecord {
    pub fn is_done(&self, phase: CreatePhase) -> bool {
        self.done.is_some_and(|d| d >= phase)
    }

    /// The VMs of one role, in creation order.
    pub fn vms_of(&self, role: MachineRole) -> impl Iterator<Item = &CreatedVm> {
        self.vms.iter().filter(move |v| v.role == role)
    }
}

/// A cluster's create journal, held by its run from the claim until it is dropped.
#[derive(Debug, Clone)]
pub struct CreateJournal {
    journal: Journal<CreateRecord>,
}

impl CreateJournal {
    /// Where the secrets bundle of `cluster` is kept.
    pub fn bundle_path_for(state_dir: &Path, cluster: &str) -> PathBuf {
        let journal = CREATES.path_for(state_dir, cluster);
        journal.with_extension("secrets.yaml")
    }

    /// The journal of `cluster`, if there is one.
    pub fn read(
        state_dir: &Path,
        cluster: &str,
    ) -> Result<Option<CreateRecord>, CreateJournalError> {
        read_record(&CREATES.path_for(state_dir, cluster))
    }

    /// Takes the journal of `plan.cluster` for this run: a new one, or the one a killed run
    /// of the same plan left (resumed). Exclusive before anything is read, so of two creates
    /// of one name started together exactly one runs; refused while another live run holds
    /// it, or when it is another plan's.
    pub fn claim(state_dir: &Path, plan: &CreatePlan) -> Result<CreateJournal, CreateJournalError> {
        let path = CREATES.path_for(state_dir, &plan.cluster);
        let begin = |on_disk: Option<CreateRecord>| {
            let mut record = match on_disk {
                None => CreateRecord::new(plan),
                Some(theirs) => {
                    if let Some(holder) = live_holder(theirs.holder.as_deref()) {
                        return Err(CreateJournalError::Journal(JournalError::Held {
                            what: CREATES.what,
                            path: path.clone(),
                            holder,
                        }));
                    }
                    if !same_request(&theirs.plan, plan) {
                        return Err(CreateJournalError::OtherPlan {
                            path: path.clone(),
                            theirs: theirs.plan.action().describe(),
                        });
                    }
                    theirs
                }
            };
            record.holder = Some(RunHolder::this_process().to_string());
            Ok(record)
        };
        let journal = Journal::claim(CREATES, path.clone(), begin)?;
        Ok(CreateJournal { journal })
    }

    pub fn path(&self) -> &Path {
        self.journal.path()
    }

    pub fn record(&self) -> &CreateRecord {
        self.journal.record()
    }

    /// Changes the record and writes it before returning: what the run does next may rely on
    /// it being on disk.
    pub fn update(
        &mut self,
        change: impl FnOnce(&mut CreateRecord),
    ) -> Result<(), CreateJournalError> {
        Ok(self.journal.update(change)?)
    }

    /// Lets the journal go: the run ended (a later run may resume it once this one is dropped).
    pub fn release(&mut self) -> Result<(), CreateJournalError> {
        self.update(|r| r.holder = None)
    }
}

impl CreateRecord {
    /// The record of a create not yet begun.
    fn new(plan: &CreatePlan) -> CreateRecord {
        CreateRecord {
            cluster: plan.cluster.clone(),
            holder: None,
            plan: plan.clone(),
            vms_requested: false,
            vms: Vec::new(),
            service: None,
            endpoint: None,
            bundle: None,
            configured: BTreeSet::new(),
            bootstrap_sent: None,
            done: None,
            merged: None,
        }
    }
}

/// The same cluster asked for the same way (the paths of the run's own files aside).
fn same_request(a: &CreatePlan, b: &CreatePlan) -> bool {
    a.action() == b.action()
        && a.source == b.source
        && a.delivery == b.delivery
        && a.endpoint == b.endpoint
        && a.kubernetes == b.kubernetes
}

pub(super) fn read_record(path: &Path) -> Result<Option<CreateRecord>, CreateJournalError> {
    Ok(CREATES.load(path)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster_lifecycle::guards::tests::plan;
    use crate::cluster_lifecycle::plan::{Delivery, EndpointChoice};

    fn lab() -> CreatePlan {
        plan(3, Delivery::Maintenance, EndpointChoice::FirstControlPlane)
    }

    #[test]
    fn a_claimed_journal_is_written_and_resumed_by_the_same_plan_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = CreateJournal::claim(dir.path(), &lab()).unwrap();
        assert_eq!(j.path(), dir.path().join("clusters/lab.json"));
        j.update(|r| {
            r.vms_requested = true;
            r.vms.push(CreatedVm {
                id: 4,
                name: "lab-controlplane-1".into(),
                role: MachineRole::Controlplane,
                ip: None,
                fingerprint: None,
            });
        })
        .unwrap();
        let again = CreateJournal::read(dir.path(), "lab").unwrap().unwrap();
        assert_eq!(again.vms.len(), 1);
        assert!(again.vms_requested);
        drop(j);
        let mut other = lab();
        other.workers = 5;
        let err = CreateJournal::claim(dir.path(), &other).unwrap_err();
        assert!(matches!(err, CreateJournalError::OtherPlan { .. }), "{err}");
        let resumed = CreateJournal::claim(dir.path(), &lab()).unwrap();
        assert_eq!(resumed.record().vms[0].id, 4);
    }

    #[test]
    fn a_live_holder_keeps_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .expect("sleep runs");
        let theirs = RunHolder::of_local_process(first.id()).expect("a live child");
        let mut j = CreateJournal::claim(dir.path(), &lab()).unwrap();
        j.update(|r| r.holder = Some(theirs.to_string())).unwrap();
        let err = CreateJournal::claim(dir.path(), &lab())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("refused: create journal "), "{err}");
        drop(j);
        let err = CreateJournal::claim(dir.path(), &lab())
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("(pid {} on ", first.id())), "{err}");
        first.kill().unwrap();
        first.wait().unwrap();
        CreateJournal::claim(dir.path(), &lab()).expect("the first run is gone");
    }

    #[test]
    fn the_bundle_lives_beside_the_journal_and_odd_names_stay_inside() {
        let p = CreateJournal::bundle_path_for(Path::new("/s"), "lab");
        assert_eq!(p, Path::new("/s/clusters/lab.secrets.yaml"));
        let p = CREATES.path_for(Path::new("/s"), "../x");
        assert_eq!(p, Path::new("/s/clusters/_.._x.json"));
    }
}
