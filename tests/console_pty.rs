//! End-to-end: the real binary in an 80x24 pseudo-terminal on fixture configs
//! (loopback addresses only), NO_COLOR=1 LANG=C. It must show the cluster
//! list with ASCII borders, open help on `?`, close it on Esc, open a cluster
//! and its panes, quit on `q` with exit 0, and leave the terminal restored;
//! SIGTERM and SIGHUP must restore it too.
mod pty_support;

use std::path::Path;
use std::time::Duration;

use pty_support::PtySession;

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(30);

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/discovery")
        .join(name)
        .display()
        .to_string()
}

fn last(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

/// The binary in a pty on the discovery fixtures, showing the cluster list.
fn start(home: &Path) -> PtySession {
    let env = [
        ("NO_COLOR", "1".to_string()),
        ("LANG", "C".to_string()),
        (
            "KUBECONFIG",
            format!("{}:{}", fixture("a.yaml"), fixture("b.yaml")),
        ),
        (
            "TALOSCONFIG",
            format!("{}:{}", fixture("c.yaml"), fixture("broken.yaml")),
        ),
    ];
    let mut session = PtySession::start(24, 80, home, &[], &env);
    session.wait_for("the cluster list", BOUND, |t| {
        t.contains("Clusters (")
            && t.contains("alpha")
            && t.contains("charlie")
            && t.contains("Enter open")
    });
    session
}

/// The output ends with the terminal restored: alternate screen left, cursor
/// shown, bracketed paste off, and nothing drawn afterwards.
fn assert_restored(raw: &[u8]) {
    let entered = last(raw, b"\x1b[?1049h").expect("entered the alternate screen");
    let left = last(raw, b"\x1b[?1049l").expect("left the alternate screen");
    assert!(left > entered, "alternate screen not left at the end");
    let shown = last(raw, b"\x1b[?25h").expect("cursor shown");
    assert!(
        shown > left,
        "cursor must be shown after leaving the alternate screen"
    );
    if let Some(hidden) = last(raw, b"\x1b[?25l") {
        assert!(shown > hidden, "cursor left hidden");
    }
    let paste_off = last(raw, b"\x1b[?2004l").expect("bracketed paste switched off");
    assert!(paste_off > entered);
    let tail = String::from_utf8_lossy(&raw[left..]);
    assert!(
        !tail.contains("Clusters"),
        "drawing after restore: {tail:?}"
    );
}

#[test]
fn console_lists_clusters_shows_help_and_quits_clean() {
    let home = tempfile::tempdir().expect("temp home");
    let mut s = start(home.path());
    let list = s.text();
    assert!(
        list.contains("+ Clusters ("),
        "ASCII borders expected:\n{list}"
    );
    assert!(
        list.contains("discovery error"),
        "broken.yaml must show:\n{list}"
    );
    assert!(list.is_ascii(), "LANG=C must give ASCII only:\n{list}");

    s.send(b"?");
    s.wait_for("help", BOUND, |t| {
        t.contains("+ Help ") && t.contains("Cluster list")
    });
    s.send(b"\x1b");
    s.wait_for("help to close", BOUND, |t| {
        !t.contains("+ Help ") && t.contains("Clusters (")
    });
    // Enter opens the selected cluster; nothing answers on the fixture's
    // addresses, and the panes still draw at once.
    s.send(b"\r");
    s.wait_for("the nodes pane", BOUND, |t| {
        t.contains("+ Nodes (") && t.contains("pane:")
    });
    s.send(b":etcd\r");
    s.wait_for("the etcd pane", BOUND, |t| t.contains("+ etcd ("));
    s.send(b":fleet\r");
    s.wait_for("the fleet", BOUND, |t| t.contains("+ Clusters ("));
    s.send(b"q");
    let (status, raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
    assert_restored(&raw);
    // Logs went to the state dir, not the terminal.
    let logs = home.path().join("taloscope-state/logs");
    assert!(
        std::fs::read_dir(&logs)
            .map(|d| d.count() > 0)
            .unwrap_or(false),
        "no log file under {}",
        logs.display()
    );
}

#[test]
fn sigterm_and_sighup_restore_the_terminal() {
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGHUP, 129)] {
        let home = tempfile::tempdir().expect("temp home");
        let s = start(home.path());
        let pid = s.child.process_id().expect("child pid");
        let pid = libc::pid_t::try_from(pid).expect("pid fits");
        // SAFETY: kill(2) on the child we spawned; no memory is involved.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(rc, 0, "kill failed");
        let (status, raw) = s.finish(BOUND);
        assert_eq!(status.exit_code(), code, "signal {signal}");
        assert_restored(&raw);
    }
}

/// A panic on a tokio worker must restore the terminal and end the process
/// non-zero instead of leaving a dead console on the screen.
#[test]
fn a_panic_on_a_worker_restores_the_terminal_and_ends_the_process() {
    let home = tempfile::tempdir().expect("temp home");
    let env = [
        ("NO_COLOR", "1".to_string()),
        ("LANG", "C".to_string()),
        ("KUBECONFIG", fixture("a.yaml")),
        ("TALOSCONFIG", fixture("c.yaml")),
        ("TALOSCOPE_TEST_PANIC_IN_TASK", "1".to_string()),
    ];
    let session = PtySession::start(24, 80, home.path(), &[], &env);
    let (status, raw) = session.finish(BOUND);
    assert!(!status.success(), "a panic must end the process non-zero");
    assert_eq!(status.exit_code(), 101);
    assert_restored(&raw);
    let left = last(&raw, b"\x1b[?1049l").expect("left the alternate screen");
    let tail = String::from_utf8_lossy(&raw[left..]);
    assert!(
        tail.contains("injected by TALOSCOPE_TEST_PANIC_IN_TASK"),
        "the panic message lands on the main screen: {tail:?}"
    );
}
