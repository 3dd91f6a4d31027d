//! An etcd snapshot written to a local file whole or not at all: the stream goes to a
//! temporary `.part` file beside the target (mode 0600: it holds every secret of the
//! cluster), is checked against the SHA-256 etcd appends, synced, and only then renamed into
//! place. The target is a new file, or an existing regular file when the operator said
//! `--overwrite`; never a device, FIFO, socket, directory or symlink. A `.part` left by a
//! killed run is removed by the next snapshot to the same name; SIGTERM removes it at once.
use std::io::Write;
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::Stream;
use futures::StreamExt;
use serde::Serialize;

use crate::run_holder::RunHolder;
use crate::talos::TalosError;

/// The SHA-256 etcd appends to a snapshot (etcd server/etcdserver/api/v3rpc/maintenance.go).
const ETCD_HASH_LEN: usize = 32;

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotReport {
    pub path: PathBuf,
    /// Bytes in the file (the database and etcd's appended hash).
    pub size: u64,
    /// SHA-256 of the file, lower-case hex (`sha256sum` prints the same).
    pub sha256: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("snapshot {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Talos(#[from] TalosError),
    #[error("snapshot {}: not finished after {after:?}; nothing written", path.display())]
    Timeout { path: PathBuf, after: Duration },
    #[error("snapshot {}: more than {limit} bytes; nothing written", path.display())]
    TooLarge { path: PathBuf, limit: u64 },
    #[error(
        "snapshot {}: the database's SHA-256 does not match the one etcd sent; nothing written",
        path.display()
    )]
    HashMismatch { path: PathBuf },
    #[error("snapshot {}: {refusal}; nothing written", path.display())]
    Refused {
        path: PathBuf,
        refusal: TargetRefusal,
    },
    #[error("snapshot {}: stopped by SIGTERM; the partial file is removed", path.display())]
    Terminated { path: PathBuf },
}

/// What is at the target path now, when a snapshot may go there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotTarget {
    /// Nothing: the snapshot makes a new file.
    New,
    /// A regular file the operator asked to replace (`--overwrite`).
    Replaced,
}

/// Why a path is no place for a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetRefusal {
    #[error("the file exists; pass --overwrite to replace it")]
    Exists,
    #[error("it is a symlink; name its target or a new file")]
    Symlink,
    #[error("it is a directory; name a file")]
    Directory,
    #[error("it is a {0}; a snapshot goes only to a regular file")]
    Special(&'static str),
    #[error("directory {0} does not exist")]
    NoDirectory(String),
    #[error("cannot look at it: {0}")]
    Unreadable(String),
}

/// Whether `out` may take a snapshot: a new file in an existing directory, or an existing
/// regular file with `overwrite`. The path itself is looked at (lstat), not what a symlink
/// points to: renaming onto a symlink or a device node would replace the entry itself.
pub fn check_target(out: &Path, overwrite: bool) -> Result<SnapshotTarget, TargetRefusal> {
    let dir = parent_dir(out);
    let meta = match std::fs::symlink_metadata(out) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return if dir.is_dir() {
                Ok(SnapshotTarget::New)
            } else {
                Err(TargetRefusal::NoDirectory(crate::printable::line(
                    &dir.display().to_string(),
                )))
            };
        }
        Err(e) => return Err(TargetRefusal::Unreadable(e.to_string())),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        Err(TargetRefusal::Symlink)
    } else if kind.is_dir() {
        Err(TargetRefusal::Directory)
    } else if kind.is_char_device() {
        Err(TargetRefusal::Special("character device"))
    } else if kind.is_block_device() {
        Err(TargetRefusal::Special("block device"))
    } else if kind.is_fifo() {
        Err(TargetRefusal::Special("FIFO"))
    } else if kind.is_socket() {
        Err(TargetRefusal::Special("socket"))
    } else if !kind.is_file() {
        Err(TargetRefusal::Special("special file"))
    } else if overwrite {
        Ok(SnapshotTarget::Replaced)
    } else {
        Err(TargetRefusal::Exists)
    }
}

fn parent_dir(out: &Path) -> &Path {
    match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// `.<name>.` and the run's `pid-start`: a `.part` file's name starts with it, so the next
/// run tells one whose writer is gone from one being written now.
fn part_prefix(name: &str, run: &RunHolder) -> String {
    format!(".{name}.{}-{}.", run.pid, run.started_unix)
}

/// Removes the `.part` files of earlier snapshots to `name` in `dir` whose process is gone.
fn remove_stale_parts(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let lead = format!(".{name}.");
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(file) = file.to_str() else { continue };
        let Some(run) = file
            .strip_prefix(&lead)
            .filter(|_| file.ends_with(".part"))
            .and_then(|rest| rest.split_once('.'))
            .map(|(run, _)| run)
        else {
            continue;
        };
        let Some((pid, started)) = run.split_once('-') else {
            continue;
        };
        let (Ok(pid), Ok(started)) = (pid.parse::<u32>(), started.parse::<u64>()) else {
            continue;
        };
        let alive = RunHolder::of_local_process(pid).is_some_and(|r| r.started_unix == started);
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if !alive && is_file {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Writes the stream to `out` atomically, within `bound` and `limit` bytes: a new file, or
/// with `overwrite` an existing regular file (checked again just before the rename).
pub async fn write_snapshot(
    stream: impl Stream<Item = Result<Vec<u8>, TalosError>> + Unpin,
    out: &Path,
    overwrite: bool,
    bound: Duration,
    limit: u64,
) -> Result<SnapshotReport, SnapshotError> {
    let io = |source| SnapshotError::Io {
        path: out.to_path_buf(),
        source,
    };
    let refused = |refusal| SnapshotError::Refused {
        path: out.to_path_buf(),
        refusal,
    };
    check_target(out, overwrite).map_err(refused)?;
    let dir = parent_dir(out);
    let name = out
        .file_name()
        .map_or("snapshot".into(), |n| n.to_string_lossy().into_owned());
    remove_stale_parts(dir, &name);
    // Listening before the part file exists: a SIGTERM from here on removes it (the
    // temp file's drop) instead of killing the process with the file left behind.
    let mut terminate =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).map_err(io)?;
    // tempfile creates the file with mode 0600.
    let mut temp = tempfile::Builder::new()
        .prefix(&part_prefix(&name, &RunHolder::this_process()))
        .suffix(".part")
        .tempfile_in(dir)
        .map_err(io)?;
    let copy = tokio::time::timeout(bound, copy_checked(stream, temp.as_file_mut(), out, limit));
    let (size, sha256) = tokio::select! {
        copied = copy => match copied {
            Ok(result) => result?,
            Err(_) => {
                return Err(SnapshotError::Timeout {
                    path: out.to_path_buf(),
                    after: bound,
                });
            }
        },
        _ = terminate.recv() => {
            return Err(SnapshotError::Terminated { path: out.to_path_buf() });
        }
    };
    install(temp, out, overwrite)?;
    Ok(SnapshotReport {
        path: out.to_path_buf(),
        size,
        sha256,
    })
}

/// Renames the synced part file into place. Without `overwrite` the rename refuses any entry
/// that appeared meanwhile (RENAME_NOREPLACE, or a hard link where the kernel lacks it); with
/// it, the target must still be a regular file.
fn install(
    temp: tempfile::NamedTempFile,
    out: &Path,
    overwrite: bool,
) -> Result<(), SnapshotError> {
    let io = |source| SnapshotError::Io {
        path: out.to_path_buf(),
        source,
    };
    check_target(out, overwrite).map_err(|refusal| SnapshotError::Refused {
        path: out.to_path_buf(),
        refusal,
    })?;
    if overwrite {
        return crate::atomic_file::persist_synced(temp, out).map_err(io);
    }
    temp.as_file().sync_all().map_err(io)?;
    match temp.persist_noclobber(out) {
        Ok(_) => {}
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(SnapshotError::Refused {
                path: out.to_path_buf(),
                refusal: TargetRefusal::Exists,
            });
        }
        Err(e) => return Err(io(e.error)),
    }
    std::fs::File::open(parent_dir(out))
        .and_then(|d| d.sync_all())
        .map_err(io)
}

/// Copies the stream into `file`, hashing the whole file and, apart, the database before
/// etcd's trailing hash, which must match it.
async fn copy_checked(
    mut stream: impl Stream<Item = Result<Vec<u8>, TalosError>> + Unpin,
    file: &mut std::fs::File,
    out: &Path,
    limit: u64,
) -> Result<(u64, String), SnapshotError> {
    let mut whole = ring::digest::Context::new(&ring::digest::SHA256);
    let mut database = ring::digest::Context::new(&ring::digest::SHA256);
    // The last bytes seen, which may turn out to be etcd's hash.
    let mut tail: Vec<u8> = Vec::with_capacity(2 * ETCD_HASH_LEN);
    let mut size = 0u64;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        size += chunk.len() as u64;
        if size > limit {
            return Err(SnapshotError::TooLarge {
                path: out.to_path_buf(),
                limit,
            });
        }
        whole.update(&chunk);
        file.write_all(&chunk).map_err(|source| SnapshotError::Io {
            path: out.to_path_buf(),
            source,
        })?;
        tail.extend_from_slice(&chunk);
        if tail.len() > ETCD_HASH_LEN {
            let settled = tail.len() - ETCD_HASH_LEN;
            database.update(&tail[..settled]);
            tail.drain(..settled);
        }
    }
    if tail.len() != ETCD_HASH_LEN || database.finish().as_ref() != tail.as_slice() {
        return Err(SnapshotError::HashMismatch {
            path: out.to_path_buf(),
        });
    }
    Ok((size, hex(whole.finish().as_ref())))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn with_etcd_hash(db: &[u8]) -> Vec<u8> {
        let mut all = db.to_vec();
        all.extend_from_slice(ring::digest::digest(&ring::digest::SHA256, db).as_ref());
        all
    }

    fn chunks(
        bytes: &[u8],
        size: usize,
    ) -> impl Stream<Item = Result<Vec<u8>, TalosError>> + Unpin {
        let list: Vec<Result<Vec<u8>, TalosError>> =
            bytes.chunks(size).map(|c| Ok(c.to_vec())).collect();
        futures::stream::iter(list)
    }

    #[tokio::test]
    async fn a_whole_snapshot_is_renamed_into_place_owner_only_with_its_hash() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("etcd.db");
        let file = with_etcd_hash(&[7u8; 10_000]);
        let report = write_snapshot(
            chunks(&file, 333),
            &out,
            false,
            Duration::from_secs(5),
            1 << 20,
        )
        .await
        .unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), file);
        assert_eq!(report.size, file.len() as u64);
        assert_eq!(
            report.sha256,
            hex(ring::digest::digest(&ring::digest::SHA256, &file).as_ref())
        );
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp file left"
        );
    }

    /// A scratch directory and a path in it; every target the tests make lives there.
    fn scratch() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("etcd.db");
        (dir, out)
    }

    #[test]
    fn only_a_new_file_or_with_overwrite_an_existing_regular_file_is_a_target() {
        let (dir, out) = scratch();
        assert_eq!(check_target(&out, false), Ok(SnapshotTarget::New));
        std::fs::write(&out, b"old").unwrap();
        assert_eq!(check_target(&out, false), Err(TargetRefusal::Exists));
        assert_eq!(check_target(&out, true), Ok(SnapshotTarget::Replaced));

        let link = dir.path().join("link.db");
        std::os::unix::fs::symlink(&out, &link).unwrap();
        assert_eq!(check_target(&link, true), Err(TargetRefusal::Symlink));
        let dangling = dir.path().join("dangling.db");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert_eq!(check_target(&dangling, false), Err(TargetRefusal::Symlink));

        let fifo = dir.path().join("fifo.db");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(
            check_target(&fifo, true),
            Err(TargetRefusal::Special("FIFO"))
        );

        let socket = dir.path().join("sock.db");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        assert_eq!(
            check_target(&socket, true),
            Err(TargetRefusal::Special("socket"))
        );

        assert_eq!(
            check_target(dir.path(), true),
            Err(TargetRefusal::Directory)
        );
        assert!(matches!(
            check_target(&dir.path().join("absent/etcd.db"), false),
            Err(TargetRefusal::NoDirectory(_))
        ));
    }

    /// A character device made in the test's own directory (mknod needs CAP_MKNOD; without
    /// it the case says so and ends). Never a real device: a wrong build would replace it.
    #[tokio::test]
    async fn a_character_device_in_the_tests_own_directory_is_refused_and_left_alone() {
        let (dir, _) = scratch();
        let device = dir.path().join("null.db");
        let c = std::ffi::CString::new(device.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mknod creates a node for device 1:3 there.
        let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) };
        if made != 0 {
            eprintln!(
                "skipped: mknod not permitted here ({})",
                std::io::Error::last_os_error()
            );
            return;
        }
        assert_eq!(
            check_target(&device, true),
            Err(TargetRefusal::Special("character device"))
        );
        let file = with_etcd_hash(&[3u8; 100]);
        let err = write_snapshot(
            chunks(&file, 10),
            &device,
            true,
            Duration::from_secs(5),
            1 << 20,
        )
        .await
        .unwrap_err();
        assert!(matches!(err, SnapshotError::Refused { .. }), "{err}");
        let kind = std::fs::symlink_metadata(&device).unwrap().file_type();
        assert!(kind.is_char_device(), "the node is still a device");
    }

    #[tokio::test]
    async fn an_existing_file_or_a_symlink_is_kept_unless_overwrite_names_a_regular_file() {
        let (dir, out) = scratch();
        std::fs::write(&out, b"the older snapshot").unwrap();
        let file = with_etcd_hash(&[5u8; 1000]);
        let err = write_snapshot(
            chunks(&file, 100),
            &out,
            false,
            Duration::from_secs(5),
            1 << 20,
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("--overwrite"), "{err}");
        assert_eq!(std::fs::read(&out).unwrap(), b"the older snapshot");

        let link = dir.path().join("latest.db");
        std::os::unix::fs::symlink(&out, &link).unwrap();
        let err = write_snapshot(
            chunks(&file, 100),
            &link,
            true,
            Duration::from_secs(5),
            1 << 20,
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("symlink"), "{err}");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"the older snapshot");

        write_snapshot(
            chunks(&file, 100),
            &out,
            true,
            Duration::from_secs(5),
            1 << 20,
        )
        .await
        .unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), file);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no part left"
        );
    }

    #[tokio::test]
    async fn a_part_left_by_a_gone_process_is_removed_and_a_live_ones_kept() {
        let (dir, out) = scratch();
        // pid 0 is never a process of ours: its writer is gone.
        let stale = dir.path().join(".etcd.db.0-1.x1y2z3.part");
        std::fs::write(&stale, b"half").unwrap();
        let live = dir.path().join(format!(
            "{}a1b2c3.part",
            part_prefix("etcd.db", &RunHolder::this_process())
        ));
        std::fs::write(&live, b"being written").unwrap();
        let other = dir.path().join(".other.db.0-1.x1y2z3.part");
        std::fs::write(&other, b"another name's").unwrap();
        let file = with_etcd_hash(&[9u8; 500]);
        write_snapshot(
            chunks(&file, 100),
            &out,
            false,
            Duration::from_secs(5),
            1 << 20,
        )
        .await
        .unwrap();
        assert!(!stale.exists(), "the stale part is removed");
        assert!(live.exists(), "a live run's part is kept");
        assert!(
            other.exists(),
            "another target's part is not ours to remove"
        );
    }

    #[tokio::test]
    async fn a_corrupt_or_oversized_snapshot_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("etcd.db");
        let mut file = with_etcd_hash(&[1u8; 5000]);
        file[10] ^= 0xff;
        let err = write_snapshot(
            chunks(&file, 1000),
            &out,
            false,
            Duration::from_secs(5),
            1 << 20,
        )
        .await
        .unwrap_err();
        assert!(matches!(err, SnapshotError::HashMismatch { .. }), "{err}");
        let good = with_etcd_hash(&[1u8; 5000]);
        let err = write_snapshot(
            chunks(&good, 1000),
            &out,
            false,
            Duration::from_secs(5),
            4000,
        )
        .await
        .unwrap_err();
        assert!(matches!(err, SnapshotError::TooLarge { .. }), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
