//! A snapshot stopped by SIGTERM removes its `.part` file and says so. Its own test binary:
//! the signal goes to this process, and no other test may be running in it.
use std::time::Duration;

use futures::StreamExt as _;
use taloscope::etcd_maintenance::{SnapshotError, write_snapshot};
use taloscope::talos::TalosError;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_snapshot_removes_the_part_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("etcd.db");
    // One chunk, then a stream that never ends: the snapshot is mid-way when the signal comes.
    let stream = futures::stream::iter(vec![Ok::<Vec<u8>, TalosError>(vec![1u8; 4096])])
        .chain(futures::stream::pending());
    let target = out.clone();
    let writing = tokio::spawn(async move {
        write_snapshot(
            Box::pin(stream),
            &target,
            false,
            Duration::from_secs(600),
            1 << 20,
        )
        .await
    });
    let part_exists = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".part"))
    };
    // The part file is made after the signal handler is in place.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !part_exists() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no part file appeared"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // SAFETY: kill(2) on this very process with SIGTERM, which the snapshot listens for.
    assert_eq!(unsafe { libc::kill(libc::getpid(), libc::SIGTERM) }, 0);
    let result = tokio::time::timeout(Duration::from_secs(30), writing)
        .await
        .expect("the snapshot stops")
        .unwrap();
    let err = result.unwrap_err();
    assert!(matches!(err, SnapshotError::Terminated { .. }), "{err}");
    assert!(err.to_string().contains("SIGTERM"), "{err}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing left"
    );
}
