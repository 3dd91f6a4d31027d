//! Writing a file the operator owns as kubectl writes its kubeconfig (client-go
//! tools/clientcmd/loader.go): `<file>.lock` taken with O_CREATE|O_EXCL first, its directory
//! made when missing, and removed after, so kubectl and taloscope never write it at once (a
//! lock left by a taloscope run that was killed is taken over once its process is gone); the
//! text goes to the file a symlink points to (the link stays); the file keeps its mode, and one
//! without its owner's write permission is refused; a backup comes first, and only the newest
//! few (taloscope's config `kept_backups`) are kept.
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::run_holder::{Liveness, RunHolder};

/// Why an operator's file was not written; names the file.
#[derive(Debug, thiserror::Error)]
pub enum OperatorFileError {
    #[error(
        "{}: {} exists: another program (kubectl?) is writing it; try again, or remove the lock if none is",
        file.display(),
        lock.display()
    )]
    Locked { file: PathBuf, lock: PathBuf },
    #[error(
        "{}: read-only (mode {mode:04o}): taloscope does not change a file you made read-only; chmod u+w it or name another file",
        file.display()
    )]
    ReadOnly { file: PathBuf, mode: u32 },
    #[error("{}: {step}: {source}", file.display())]
    Io {
        file: PathBuf,
        step: &'static str,
        source: std::io::Error,
    },
}

/// `<file>.lock`, held while taloscope writes `file`; removed when dropped.
#[derive(Debug)]
pub struct FileLock {
    lock: PathBuf,
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.lock);
    }
}

/// Takes `<file>.lock` as client-go's `lockFile` does: the directory made (0755) when missing,
/// the lock created exclusively; a lock already there is another writer's.
pub fn lock(file: &Path) -> Result<FileLock, OperatorFileError> {
    let io = |step, source| OperatorFileError::Io {
        file: file.to_path_buf(),
        step,
        source,
    };
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(dir)
            .map_err(|e| io("cannot make its directory", e))?;
    }
    let lock = lock_path(file);
    // Our lock names its run, so a run killed while holding it is told from a live writer;
    // kubectl's are empty and always respected.
    let take = || take_naming_this_run(&lock);
    match take() {
        Ok(()) => return Ok(FileLock { lock }),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io("cannot take its lock", e)),
    }
    if lock_left_by_gone_run(&lock) && std::fs::remove_file(&lock).is_ok() && take().is_ok() {
        return Ok(FileLock { lock });
    }
    Err(OperatorFileError::Locked {
        file: file.to_path_buf(),
        lock,
    })
}

/// Creates `lock` exclusively, already holding this run's name: the name is written to a file
/// of this process's own beside it, which is then hard-linked to `lock` (a link, like O_EXCL,
/// fails when `lock` exists). A run killed at any instant so leaves either no lock or one naming
/// it, never an empty one that would read as kubectl's for good. Where the filesystem has no
/// hard links, the lock is created with O_EXCL and then written.
fn take_naming_this_run(lock: &Path) -> std::io::Result<()> {
    let holder = RunHolder::this_process().to_string();
    let mut own = lock.as_os_str().to_owned();
    own.push(format!(".{}", std::process::id()));
    let own = PathBuf::from(own);
    let _ = std::fs::remove_file(&own);
    let linked = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&own)
        .and_then(|mut f| f.write_all(holder.as_bytes()))
        .and_then(|()| std::fs::hard_link(&own, lock));
    let _ = std::fs::remove_file(&own);
    match linked {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(lock)?;
            f.write_all(holder.as_bytes())
        }
        other => other,
    }
}

fn lock_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// A lock naming a taloscope run whose process is gone (kubectl's are empty: never gone).
fn lock_left_by_gone_run(lock: &Path) -> bool {
    let holder = std::fs::read_to_string(lock).unwrap_or_default();
    RunHolder::parse(holder.trim()).is_some_and(|h| h.liveness() == Liveness::Gone)
}

/// Room a merge needs beyond the file's own size twice (its backup and its rewrite): the new
/// entries, certificates and keys included, with margin.
const MERGE_ROOM: u64 = 256 * 1024;

/// What [`lock`], [`backup`] and the write of `file` would refuse, checked without writing:
/// another writer's `<file>.lock`, a read-only file, a directory that cannot be made or written,
/// too little free space. The nearest existing directory is what a missing one is made in.
pub fn check_can_write(file: &Path) -> Result<(), OperatorFileError> {
    let lock = lock_path(file);
    if lock.exists() && !lock_left_by_gone_run(&lock) {
        return Err(OperatorFileError::Locked {
            file: file.to_path_buf(),
            lock,
        });
    }
    let target = write_target(file);
    check_writable(&target)?;
    let io = |step, source| OperatorFileError::Io {
        file: target.clone(),
        step,
        source,
    };
    if target.exists() && !accessible(&target, libc::W_OK) {
        return Err(io(
            "you may not write it",
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        ));
    }
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if target != file && !dir.is_dir() {
        // The lock makes the link's directory, as kubectl does; not the one it points into.
        return Err(io(
            "it is where a symlink points, in a directory that does not exist",
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    let existing = dir
        .ancestors()
        .find(|d| d.exists())
        .unwrap_or(Path::new("/"));
    if !existing.is_dir() {
        return Err(io(
            "its directory cannot be made",
            std::io::Error::other(format!("{} is not a directory", existing.display())),
        ));
    }
    if !accessible(existing, libc::W_OK | libc::X_OK) {
        return Err(io(
            "its directory is not writable (the lock, the backup and the new text go there)",
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        ));
    }
    let size = std::fs::metadata(&target).map_or(0, |m| m.len());
    let needed = size * 2 + MERGE_ROOM;
    match free_bytes(existing) {
        Some(free) if free < needed => Err(io(
            "too little free space",
            std::io::Error::other(format!(
                "{free} bytes free in {}, the backup and the rewrite need about {needed}",
                existing.display()
            )),
        )),
        _ => Ok(()),
    }
}

/// access(2) for the real user, as the write will be made.
fn accessible(path: &Path, mode: libc::c_int) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

/// The bytes an unprivileged user may still write on the filesystem holding `dir`.
#[allow(clippy::useless_conversion)] // the field types differ between targets
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt as _;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c` is a valid path and `stat` is written by statvfs before it is read.
    let stat = unsafe {
        if libc::statvfs(c.as_ptr(), stat.as_mut_ptr()) != 0 {
            return None;
        }
        stat.assume_init()
    };
    Some(u64::from(stat.f_bavail).saturating_mul(u64::from(stat.f_frsize)))
}

/// The file a write of `file` goes to: the end of its symlinks (relative links read from the
/// link's directory), or `file` itself.
pub fn write_target(file: &Path) -> PathBuf {
    let mut at = file.to_path_buf();
    // A bound on the chain, as the kernel's (40) has.
    for _ in 0..40 {
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            break;
        };
        if !meta.file_type().is_symlink() {
            break;
        }
        let Ok(next) = std::fs::read_link(&at) else {
            break;
        };
        at = match at.parent() {
            Some(dir) if next.is_relative() => dir.join(next),
            _ => next,
        };
    }
    at
}

/// Refuses a file whose owner may not write it (0400, 0444): someone made it read-only.
pub fn check_writable(target: &Path) -> Result<(), OperatorFileError> {
    match std::fs::metadata(target) {
        Ok(meta) => {
            let mode = meta.permissions().mode() & 0o7777;
            if mode & 0o200 == 0 {
                Err(OperatorFileError::ReadOnly {
                    file: target.to_path_buf(),
                    mode,
                })
            } else {
                Ok(())
            }
        }
        Err(_) => Ok(()),
    }
}

/// A warning when `target`, which will hold `what`, is readable by group or others.
pub fn exposure_warning(target: &Path, what: &str) -> Option<String> {
    let mode = std::fs::metadata(target).ok()?.permissions().mode() & 0o7777;
    (mode & 0o077 != 0).then(|| {
        format!(
            "{} is readable by others (mode {mode:04o}) and now holds {what}: chmod 600 {}",
            target.display(),
            target.display()
        )
    })
}

/// `FILE.taloscope-backup-<YYYYMMDDTHHMMSSZ>` beside `file` as named (`.1`, `.2`… after it
/// when that name is taken), a copy of what it holds, owner-only; the oldest beyond
/// newest `keep` removed. `None` when there is no file yet.
pub fn backup(
    file: &Path,
    now: SystemTime,
    keep: usize,
) -> Result<Option<PathBuf>, OperatorFileError> {
    if !file.exists() {
        return Ok(None);
    }
    let stamp: String = crate::clock::utc_timestamp(now)
        .chars()
        .filter(|c| *c != '-' && *c != ':')
        .collect();
    // Two changes within one second (a delete removing a talos and a kube context of
    // different names) must not overwrite the first backup, which holds the original.
    let target = (0..)
        .map(|n| {
            let mut name = file.as_os_str().to_owned();
            name.push(format!(".taloscope-backup-{stamp}"));
            if n > 0 {
                name.push(format!(".{n}"));
            }
            PathBuf::from(name)
        })
        .find(|candidate| std::fs::symlink_metadata(candidate).is_err())
        .expect("an unused name");
    let bytes = std::fs::read(file).map_err(|source| OperatorFileError::Io {
        file: file.to_path_buf(),
        step: "cannot read it for its backup",
        source,
    })?;
    crate::atomic_file::write_atomically(&target, &bytes, 0o600).map_err(|source| {
        OperatorFileError::Io {
            file: target.clone(),
            step: "cannot write the backup",
            source,
        }
    })?;
    prune_backups(file, keep.max(1));
    Ok(Some(target))
}

/// Removes the oldest backups of `file` beyond the newest `keep` (their names sort by time).
fn prune_backups(file: &Path, keep: usize) {
    let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let lead = format!("{}.taloscope-backup-", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut backups: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            let rest = n.strip_prefix(&lead)?.to_string();
            Some((rest, e.path()))
        })
        .collect();
    backups.sort_by(|a, b| crate::natural::natural_cmp(&a.0, &b.0));
    let excess = backups.len().saturating_sub(keep);
    for (_, path) in backups.into_iter().take(excess) {
        let _ = std::fs::remove_file(path);
    }
}

/// Writes `text` to `target` atomically with its current mode (0600 for a new file).
pub fn write_keeping_mode(target: &Path, text: &str) -> Result<(), OperatorFileError> {
    let mode = std::fs::metadata(target).map_or(0o600, |m| m.permissions().mode() & 0o7777);
    crate::atomic_file::write_atomically(target, text.as_bytes(), mode).map_err(|source| {
        OperatorFileError::Io {
            file: target.to_path_buf(),
            step: "cannot write it",
            source,
        }
    })
}
