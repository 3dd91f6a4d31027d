//! The journal of VMs a provision started, per cluster, at
//! `<state dir>/provisions/<cluster>.json`, rewritten atomically on every
//! change so a console killed mid-provision shows them when reopened.
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::progress::VmProgress;

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("provision journal {}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("provision journal {}: not a journal: {message}", path.display())]
    Corrupt { path: PathBuf, message: String },
}

/// One VM the console started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalEntry {
    pub provider: String,
    pub role: String,
    /// When it was asked for (RFC 3339 UTC).
    pub started: String,
    #[serde(flatten)]
    pub progress: VmProgress,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalFile {
    pub cluster: String,
    pub vms: Vec<JournalEntry>,
}

/// A cluster's provision journal.
#[derive(Debug, Clone)]
pub struct ProvisionJournal {
    path: PathBuf,
    file: JournalFile,
}

impl ProvisionJournal {
    /// `<state dir>/provisions/<cluster>.json`; the cluster name is made
    /// safe for a file name.
    pub fn path_for(state_dir: &Path, cluster: &str) -> PathBuf {
        let safe: String = cluster
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let safe = if safe.starts_with('.') || safe.is_empty() {
            format!("_{safe}")
        } else {
            safe
        };
        state_dir.join("provisions").join(format!("{safe}.json"))
    }

    /// Opens (or starts) the journal of `cluster`.
    pub fn open(state_dir: &Path, cluster: &str) -> Result<ProvisionJournal, JournalError> {
        let path = Self::path_for(state_dir, cluster);
        let file = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| JournalError::Corrupt {
                path: path.clone(),
                message: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => JournalFile {
                cluster: cluster.to_string(),
                vms: Vec::new(),
            },
            Err(e) => {
                return Err(JournalError::Io {
                    path,
                    message: format!("cannot read: {e}"),
                });
            }
        };
        Ok(ProvisionJournal { path, file })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn entries(&self) -> &[JournalEntry] {
        &self.file.vms
    }

    /// Adds or updates the entry for the VM with this id (or, before it has
    /// one, this name), then writes the file.
    pub fn record(
        &mut self,
        provider: &str,
        role: &str,
        progress: &VmProgress,
    ) -> Result<(), JournalError> {
        let existing = self.file.vms.iter_mut().find(|e| {
            e.provider == provider
                && match (e.progress.id, progress.id) {
                    (Some(a), Some(b)) => a == b,
                    (None, _) => e.progress.name == progress.name,
                    (Some(_), None) => false,
                }
        });
        match existing {
            Some(entry) => entry.progress = progress.clone(),
            None => self.file.vms.push(JournalEntry {
                provider: provider.to_string(),
                role: role.to_string(),
                started: crate::clock::utc_timestamp(std::time::SystemTime::now()),
                progress: progress.clone(),
            }),
        }
        self.save()
    }

    /// Writes to a temporary file in the same directory, then renames it over
    /// the journal: a reader sees the old or the new file, never half of one.
    fn save(&self) -> Result<(), JournalError> {
        let io = |message: String| JournalError::Io {
            path: self.path.clone(),
            message,
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)
            .map_err(|e| io(format!("cannot create the directory: {e}")))?;
        let text = serde_json::to_string_pretty(&self.file)
            .map_err(|e| io(format!("cannot encode: {e}")))?;
        let mut tmp =
            tempfile::NamedTempFile::new_in(dir).map_err(|e| io(format!("cannot write: {e}")))?;
        std::io::Write::write_all(&mut tmp, text.as_bytes())
            .and_then(|()| tmp.as_file().sync_all())
            .map_err(|e| io(format!("cannot write: {e}")))?;
        tmp.persist(&self.path)
            .map_err(|e| io(format!("cannot replace: {}", e.error)))?;
        Ok(())
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

    #[test]
    fn records_update_in_place_and_reload() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = ProvisionJournal::open(dir.path(), "healthy").unwrap();
        j.record(
            "lab",
            "worker",
            &progress(Some(5), "healthy-worker-1", ProvisionStage::Creating),
        )
        .unwrap();
        j.record(
            "lab",
            "worker",
            &progress(Some(6), "healthy-worker-2", ProvisionStage::Creating),
        )
        .unwrap();
        j.record(
            "lab",
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
    fn odd_names_stay_inside_and_corrupt_files_are_named() {
        let p = ProvisionJournal::path_for(Path::new("/s"), "../x/y");
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
