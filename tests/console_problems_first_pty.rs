//! End-to-end: problems first on the `demo` fleet, in an 80x24 pseudo-terminal (the sim
//! served from the test process on loopback addresses), NO_COLOR=1 LANG=C. With prod's w-2
//! and edge's cp-1 cordoned (a deliberate state, information only): staging (a DOWN node)
//! sorts above prod, edge's ISSUE keeps cp-1's NOSPACE alarm, the nodes pane puts the DOWN
//! node first, and node detail lists every problem of cp-1.
mod pty_support;

use std::time::Duration;

use pty_support::{BackgroundSim, PtySession};

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);
/// `taloscope-demo`'s pace: simulated seconds per real second.
const DEMO_TIME_SCALE: f64 = 4.0;

/// `kubectl cordon NODE` on the demo's `cluster`, through the sim's Kubernetes API.
fn cordon(sim: &BackgroundSim, cluster: &str, node: &str) {
    let out = std::process::Command::new("kubectl")
        .args(["--context", &format!("admin@{cluster}"), "cordon", node])
        .env("KUBECONFIG", sim.kubeconfig())
        .env("HOME", sim.dir.path())
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .expect("kubectl runs (scripts/test installs it)");
    assert!(
        out.status.success(),
        "kubectl cordon {node} on {cluster}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The screen line that shows the fleet row of `cluster`, and where it is.
fn fleet_row<'a>(text: &'a str, cluster: &str) -> Option<(usize, &'a str)> {
    text.lines()
        .enumerate()
        .find(|(_, l)| l.trim_start_matches(['|', ' ', '>']).starts_with(cluster))
}

#[test]
fn problems_first_on_the_demo_fleet_with_cordoned_nodes() {
    let home = tempfile::tempdir().expect("temp home");
    let env = [("NO_COLOR", "1".to_string()), ("LANG", "C".to_string())];
    let sim = BackgroundSim::start_scaled("demo", DEMO_TIME_SCALE, BOUND);
    cordon(&sim, "prod", "w-2");
    cordon(&sim, "edge", "cp-1");
    let args = sim.demo_console_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut s = PtySession::start(24, 80, home.path(), &args, &env);
    s.wait_for(
        "staging above edge above prod, each with its worst problem",
        BOUND,
        |t| {
            let (Some(staging), Some(edge), Some(prod)) = (
                fleet_row(t, "staging"),
                fleet_row(t, "edge"),
                fleet_row(t, "prod"),
            ) else {
                return false;
            };
            staging.1.contains("w-2 DOWN")
                && edge.1.contains("cp-1 alarm NOSPACE")
                && prod.1.contains("w-2 cordoned")
                && staging.0 < edge.0
                && edge.0 < prod.0
        },
    );
    let fleet = s.text();
    let prod = fleet_row(&fleet, "prod").expect("prod's row").1;
    // A cordon is information: WARN 0, not a ✗.
    assert!(
        prod.split_whitespace().any(|cell| cell == "0"),
        "prod's WARN:\n{fleet}"
    );

    s.send(b":ctx staging\r");
    s.wait_for("staging's DOWN node first", BOUND, |t| {
        let mut rows = t.lines().skip_while(|l| !l.contains("+ Nodes (5)")).skip(2);
        rows.next()
            .is_some_and(|first| first.contains("w-2") && first.contains("DOWN"))
    });

    s.send(b":ctx edge\r");
    s.wait_for("edge's cp-1 first with its alarm and the +1", BOUND, |t| {
        let mut rows = t.lines().skip_while(|l| !l.contains("+ Nodes (")).skip(2);
        rows.next()
            .is_some_and(|first| first.contains("cp-1") && first.contains("alarm NOSPACE +1"))
    });
    s.send(b"\r");
    s.wait_for("cp-1's detail with every problem", BOUND, |t| {
        t.contains("Node cp-1") && t.contains("alarm NOSPACE; cordoned")
    });
    let detail = s.text();
    let etcd = detail
        .lines()
        .find(|l| l.contains("etcd ") && l.contains("Running"))
        .expect("the etcd service's line");
    assert!(
        etcd.contains("ALARM NOSPACE") && !etcd.contains(" ok"),
        "etcd must not read ok while its member has an alarm:\n{detail}"
    );
    s.quit(BOUND);
}
