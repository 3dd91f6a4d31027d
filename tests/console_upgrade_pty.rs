//! End-to-end: `taloscope demo` in an 80x24 pseudo-terminal (the sim on
//! loopback addresses), NO_COLOR=1 LANG=C. The upgrade plan of `prod` opens
//! with `u`, its guards pass, `?` explains, `s` asks for the cluster name and
//! Esc cancels (audited, nothing runs); `prod-reader`'s plan refuses Start
//! on the client role guard.
mod pty_support;

use std::time::Duration;

use pty_support::PtySession;

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);

#[test]
fn demo_plan_walks_to_the_confirmation_and_cancels() {
    let home = tempfile::tempdir().expect("temp home");
    let env = [("NO_COLOR", "1".to_string()), ("LANG", "C".to_string())];
    let mut s = PtySession::start(24, 80, home.path(), &["demo"], &env);
    s.wait_for("the fleet", BOUND, |t| {
        t.contains("prod") && t.contains("staging") && t.contains("Enter open")
    });
    s.send(b":ctx prod\r");
    s.wait_for("prod's nodes", BOUND, |t| {
        t.contains("+ Nodes (") && t.contains("cp-1") && t.contains("w-2")
    });
    // The plan needs a first status; u again until it opens.
    s.send(b"u");
    s.wait_for("the plan with passing guards", BOUND, |t| {
        if !t.contains("Upgrade prod to") {
            return false;
        }
        t.contains("guards pass: s starts")
    });
    let plan = s.text();
    assert!(plan.is_ascii(), "LANG=C must give ASCII only:\n{plan}");
    assert!(plan.contains("FROM -> TO"), "{plan}");
    s.send(b"\t?");
    s.wait_for("a guard's explanation", BOUND, |t| t.contains("Why: "));
    s.send(b"\x1b");
    s.wait_for("the explanation to close", BOUND, |t| !t.contains("Why: "));
    s.send(b"s");
    s.wait_for("the confirmation", BOUND, |t| {
        t.contains("Type the cluster name in full") && t.contains("[ Cancel ]")
    });
    s.send(b"pro\r");
    s.wait_for("the cancellation", BOUND, |t| {
        t.contains("cancelled") && !t.contains("Type the cluster name")
    });
    // Esc alone (Esc then a key at once reads as Alt-key).
    s.send(b"\x1b");
    s.wait_for("the nodes pane again", BOUND, |t| {
        t.contains("+ Nodes (") && !t.contains("Upgrade prod")
    });
    s.send(b":ctx prod-reader\r");
    s.wait_for("prod-reader's nodes", BOUND, |t| {
        t.contains("cluster: prod-reader") && t.contains("cp-1")
    });
    s.send(b"u");
    s.wait_for("the reader's refusal", BOUND, |t| {
        t.contains("Upgrade prod-reader") && t.contains("Start refused")
    });
    let refused = s.text();
    assert!(refused.contains("client role"), "{refused}");
    s.send(b"\x1b");
    s.wait_for("the plan to close", BOUND, |t| {
        !t.contains("Upgrade prod-reader")
    });
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
    let audit = std::fs::read_to_string(home.path().join("taloscope-state/audit.log"))
        .expect("the cancelled confirmation is audited");
    assert!(
        audit.contains("cluster=\"prod\"")
            && audit.contains("outcome=\"cancelled: typed name did not match\""),
        "{audit}"
    );
}
