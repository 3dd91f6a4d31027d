//! The one journal every operation keeps: a file per cluster and kind of operation under the
//! state dir, named by one rule, written whole or not at all, read back with an error that
//! names the file, and claimed by one run at a time through an exclusive lock beside it.
pub mod action;

use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::atomic_file::write_atomically;
use crate::run_holder::{Liveness, RunHolder, holder_described};

/// A kind of operation journal: the state dir's folder it lives in and its name in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalKind {
    pub dir: &'static str,
    pub what: &'static str,
}

/// The Talos and Kubernetes upgrades.
pub const ROLLOUTS: JournalKind = JournalKind {
    dir: "rollouts",
    what: "rollout journal",
};
/// VMs a provision started.
pub const PROVISIONS: JournalKind = JournalKind {
    dir: "provisions",
    what: "provision journal",
};
/// A cluster's create (its VMs, bundle, bootstrap), which its delete reads.
pub const CREATES: JournalKind = JournalKind {
    dir: "clusters",
    what: "create journal",
};
/// The node and etcd actions, the CAPI doctor's fixes, a CAPI scale, a CAPI-way upgrade and a
/// delete: the one running on a cluster or the last one left unfinished.
pub const ACTIONS: JournalKind = JournalKind {
    dir: "actions",
    what: "action journal",
};

/// Why a journal could not be read, written or claimed; names the file.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{what} {}: cannot read: {source}", path.display())]
    Read {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{what} {} is corrupt: {reason}; move it away to start again",
        path.display()
    )]
    Corrupt {
        what: &'static str,
        path: PathBuf,
        reason: String,
    },
    #[error("{what} {}: cannot write: {source}", path.display())]
    Write {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "refused: {what} {} is held by a run still alive, {holder}; wait for it to end",
        path.display()
    )]
    Held {
        what: &'static str,
        path: PathBuf,
        holder: String,
    },
}

impl JournalKind {
    /// `<state dir>/<dir>/<cluster>.json`: characters that cannot be in a file name become `_`,
    /// and no name leaves the folder (`..`, a leading dot, the empty name).
    pub fn path_for(&self, state_dir: &Path, cluster: &str) -> PathBuf {
        let safe: String = cluster
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let safe = if safe.is_empty() || safe.starts_with('.') {
            format!("_{safe}")
        } else {
            safe
        };
        state_dir.join(self.dir).join(format!("{safe}.json"))
    }

    /// Reads the journal at `path` (a regular file under the config files' size cap);
    /// `Ok(None)` when there is none.
    pub fn load<T: DeserializeOwned>(&self, path: &Path) -> Result<Option<T>, JournalError> {
        let text = match crate::bounded::read_to_string(path, crate::bounded::CONFIG_FILE_LIMIT) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(JournalError::Read {
                    what: self.what,
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| self.corrupt(path, e.to_string()))
    }

    /// Writes `record` as JSON over `path` atomically and owner-only (`atomic_file`): a reader
    /// sees the old or the new journal, never half of one. Creates the folder.
    pub fn save<T: Serialize>(&self, path: &Path, record: &T) -> Result<(), JournalError> {
        let write_err = |source| JournalError::Write {
            what: self.what,
            path: path.to_path_buf(),
            source,
        };
        let dir = path.parent().unwrap_or_else(|| Path::new("."));
        std::fs::create_dir_all(dir).map_err(write_err)?;
        let mut text = serde_json::to_vec_pretty(record)
            .map_err(|e| write_err(std::io::Error::other(e.to_string())))?;
        text.push(b'\n');
        write_atomically(path, &text, 0o600).map_err(write_err)
    }

    /// A journal that is not what this build reads, naming the file.
    pub fn corrupt(&self, path: &Path, reason: String) -> JournalError {
        JournalError::Corrupt {
            what: self.what,
            path: path.to_path_buf(),
            reason,
        }
    }

    /// Takes the journal at `path` for this run: `<path>.lock` is locked exclusively
    /// (`flock`, released by the kernel when the run ends, however it ends) and names this run.
    /// A lock held by a run still alive refuses, naming it; two runs started at the same moment
    /// cannot both pass.
    pub fn claim(&self, path: &Path) -> Result<JournalClaim, JournalError> {
        let lock = lock_path(path);
        let dir = lock.parent().unwrap_or_else(|| Path::new("."));
        let write_err = |source| JournalError::Write {
            what: self.what,
            path: lock.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(write_err)?;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&lock)
            .map_err(write_err)?;
        // SAFETY: flock on a descriptor this function owns; no memory is shared.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::WouldBlock {
                return Err(write_err(e));
            }
            let holder = std::fs::read_to_string(&lock).unwrap_or_default();
            let holder = match holder.trim() {
                "" => "another run that took it at the same moment".to_string(),
                named => holder_described(named),
            };
            return Err(JournalError::Held {
                what: self.what,
                path: path.to_path_buf(),
                holder,
            });
        }
        let me = RunHolder::this_process().to_string();
        file.set_len(0)
            .and_then(|()| file.write_all(me.as_bytes()))
            .map_err(write_err)?;
        Ok(JournalClaim {
            _lock: Arc::new(LockFile { file }),
        })
    }
}

/// `<journal>.lock`, beside the journal.
fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// The holder named in a journal as messages describe it, when it is a run still alive on this
/// host other than this one (another run must not write the journal meanwhile).
pub fn live_holder(holder: Option<&str>) -> Option<String> {
    let holder = holder?;
    RunHolder::parse(holder)
        .is_some_and(|run| run.liveness() == Liveness::Running)
        .then(|| holder_described(holder))
}

/// The whole-run hold on a journal; the lock goes when the last clone is dropped.
#[derive(Debug, Clone)]
pub struct JournalClaim {
    /// Held, not read: the kernel releases the lock when the last clone closes the file.
    _lock: Arc<LockFile>,
}

/// The locked file. It stays on disk when the run ends (removing it would let a run that opened
/// it just before lock a file no longer at the path); emptied, it names no one.
#[derive(Debug)]
struct LockFile {
    file: std::fs::File,
}

impl Drop for LockFile {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
    }
}

/// A claimed journal of one cluster: its record, written before every change returns.
#[derive(Debug, Clone)]
pub struct Journal<T> {
    kind: JournalKind,
    path: PathBuf,
    record: T,
    /// Held, not read: the lock lasts as long as the journal (and its clones).
    _claim: JournalClaim,
}

impl<T: Serialize + DeserializeOwned> Journal<T> {
    /// Claims the journal at `path` and makes its record: `begin` gets what is on disk (a run
    /// that ended or was killed left it) and returns the record to keep, or why not. The
    /// record is written before this returns.
    pub fn claim<E: From<JournalError>>(
        kind: JournalKind,
        path: PathBuf,
        begin: impl FnOnce(Option<T>) -> Result<T, E>,
    ) -> Result<Journal<T>, E> {
        let claim = kind.claim(&path)?;
        let record = begin(kind.load(&path)?)?;
        let journal = Journal {
            kind,
            path,
            record,
            _claim: claim,
        };
        journal.save()?;
        Ok(journal)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn record(&self) -> &T {
        &self.record
    }

    /// Changes the record and writes it before returning: what the run does next may rely on
    /// it being on disk.
    pub fn update(&mut self, change: impl FnOnce(&mut T)) -> Result<(), JournalError> {
        change(&mut self.record);
        self.save()
    }

    fn save(&self) -> Result<(), JournalError> {
        self.kind.save(&self.path, &self.record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
    struct Record {
        cluster: String,
        steps: u32,
    }

    #[test]
    fn odd_cluster_names_stay_inside_the_kinds_folder() {
        let dir = Path::new("/state");
        for kind in [ROLLOUTS, PROVISIONS, CREATES, ACTIONS] {
            for name in ["../etc", "", ".hidden", "a b", "admin@lab"] {
                let p = kind.path_for(dir, name);
                assert_eq!(p.parent(), Some(dir.join(kind.dir).as_path()), "{name:?}");
            }
        }
        assert!(
            ROLLOUTS
                .path_for(dir, "prod/eu")
                .ends_with("rollouts/prod_eu.json")
        );
        assert!(
            ACTIONS
                .path_for(dir, "admin@lab")
                .ends_with("actions/admin@lab.json")
        );
    }

    #[test]
    fn a_record_is_written_whole_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = ACTIONS.path_for(dir.path(), "lab");
        let mut journal = Journal::claim(ACTIONS, path.clone(), |old: Option<Record>| {
            assert!(old.is_none());
            Ok::<_, JournalError>(Record {
                cluster: "lab".into(),
                steps: 0,
            })
        })
        .unwrap();
        journal.update(|r| r.steps = 2).unwrap();
        let back: Record = ACTIONS.load(&path).unwrap().unwrap();
        assert_eq!(back.steps, 2);
        let names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names.len(),
            2,
            "the journal and its lock, no temp file: {names:?}"
        );
        assert!(ACTIONS.claim(&path).is_err(), "held while the run lives");
        drop(journal);
        assert!(ACTIONS.claim(&path).is_ok(), "the lock goes with the run");
    }

    #[test]
    fn a_second_claim_while_the_first_holds_is_refused_naming_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = CREATES.path_for(dir.path(), "twin");
        let first = CREATES.claim(&path).unwrap();
        let second = CREATES.claim(&path).unwrap_err();
        assert!(matches!(second, JournalError::Held { .. }), "{second}");
        assert!(second.to_string().contains("twin.json"), "{second}");
        drop(first);
        assert!(CREATES.claim(&path).is_ok());
    }

    #[test]
    fn a_killed_runs_lock_is_no_hold() {
        let dir = tempfile::tempdir().unwrap();
        let path = CREATES.path_for(dir.path(), "killed");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(lock_path(&path), "root@elsewhere/1-1").unwrap();
        assert!(CREATES.claim(&path).is_ok(), "no process holds the lock");
    }

    #[test]
    fn claims_raced_from_many_threads_let_exactly_one_through() {
        let dir = tempfile::tempdir().unwrap();
        let path = CREATES.path_for(dir.path(), "race");
        let barrier = std::sync::Barrier::new(8);
        let won = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        CREATES.claim(&path).ok()
                    })
                })
                .collect();
            let claims: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            claims.iter().filter(|c| c.is_some()).count()
        });
        assert_eq!(won, 1);
    }

    #[test]
    fn a_corrupt_journal_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = PROVISIONS.path_for(dir.path(), "lab");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{\"cluster\": ").unwrap();
        let err = PROVISIONS.load::<Record>(&path).unwrap_err().to_string();
        assert!(
            err.contains("provision journal") && err.contains("lab.json"),
            "{err}"
        );
        assert!(err.contains("corrupt"), "{err}");
    }
}
