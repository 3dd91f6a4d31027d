//! End-to-end, the console in a pseudo-terminal against a sim served from the test process,
//! NO_COLOR=1 LANG=C: `H` on the cluster view runs the health checks on the first control
//! plane that answers and the checklist fills in until the verdict; on `healthy` every check
//! passes and `r` runs them again; on `cp2-down` the etcd check fails naming cp-2.
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
    s.wait_for("the etcd check to fail naming cp-2", CHECKS, |t| {
        t.contains("NOT HEALTHY") && t.contains("etcd to be healthy") && t.contains("(cp-2)")
    });
    assert_eq!(s.quit(BOUND), Some(0));
}
