//! An etcd snapshot written to a local file whole or not at all: the stream goes to a
//! temporary file beside the target (mode 0600: it holds every secret of the cluster), is
//! checked against the SHA-256 etcd appends, synced, and only then renamed into place.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::Stream;
use futures::StreamExt;
use serde::Serialize;

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
}

/// Writes the stream to `out` atomically, within `bound` and `limit` bytes.
pub async fn write_snapshot(
    stream: impl Stream<Item = Result<Vec<u8>, TalosError>> + Unpin,
    out: &Path,
    bound: Duration,
    limit: u64,
) -> Result<SnapshotReport, SnapshotError> {
    let io = |source| SnapshotError::Io {
        path: out.to_path_buf(),
        source,
    };
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = out
        .file_name()
        .map_or("snapshot".into(), |n| n.to_string_lossy().into_owned());
    // tempfile creates the file with mode 0600.
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".part")
        .tempfile_in(dir)
        .map_err(io)?;
    let copy = copy_checked(stream, temp.as_file_mut(), out, limit);
    let (size, sha256) = match tokio::time::timeout(bound, copy).await {
        Ok(result) => result?,
        Err(_) => {
            return Err(SnapshotError::Timeout {
                path: out.to_path_buf(),
                after: bound,
            });
        }
    };
    crate::atomic_file::persist_synced(temp, out).map_err(io)?;
    Ok(SnapshotReport {
        path: out.to_path_buf(),
        size,
        sha256,
    })
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
        let report = write_snapshot(chunks(&file, 333), &out, Duration::from_secs(5), 1 << 20)
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

    #[tokio::test]
    async fn a_corrupt_or_oversized_snapshot_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("etcd.db");
        let mut file = with_etcd_hash(&[1u8; 5000]);
        file[10] ^= 0xff;
        let err = write_snapshot(chunks(&file, 1000), &out, Duration::from_secs(5), 1 << 20)
            .await
            .unwrap_err();
        assert!(matches!(err, SnapshotError::HashMismatch { .. }), "{err}");
        let good = with_etcd_hash(&[1u8; 5000]);
        let err = write_snapshot(chunks(&good, 1000), &out, Duration::from_secs(5), 4000)
            .await
            .unwrap_err();
        assert!(matches!(err, SnapshotError::TooLarge { .. }), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
