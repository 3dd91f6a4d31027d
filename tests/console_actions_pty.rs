//! End-to-end in an 80x24 pseudo-terminal (NO_COLOR=1 LANG=C) on a sim served from the test
//! process: on `healthy`, `a` on cp-2 of the nodes pane, Enter on reboot, `s`, the node's name
//! typed, and the progress follows cp-2 until it is back and Ready (bounded), audited; on
//! `cp2-down` the reboot of cp-1 is refused by the quorum guard, as the command line refuses
//! it, with an audit line.
mod pty_support;

use std::path::Path;
use std::time::Duration;

use pty_support::{BackgroundSim, PtySession};

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);
/// Simulated seconds per real one: a reboot takes a few real seconds.
const TIME_SCALE: f64 = 20.0;

/// The console on `sim` at 80x24, its state dir under `home`, showing all of `cluster`'s nodes.
fn console_on(sim: &BackgroundSim, home: &Path, cluster: &str) -> PtySession {
    pty_support::console_on_five_nodes(sim, home, cluster, BOUND)
}

fn audit(home: &Path) -> String {
    pty_support::audit_log(home)
}

#[test]
fn rebooting_cp2_from_the_console_follows_it_until_back_and_ready() {
    let sim = BackgroundSim::start_scaled("healthy", TIME_SCALE, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut s = console_on(&sim, home.path(), "healthy");
    s.send(b"j");
    s.send(b"a");
    s.wait_for("the actions of cp-2", BOUND, |t| {
        t.contains("Actions: cp-2 in healthy") && t.contains("1 reboot cp-2")
    });
    s.send(b"\r");
    s.wait_for("the reboot plan with passing guards", BOUND, |t| {
        t.contains("Reboot node cp-2 in healthy") && t.contains("guards pass: s starts")
    });
    let plan = s.text();
    assert!(plan.is_ascii(), "LANG=C must give ASCII only:\n{plan}");
    assert!(plan.contains("etcd quorum"), "{plan}");
    s.send(b"s");
    s.wait_for("the confirmation by the node's name", BOUND, |t| {
        t.contains("Type the node name in full")
    });
    s.send(b"cp-2\r");
    s.wait_for("the progress", BOUND, |t| {
        t.contains("reboot node cp-2 in healthy: running")
    });
    s.wait_for("cp-2 back and Ready", Duration::from_secs(180), |t| {
        t.contains("cp-2: back, running and ready") && t.contains("done: cp-2 rebooted and back")
    });
    let done = s.text();
    assert!(done.contains("cp-2: reboot requested"), "{done}");
    assert!(done.contains("reboot node cp-2 in healthy: done"), "{done}");
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
    let audit = audit(home.path());
    assert!(
        audit.contains("action=\"reboot node cp-2\" outcome=\"confirmed\"")
            && audit.contains("action=\"reboot node cp-2\" outcome=\"succeeded\""),
        "{audit}"
    );
}

#[test]
fn on_cp2_down_rebooting_cp1_is_refused_by_the_quorum_guard() {
    let sim = BackgroundSim::start("cp2-down", BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut s = console_on(&sim, home.path(), "cp2-down");
    // Problems first: cp-2 (DOWN) becomes the first row once its probe failed, cp-1 the next.
    s.wait_for("cp-2 first, DOWN", BOUND, |t| {
        t.lines()
            .any(|row| row.contains("> cp-2") && row.contains("DOWN"))
    });
    s.send(b"ja");
    s.wait_for("the actions of cp-1", BOUND, |t| {
        t.contains("Actions: cp-1 in cp2-down")
    });
    s.send(b"\r");
    s.wait_for("the quorum guard failing", BOUND, |t| {
        t.contains("Reboot node cp-1 in cp2-down")
            && t.contains("Start refused: guard failing: etcd quorum")
    });
    s.send(b"s");
    s.wait_for("the refusal", BOUND, |t| {
        t.contains("refused: reboot node cp-1 in cp2-down")
    });
    assert!(
        !s.text().contains("Type the node name"),
        "a refused action asks for no confirmation"
    );
    s.send(b"\x1b");
    s.wait_for("the nodes pane again", BOUND, |t| {
        t.contains("+ Nodes (5)") && !t.contains("Reboot node")
    });
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
    let audit = audit(home.path());
    assert!(
        audit.contains(
            "action=\"reboot node cp-1\" outcome=\"refused: guard failing: etcd quorum\""
        ),
        "{audit}"
    );
}
