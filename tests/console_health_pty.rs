//! End-to-end, the console in a pseudo-terminal against a sim served from the test process,
//! NO_COLOR=1 LANG=C: `H` on the cluster view runs the health checks on the first control
//! plane that answers and the checklist fills in until the verdict; on `healthy` every check
//! passes and `r` runs them again; on `cp2-down` the etcd check fails naming cp-2: while it
//! is retried its time moves, the timeout and the checks after it are on screen; once the
//! server's check stopped the rest are "not run", Enter opens the whole error and `c` runs
//! the client-side checks.
mod pty_support;

use std::path::Path;
use std::time::Duration;

use pty_support::{BackgroundSim, PtySession};

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);
/// The checks' own deadline (60 s) and the console's start on top.
const CHECKS: Duration = Duration::from_secs(120);

fn checklist_of(sim: &BackgroundSim, home: &Path, cluster: &str) -> PtySession {
    let env = [
        ("NO_COLOR", "1".to_string()),
        ("LANG", "C".to_string()),
        ("TALOSCONFIG", sim.talosconfig()),
        ("KUBECONFIG", sim.kubeconfig()),
    ];
    let mut s = PtySession::start(24, 80, home, &[], &env);
    s.wait_for("the fleet", BOUND, |t| {
        t.contains(cluster) && t.contains("Enter open")
    });
    s.send(format!(":ctx {cluster}\r").as_bytes());
    // The route needs a control plane that answered.
    s.wait_for("the nodes pane with answers", BOUND, |t| {
        t.contains("+ Nodes (") && t.contains("cp-1") && t.contains("Ready")
    });
    s.send(b"H");
    s
}

#[test]
fn healthy_passes_every_check_and_runs_again() {
    let sim = BackgroundSim::start("healthy", BOUND);
    let home = tempfile::tempdir().unwrap();
    let mut s = checklist_of(&sim, home.path(), "healthy");
    s.wait_for("the route", BOUND, |t| {
        t.contains("server-side HealthCheck on cp-") && t.contains("os:admin may call it")
    });
    s.wait_for("every check to pass", CHECKS, |t| {
        t.contains("HEALTHY: all 16 checks passed")
    });
    s.send(b"r");
    s.wait_for("a second run to pass", CHECKS, |t| {
        t.contains("healthy, run 2") && t.contains("HEALTHY: all 16 checks passed")
    });
    s.send(b"\x1b");
    s.wait_for("the cluster view again", BOUND, |t| t.contains("+ Nodes ("));
    assert_eq!(s.quit(BOUND), Some(0));
}

#[test]
fn cp2_down_fails_the_etcd_check_naming_cp_2() {
    let sim = BackgroundSim::start("cp2-down", BOUND);
    let home = tempfile::tempdir().unwrap();
    let mut s = checklist_of(&sim, home.path(), "cp2-down");
    s.wait_for("the timeout and the next checks, pending", BOUND, |t| {
        t.contains("of the 1m00s timeout")
            && t.contains("pending etcd members to be consistent across nodes")
    });
    // The etcd check is retried with no news for a while: its time still moves.
    s.wait_for("the running check's time to pass 2 s", CHECKS, |t| {
        t.lines().any(|row| {
            row.contains("running etcd to be healthy")
                && row
                    .split_whitespace()
                    .find_map(|w| w.strip_suffix('s')?.parse::<f64>().ok())
                    .is_some_and(|secs| secs >= 2.0)
        })
    });
    s.wait_for("the etcd check to fail", CHECKS, |t| {
        t.contains("NOT HEALTHY") && t.contains("etcd to be healthy")
    });
    s.wait_for("the checks the server did not run", BOUND, |t| {
        t.contains("stops at its first failing check: 15 after it not")
            && t.contains("not run etcd members to be consistent across nodes")
    });
    s.send(b"\r");
    // The whole error names the node the check could not dial, then its address.
    s.wait_for("the whole error, naming cp-2", BOUND, |t| {
        t.contains("FAIL: etcd to be healthy (Esc closes)") && t.contains("cp-2 (127.10.0.2:50000)")
    });
    s.send(b"\x1b");
    s.wait_for("the error closed", BOUND, |t| !t.contains("(Esc closes)"));
    s.send(b"c");
    s.wait_for("the client-side checks", BOUND, |t| {
        t.contains("client-side checks (talosctl health --server=false)")
            && t.contains("run 2")
            && t.contains("all k8s nodes to report schedulable")
    });
    assert_eq!(s.quit(BOUND), Some(0));
}
