//! The node actions' pipeline end to end in an 80x24 pseudo-terminal (NO_COLOR=1 LANG=C) on a
//! sim served from the test process: a reboot whose own wait could never end (the node's etcd
//! member has a NOSPACE alarm) is refused by its guard before it starts, naming the disarm fix;
//! a running reboot shows its elapsed time and timeout and `c` cancels it after the current
//! step, saying the node stays cordoned; and a console quit mid-reboot is reported as
//! interrupted at the next start, which offers the uncordon of the node it left cordoned.
mod pty_support;

use std::path::Path;
use std::time::Duration;

use pty_support::{BackgroundSim, PtySession};

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);
/// Simulated seconds per real one: a reboot then takes about a minute, so a test acts while it
/// is under way.
const SLOW: f64 = 0.25;

/// The console on `sim` at 80x24, its state dir under `home`, showing all of `cluster`'s nodes.
fn console_on(sim: &BackgroundSim, home: &Path, cluster: &str) -> PtySession {
    pty_support::console_on_five_nodes(sim, home, cluster, BOUND)
}

fn audit(home: &Path) -> String {
    pty_support::audit_log(home)
}

/// Opens the reboot plan of the node `downs` rows below the first, and starts it.
fn start_reboot(s: &mut PtySession, downs: usize, cluster: &str, node: &str) {
    for _ in 0..downs {
        s.send(b"j");
    }
    s.send(b"a");
    s.wait_for("the node's actions", BOUND, |t| {
        t.contains(&format!("Actions: {node} in {cluster}"))
    });
    s.send(b"\r");
    s.wait_for("the reboot plan with passing guards", BOUND, |t| {
        t.contains(&format!("Reboot node {node} in {cluster}"))
            && t.contains("guards pass: s starts")
    });
    s.send(b"s");
    s.wait_for("the confirmation", BOUND, |t| {
        t.contains("Type the node name in full")
    });
    s.send(format!("{node}\r").as_bytes());
    s.wait_for("the reboot requested", BOUND, |t| {
        t.contains(&format!("{node}: reboot requested"))
    });
}

#[test]
fn a_reboot_whose_etcd_member_has_an_alarm_is_refused_before_it_starts() {
    let sim = BackgroundSim::start("alarm", BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut s = console_on(&sim, home.path(), "alarm");
    // Problems first: cp-3, whose member has the alarm, becomes the first row (once the etcd
    // status naming the alarm has arrived).
    s.wait_for("cp-3 first, with its alarm", BOUND, |t| {
        t.contains("> cp-3") && t.contains("alarm NOSPACE")
    });
    s.send(b"a");
    s.wait_for("the actions of cp-3", BOUND, |t| {
        t.contains("Actions: cp-3 in alarm")
    });
    s.send(b"\r");
    s.wait_for("the wait guard failing", BOUND, |t| {
        t.contains("Reboot node cp-3 in alarm")
            && t.contains("Start refused: guard failing: its wait can finish")
    });
    let plan = s.text();
    assert!(plan.contains("NOSPACE"), "the alarm is named:\n{plan}");
    s.send(b"?");
    s.wait_for("the guard's explanation", BOUND, |t| {
        t.contains("Disarm the alarm first")
    });
    s.send(b"\x1b");
    s.wait_for("the explanation closed", BOUND, |t| {
        !t.contains("Why: its wait")
    });
    s.send(b"s");
    s.wait_for("the refusal", BOUND, |t| {
        t.contains("refused: reboot node cp-3 in alarm")
    });
    assert!(!s.text().contains("Type the node name"));
    let (status, _raw) = s.quit_answering(BOUND);
    assert!(status.success(), "exit status {status:?}");
    assert!(
        audit(home.path()).contains("outcome=\"refused: guard failing: its wait can finish\""),
        "{}",
        audit(home.path())
    );
    assert!(sim.fleet().state().mutating_calls().is_empty());
}

#[test]
fn a_running_reboot_shows_its_time_and_timeout_and_c_cancels_it_after_the_current_step() {
    // Slower than real time: the reboot takes long enough to be cancelled while it is waited
    // for.
    let sim = BackgroundSim::start_scaled("healthy", SLOW, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut s = console_on(&sim, home.path(), "healthy");
    start_reboot(&mut s, 3, "healthy", "w-1");
    s.wait_for("the elapsed time and the timeout", BOUND, |t| {
        t.contains("running (elapsed") && t.contains("times out after 15m00s")
    });
    let running = s.text();
    assert!(running.contains("[+"), "lines carry their time:\n{running}");
    assert!(
        running.contains("c cancel"),
        "the footer offers the cancel:\n{running}"
    );
    s.send(b"c");
    s.wait_for("the cancel, with the state it leaves", BOUND, |t| {
        t.contains("cancelled while waiting for the node to come back")
            && t.contains("w-1 stays cordoned")
    });
    assert!(
        s.text().contains("reboot node w-1 in healthy: cancelled"),
        "{}",
        s.text()
    );
    let (status, _raw) = s.quit_answering(BOUND);
    assert!(status.success(), "exit status {status:?}");
    let audit = audit(home.path());
    assert!(
        audit.contains("action=\"reboot node w-1\" outcome=\"cancelled while waiting"),
        "{audit}"
    );
}

#[test]
fn quitting_mid_reboot_is_reported_at_the_next_start_which_offers_the_uncordon() {
    let sim = BackgroundSim::start_scaled("healthy", SLOW, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut s = console_on(&sim, home.path(), "healthy");
    start_reboot(&mut s, 3, "healthy", "w-1");
    let (status, _raw) = s.quit_answering(BOUND);
    assert!(status.success(), "exit status {status:?}");

    let mut s = PtySession::start(24, 80, home.path(), &[], &sim.console_env());
    s.wait_for("the interrupted reboot reported", BOUND, |t| {
        t.contains("reboot node w-1 in healthy was interrupted")
    });
    let audit_text = audit(home.path());
    assert!(
        audit_text.contains("action=\"reboot node w-1\" outcome=\"interrupted\""),
        "{audit_text}"
    );
    s.send(b":ctx healthy\r");
    s.wait_for("the nodes pane", BOUND, |t| {
        t.contains("+ Nodes (5)") && t.contains("w-2")
    });
    // Problems first: w-1, left cordoned (and maybe still down), is the first row.
    s.send(b"a");
    s.wait_for("the uncordon offered first", BOUND, |t| {
        t.contains("Actions: w-1 in healthy") && t.contains("1 uncordon w-1")
    });
    s.send(b"\x1b");
    s.wait_for("the menu closed", BOUND, |t| !t.contains("Actions: w-1"));
    let (status, _raw) = s.quit_answering(BOUND);
    assert!(status.success(), "exit status {status:?}");
}
