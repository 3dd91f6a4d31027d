//! End-to-end in an 80x24 pseudo-terminal (NO_COLOR=1 LANG=C) on the sim's `capi` scenario at a
//! big time scale: on capi-work, which the management cluster owns, `:upgrade-k8s 1.34.2` opens
//! the CAPI-way plan (not the in-place one), its guards pass, `s` and the typed name start it,
//! and the progress pane follows the providers replacing every Machine until the done line.
//! Afterwards the audit log has the confirmed and succeeded CAPI-way upgrade, and `taloscope
//! capi status` shows every Machine new and on the target.
mod pty_support;

use std::time::{Duration, Instant};

use pty_support::PtySession;

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);
/// Five Machines replaced one at a time, each polled every two seconds.
const ROLLOUT_BOUND: Duration = Duration::from_secs(300);
const WORKLOAD: &str = "capi-work";
const MANAGEMENT: &str = "admin@capi-mgmt";

/// The Machines as `taloscope capi status` reports them: (name, version).
fn machines(sim: &pty_support::BackgroundSim) -> Vec<(String, String)> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_taloscope"))
        .args([
            "capi",
            "status",
            "--context",
            MANAGEMENT,
            "--output",
            "json",
        ])
        .args([
            "--talosconfig",
            &sim.talosconfig(),
            "--kubeconfig",
            &sim.kubeconfig(),
        ])
        .output()
        .expect("taloscope capi status runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let trees = v["clusters"]
        .as_array()
        .or(v.as_array())
        .cloned()
        .unwrap_or_default();
    trees
        .iter()
        .flat_map(|t| t["machines"].as_array().cloned().unwrap_or_default())
        .map(|m| {
            let text = |k: &str| m[k].as_str().unwrap_or_default().to_string();
            (text("name"), text("version"))
        })
        .collect()
}

#[test]
fn a_capi_way_kubernetes_upgrade_runs_from_the_console_until_every_machine_is_replaced() {
    let sim = pty_support::BackgroundSim::start_scaled("capi", 200.0, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut s = PtySession::start(24, 80, home.path(), &[], &sim.console_env());
    s.wait_for("the fleet with the workload cluster owned", BOUND, |t| {
        t.contains(WORKLOAD) && t.contains("CAPI:") && t.contains("Enter open")
    });
    let before = machines(&sim);
    assert_eq!(before.len(), 5, "{before:?}");
    s.send(format!(":ctx {WORKLOAD}\r").as_bytes());
    s.wait_for("the nodes pane", BOUND, |t| t.contains("+ Nodes ("));
    // The plan needs a first status; the command again until it opens.
    let deadline = Instant::now() + BOUND;
    loop {
        s.send(b":upgrade-k8s 1.34.2\r");
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until && !s.text().contains("the Cluster API way") {
            s.pump(Duration::from_millis(100));
        }
        if s.text().contains("the Cluster API way") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the plan never opened:\n{}",
            s.text()
        );
    }
    s.wait_for("the plan read and its guards passing", BOUND, |t| {
        t.contains("TalosControlPlane/capi-work-cp gets: spec.version v1.34.2")
            && t.contains("guards pass: s starts")
    });
    let plan = s.text();
    assert!(plan.is_ascii(), "LANG=C must give ASCII only:\n{plan}");
    assert!(plan.contains("v1.34.1 -> v1.34.2"), "{plan}");
    assert!(plan.contains("MachineDeployment/capi-work-md-0"), "{plan}");
    assert!(plan.contains("7 pass, 0 warn, 0 fail"), "{plan}");
    s.send(b"s");
    s.wait_for("the confirmation", BOUND, |t| {
        t.contains("Type the cluster name")
    });
    s.send(format!("{WORKLOAD}\r").as_bytes());
    s.wait_for("the progress pane", BOUND, |t| t.contains("+ Events "));
    // Each Machine followed on the events: created, its node Ready, the old one deleted.
    s.wait_for("a Machine replaced", ROLLOUT_BOUND, |t| {
        t.contains("capi-work-cp: machine ") && t.contains("capi-work-cp: old machine ")
    });
    s.wait_for("the rollout done", ROLLOUT_BOUND, |t| {
        t.contains(&format!("rollout of {WORKLOAD} completed"))
    });
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");

    let after = machines(&sim);
    assert_eq!(after.len(), 5, "{after:?}");
    for (name, version) in &after {
        assert_eq!(version, "v1.34.2", "{name}");
        assert!(!before.iter().any(|(b, _)| b == name), "{name} replaced");
    }
    let audit =
        std::fs::read_to_string(home.path().join("taloscope-state/audit.log")).expect("audit log");
    let ours = |outcome: &str| {
        audit.lines().any(|l| {
            l.contains(&format!("cluster=\"{WORKLOAD}\""))
                && l.contains("the Cluster API way")
                && l.contains(&format!("outcome=\"{outcome}\""))
        })
    };
    assert!(ours("confirmed") && ours("succeeded"), "{audit}");
}
