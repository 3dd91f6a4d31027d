//! The console in a pseudo-terminal under faults: a panic on a tokio worker
//! must restore the terminal (alternate screen left, cursor shown) and end
//! the process non-zero instead of leaving a dead console on the screen.
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
    let entered = last(&raw, b"\x1b[?1049h").expect("entered the alternate screen");
    let left = last(&raw, b"\x1b[?1049l").expect("left the alternate screen");
    assert!(left > entered, "alternate screen not left");
    let shown = last(&raw, b"\x1b[?25h").expect("cursor shown");
    assert!(shown > left, "cursor must be shown after leaving");
    let tail = String::from_utf8_lossy(&raw[left..]);
    assert!(
        tail.contains("injected by TALOSCOPE_TEST_PANIC_IN_TASK"),
        "the panic message lands on the main screen: {tail:?}"
    );
}
