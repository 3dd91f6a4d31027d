//! End-to-end in an 80x24 pseudo-terminal (NO_COLOR=1 LANG=C) on the sim's `healthy` served
//! from the test process: node detail's events carry the node's own times (each Talos event
//! id is an xid holding its creation time), so reopening cp-1 later shows the same times,
//! not the moment the stream replayed them, and each event once.
mod pty_support;
mod upgrade_common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use pty_support::{PtySession, env_on};
use upgrade_common::{builtin, start};

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);

/// The detail's event lines: `HH:MM:SS what happened`, borders trimmed.
fn event_lines(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.contains("Recent events"))
        .skip(1)
        .map(|l| l.trim_matches(['|', ' ', '+', '-']).to_string())
        .filter(|l| {
            let b = l.as_bytes();
            b.len() > 9 && b[2] == b':' && b[5] == b':' && b[8] == b' '
        })
        .collect()
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Keeps the console drawing until the wall clock reaches `unix` (bounded).
fn wait_for_clock(s: &mut PtySession, unix: u64) {
    let deadline = Instant::now() + BOUND;
    while unix_now() < unix {
        assert!(Instant::now() < deadline, "the clock moves");
        s.pump(Duration::from_millis(100));
    }
}

/// Seconds into the UTC day of `unix`.
fn seconds_of_day(unix: u64) -> u64 {
    unix % 86_400
}

/// Seconds into the day of an event line's `HH:MM:SS` (the console shows UTC unless told).
fn seconds_of_day_of(line: &str) -> u64 {
    let part = |r: std::ops::Range<usize>| line[r].parse::<u64>().expect("a time");
    part(0..2) * 3600 + part(3..5) * 60 + part(6..8)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopened_node_detail_shows_the_same_event_times() {
    let fx = start(builtin("healthy")).await;
    // The nodes booted by now.
    let booted = unix_now();
    let cp1 = fx
        .status("healthy")
        .await
        .node("cp-1")
        .expect("cp-1")
        .address
        .clone();
    let home = tempfile::tempdir().expect("temp home");
    let mut env = env_on(&fx.sim.talosconfig_path(), &fx.sim.kubeconfig_path());
    // Event times are drawn in the system's zone: UTC here, as the check reads them.
    env.push(("TZ", "UTC".to_string()));
    let mut s = PtySession::start(24, 80, home.path(), &[], &env);
    s.wait_for("the fleet", BOUND, |t| {
        t.contains("healthy") && t.contains("Enter open")
    });
    s.send(b":ctx healthy\r");
    s.wait_for("the five nodes", BOUND, |t| t.contains("+ Nodes (5)"));
    // Open the detail well after the boot: its events must say when they happened.
    wait_for_clock(&mut s, booted + 3);
    let opened = unix_now();
    s.send(b"\r");
    s.wait_for("cp-1's detail with its boot events", BOUND, |t| {
        t.contains("Node cp-1") && event_lines(t).iter().any(|l| l.contains("sequence boot"))
    });
    let first = event_lines(&s.text());
    let boot = first
        .iter()
        .find(|l| l.contains("sequence boot"))
        .expect("the boot's event");
    let age = (seconds_of_day(opened) + 86_400 - seconds_of_day_of(boot)) % 86_400;
    assert!(
        (2..60).contains(&age),
        "the boot's event must carry the node's time, {age}s before the detail opened: {boot}\n{}",
        s.text()
    );
    s.send(b"\x1b");
    s.wait_for("the nodes pane again", BOUND, |t| {
        t.contains("+ Nodes (5)") && !t.contains("Recent events")
    });
    // Later by the wall clock: an event stamped on arrival would read differently now.
    wait_for_clock(&mut s, unix_now() + 2);
    s.send(b"\r");
    s.wait_for("cp-1's detail again", BOUND, |t| t.contains("Node cp-1"));
    // A new event after the reopened stream's replay of the recent ones: once it shows,
    // the replay has been folded in.
    fx.talos("healthy")
        .service_restart(&cp1, "kubelet")
        .await
        .expect("kubelet restarts");
    let is_new = |line: &String| line.contains("kubelet") && !first.contains(line);
    s.wait_for("the restart's event", BOUND, |t| {
        event_lines(t).iter().any(is_new)
    });
    let text = s.text();
    let again = event_lines(&text);
    for line in again.iter().filter(|l| !l.contains("kubelet")) {
        let what = &line[9..];
        assert!(
            !first.iter().any(|seen| &seen[9..] == what) || first.contains(line),
            "{what:?} came back with another time:\nbefore: {first:#?}\n{text}"
        );
    }
    let distinct: BTreeSet<&String> = again.iter().collect();
    assert_eq!(again.len(), distinct.len(), "no event twice:\n{text}");
    s.quit(BOUND);
}
