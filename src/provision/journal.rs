//! The journal of VMs a provision started, per cluster, at
//! `<state dir>/provisions/<cluster>.json`, rewritten atomically on every
//! change so a console killed mid-provision shows them when reopened; the run
//! writing it is named in it, so a second live run is refused.
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::progress::VmProgress;
use crate::journal::{JournalClaim, PROVISIONS, live_holder};
use crate::run_holder::RunHolder;

pub use crate::journal::JournalError;

/// One VM the console started. A VM is its provider's endpoint and its id there: two front
/// ends configured under one provider name never share an entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalEntry {
    pub provider: String,
    /// The provider's endpoint when the VM was started; empty in journals written before
    /// endpoints were kept (those entries go by the provider's name).
    #[serde(default)]
    pub endpoint: String,
    pub role: String,
    /// When it was asked for (RFC 3339 UTC).
    pub started: String,
    #[serde(flatten)]
    pub progress: VmProgress,
}

/// A provider as the journal keys its VMs: its name, and the endpoint its VM ids belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderAt<'a> {
    pub name: &'a str,
    pub endpoint: &'a str,
}

impl JournalEntry {
    /// Whether this VM lives on `provider`'s endpoint (an entry without an endpoint: under
    /// its name).
    pub fn is_on(&self, provider: &ProviderAt<'_>) -> bool {
        if self.endpoint.is_empty() {
            self.provider == provider.name
        } else {
            self.endpoint == provider.endpoint
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalFile {
    pub cluster: String,
    /// The run (`user@host/pid-start`) that last took the journal to write VMs into it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
    pub vms: Vec<JournalEntry>,
}

/// The journal file at `path`; an empty one for `cluster` when there is none.
fn read_file(path: &Path, cluster: &str) -> Result<JournalFile, JournalError> {
    Ok(PROVISIONS.load(path)?.unwrap_or_else(|| JournalFile {
        cluster: cluster.to_string(),
        holder: None,
        vms: Vec::new(),
    }))
}

/// A cluster's provision journal.
#[derive(Debug, Clone)]
pub struct ProvisionJournal {
    path: PathBuf,
    file: JournalFile,
    /// This run's hold, once it claimed the journal to write VMs into it.
    claim: Option<JournalClaim>,
}

impl ProvisionJournal {
    /// Opens (or starts) the journal of `cluster`.
    pub fn open(state_dir: &Path, cluster: &str) -> Result<ProvisionJournal, JournalError> {
        let path = PROVISIONS.path_for(state_dir, cluster);
        let file = read_file(&path, cluster)?;
        Ok(ProvisionJournal {
            path,
            file,
            claim: None,
        })
    }

    /// Takes the journal for this run before it writes VMs into it: refused while another run
    /// holds its lock or, still alive, is named in it (the two would write over each other's
    /// VMs). The file is read again first, so VMs written since it was opened are kept.
    pub fn claim(&mut self) -> Result<(), JournalError> {
        let claim = PROVISIONS.claim(&self.path)?;
        let on_disk = read_file(&self.path, &self.file.cluster)?;
        if let Some(holder) = live_holder(on_disk.holder.as_deref()) {
            return Err(JournalError::Held {
                what: PROVISIONS.what,
                path: self.path.clone(),
                holder,
            });
        }
        self.claim = Some(claim);
        self.file = JournalFile {
            holder: Some(RunHolder::this_process().to_string()),
            ..on_disk
        };
        self.save()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn entries(&self) -> &[JournalEntry] {
        &self.file.vms
    }

    /// Adds or updates the entry for the VM with this id on this provider's endpoint (or,
    /// before it has an id, this name), then writes the file.
    pub fn record(
        &mut self,
        provider: &ProviderAt<'_>,
        role: &str,
        progress: &VmProgress,
    ) -> Result<(), JournalError> {
        let existing = self.file.vms.iter_mut().find(|e| {
            e.is_on(provider)
                && match (e.progress.id, progress.id) {
                    (Some(a), Some(b)) => a == b,
                    (None, _) => e.progress.name == progress.name,
                    (Some(_), None) => false,
                }
        });
        match existing {
            Some(entry) => {
                entry.progress = progress.clone();
                entry.endpoint = provider.endpoint.to_string();
            }
            None => self.file.vms.push(JournalEntry {
                provider: provider.name.to_string(),
                endpoint: provider.endpoint.to_string(),
                role: role.to_string(),
                started: crate::clock::utc_timestamp(std::time::SystemTime::now()),
                progress: progress.clone(),
            }),
        }
        self.save()
    }

    fn save(&self) -> Result<(), JournalError> {
        PROVISIONS.save(&self.path, &self.file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provision::progress::ProvisionStage;

    fn progress(id: Option<u64>, name: &str, stage: ProvisionStage) -> VmProgress {
        VmProgress {
            id,
            name: name.into(),
            state: "PENDING".into(),
            lcm_state: "LCM_INIT".into(),
            ip: None,
            stage,
            reason: None,
        }
    }

    const LAB: ProviderAt<'static> = ProviderAt {
        name: "lab",
        endpoint: "http://127.0.0.1:2633/RPC2",
    };

    #[test]
    fn records_update_in_place_and_reload() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = ProvisionJournal::open(dir.path(), "healthy").unwrap();
        j.record(
            &LAB,
            "worker",
            &progress(Some(5), "healthy-worker-1", ProvisionStage::Creating),
        )
        .unwrap();
        j.record(
            &LAB,
            "worker",
            &progress(Some(6), "healthy-worker-2", ProvisionStage::Creating),
        )
        .unwrap();
        j.record(
            &LAB,
            "worker",
            &progress(Some(5), "healthy-worker-1", ProvisionStage::Joined),
        )
        .unwrap();
        let again = ProvisionJournal::open(dir.path(), "healthy").unwrap();
        assert_eq!(again.entries().len(), 2);
        assert_eq!(again.entries()[0].progress.stage, ProvisionStage::Joined);
        assert_eq!(again.path(), dir.path().join("provisions/healthy.json"));
    }

    #[test]
    fn two_front_ends_under_one_provider_name_never_share_a_vm() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = ProvisionJournal::open(dir.path(), "healthy").unwrap();
        let other = ProviderAt {
            name: "lab",
            endpoint: "http://127.0.0.2:2633/RPC2",
        };
        let vm = |stage| progress(Some(5), "healthy-worker-1", stage);
        j.record(&LAB, "worker", &vm(ProvisionStage::Creating))
            .unwrap();
        j.record(&other, "worker", &vm(ProvisionStage::Failed))
            .unwrap();
        j.record(&LAB, "worker", &vm(ProvisionStage::Joined))
            .unwrap();
        let again = ProvisionJournal::open(dir.path(), "healthy").unwrap();
        let stages: Vec<_> = again
            .entries()
            .iter()
            .map(|e| (e.endpoint.as_str(), e.progress.stage))
            .collect();
        assert_eq!(
            stages,
            vec![
                (LAB.endpoint, ProvisionStage::Joined),
                (other.endpoint, ProvisionStage::Failed)
            ]
        );
        assert!(again.entries()[0].is_on(&LAB) && !again.entries()[0].is_on(&other));
    }

    #[test]
    fn an_entry_from_before_endpoints_goes_by_the_provider_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = PROVISIONS.path_for(dir.path(), "healthy");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let old = r#"{"cluster": "healthy", "vms": [{"provider": "lab", "role": "worker",
            "started": "2026-11-30T15:20:57Z", "id": 5, "name": "healthy-worker-1",
            "state": "PENDING", "lcm_state": "LCM_INIT", "ip": null, "stage": "creating",
            "reason": null}]}"#;
        std::fs::write(&path, old).unwrap();
        let mut j = ProvisionJournal::open(dir.path(), "healthy").unwrap();
        assert!(j.entries()[0].is_on(&LAB));
        j.record(
            &LAB,
            "worker",
            &progress(Some(5), "healthy-worker-1", ProvisionStage::Joined),
        )
        .unwrap();
        assert_eq!(j.entries().len(), 1);
        assert_eq!(j.entries()[0].endpoint, LAB.endpoint);
    }

    #[test]
    fn a_second_run_is_refused_while_the_first_lives() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .expect("sleep runs");
        let theirs = RunHolder::of_local_process(first.id()).expect("a live child");
        let mut j = ProvisionJournal::open(dir.path(), "healthy").unwrap();
        j.record(
            &LAB,
            "worker",
            &progress(Some(5), "w-1", ProvisionStage::Creating),
        )
        .unwrap();
        j.file.holder = Some(theirs.to_string());
        j.save().unwrap();
        let mut second = ProvisionJournal::open(dir.path(), "healthy").unwrap();
        let err = second.claim().unwrap_err().to_string();
        assert!(
            err.starts_with("refused: provision journal ")
                && err.contains(&format!("(pid {} on ", first.id())),
            "{err}"
        );
        first.kill().unwrap();
        first.wait().unwrap();
        second.claim().expect("the first run is gone");
        let again = ProvisionJournal::open(dir.path(), "healthy").unwrap();
        assert_eq!(
            again.file.holder,
            Some(RunHolder::this_process().to_string())
        );
        assert_eq!(again.entries().len(), 1, "the first run's VM is kept");
    }

    #[test]
    fn odd_names_stay_inside_and_corrupt_files_are_named() {
        let p = PROVISIONS.path_for(Path::new("/s"), "../x/y");
        assert_eq!(p, Path::new("/s/provisions/_.._x_y.json"));
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("provisions")).unwrap();
        std::fs::write(dir.path().join("provisions/c.json"), "{nope").unwrap();
        let err = ProvisionJournal::open(dir.path(), "c")
            .unwrap_err()
            .to_string();
        assert!(err.contains("provisions/c.json"), "{err}");
    }
}
