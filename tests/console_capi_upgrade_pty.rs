//! End-to-end in a pseudo-terminal (NO_COLOR=1 LANG=C) on the sim's `capi` scenario at a big
//! time scale, on capi-work, which the management cluster owns. `:upgrade-k8s 1.34.2` (80x24)
//! opens the CAPI-way plan (not the in-place one), its guards pass, `s` and the typed name start
//! it on the one operation runner, and the progress screen follows the providers replacing every
//! Machine, phase by phase, until the done line;
//! `taloscope capi status` then shows every Machine new and on the target. `:upgrade v1.12.0`
//! (160x48, with the sim's OpenNebula provider config for its VM templates) does the same with a
//! copy of each ONEMachineTemplate, and the nodes end on the new Talos. Both leave the confirmed
//! and succeeded CAPI-way upgrade in the audit log. `c` once the control plane is patched
//! cancels the run at its next poll or before the workers' phase, which never begins.
mod capi_checks;
mod pty_support;

use std::path::Path;
use std::time::{Duration, Instant};

use pty_support::{BackgroundSim, PtySession};

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);
/// Five Machines replaced one at a time, each polled every two seconds.
const ROLLOUT_BOUND: Duration = Duration::from_secs(300);
/// Simulated seconds per real one: the providers' VMs boot and join in well under a second.
const TIME_SCALE: f64 = 200.0;
const WORKLOAD: &str = "capi-work";
const MANAGEMENT: &str = "admin@capi-mgmt";

/// The Machines as `taloscope capi status` reports them: (name, version).
fn machines(sim: &BackgroundSim) -> Vec<(String, String)> {
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

/// The console on `sim` in a `rows` x `cols` terminal with `args`, showing the workload
/// cluster's nodes pane once the fleet shows it owned.
fn console_on_workload(
    sim: &BackgroundSim,
    home: &Path,
    size: (u16, u16),
    args: &[&str],
) -> PtySession {
    let mut s = PtySession::start(size.0, size.1, home, args, &sim.console_env());
    s.wait_for("the fleet with the workload cluster owned", BOUND, |t| {
        t.contains(WORKLOAD) && t.contains("CAPI:") && t.contains("Enter open")
    });
    s.send(format!(":ctx {WORKLOAD}\r").as_bytes());
    s.wait_for("the nodes pane", BOUND, |t| t.contains("+ Nodes ("));
    s
}

/// Sends `command` until the CAPI-way plan opens: the plan needs the cluster's first status
/// and its owner, which the console reads in the background.
fn open_capi_plan(s: &mut PtySession, command: &str) {
    let deadline = Instant::now() + BOUND;
    loop {
        s.send(format!("{command}\r").as_bytes());
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until && !s.text().contains("the Cluster API way") {
            s.pump(Duration::from_millis(100));
        }
        if s.text().contains("the Cluster API way") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{command}: the plan never opened:\n{}",
            s.text()
        );
    }
}

/// `s` on a plan whose guards pass, the dispatcher's typed confirmation, and the progress
/// screen counting the phases.
fn confirm_and_start(s: &mut PtySession) {
    s.send(b"s");
    s.wait_for("the confirmation", BOUND, |t| {
        t.contains("Type the cluster name")
    });
    s.send(format!("{WORKLOAD}\r").as_bytes());
    s.wait_for("the progress screen", BOUND, |t| t.contains(" of 2 phases"));
}

/// Whether the audit log under `home` has a CAPI-way upgrade of the workload with `outcome`.
fn audited(home: &Path, outcome: &str) -> bool {
    let audit = std::fs::read_to_string(home.join("taloscope-state/audit.log")).expect("audit log");
    audit.lines().any(|l| {
        l.contains(&format!("cluster=\"{WORKLOAD}\""))
            && l.contains("the Cluster API way")
            && l.contains(&format!("outcome=\"{outcome}\""))
    })
}

/// Waits (bounded) until `cond` holds of the sim, checked every 50 ms; panics with `what`.
fn wait_for_sim(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + BOUND;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_capi_way_kubernetes_upgrade_runs_from_the_console_until_every_machine_is_replaced() {
    let sim = BackgroundSim::start_scaled("capi", TIME_SCALE, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut s = console_on_workload(&sim, home.path(), (24, 80), &[]);
    let before = machines(&sim);
    assert_eq!(before.len(), 5, "{before:?}");
    open_capi_plan(&mut s, ":upgrade-k8s 1.34.2");
    s.wait_for("the plan read and its guards passing", BOUND, |t| {
        t.contains("TalosControlPlane/capi-work-cp gets: spec.version v1.34.2")
            && t.contains("guards pass: s starts")
    });
    let plan = s.text();
    assert!(plan.is_ascii(), "LANG=C must give ASCII only:\n{plan}");
    assert!(plan.contains("v1.34.1 -> v1.34.2"), "{plan}");
    assert!(plan.contains("MachineDeployment/capi-work-md-0"), "{plan}");
    assert!(plan.contains("8 pass, 0 warn, 0 fail"), "{plan}");
    confirm_and_start(&mut s);
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
    assert!(audited(home.path(), "confirmed") && audited(home.path(), "succeeded"));
}

/// The Talos version of each workload node whose Machine exists now, as the sim runs it:
/// (Machine, Talos version, up).
fn machine_nodes(sim: &BackgroundSim) -> Vec<(String, String, bool)> {
    let fleet = sim.fleet();
    let state = fleet.state();
    let cluster = state.cluster(WORKLOAD).expect("workload cluster");
    let capi = fleet.capi().expect("capi scenario");
    capi.list("machines")
        .iter()
        .filter_map(|m| m["metadata"]["name"].as_str())
        .map(|name| match cluster.node(name) {
            Some(node) => {
                let s = node.status();
                (name.to_string(), s.talos_version, s.up)
            }
            None => (name.to_string(), "no node".to_string(), false),
        })
        .collect()
}

#[test]
fn a_capi_way_talos_upgrade_runs_from_the_console_through_copied_machine_templates() {
    let sim = BackgroundSim::start_scaled("capi", TIME_SCALE, BOUND);
    let fleet = sim.fleet();
    let capi = fleet.capi().expect("capi scenario");
    // The provider's VM templates (the guard that the new ones exist) are read with its config.
    let config = fleet.opennebula().expect("OpenNebula sim").config_file();
    let config = config.display().to_string();
    let home = tempfile::tempdir().expect("temp home");
    let mut s = console_on_workload(&sim, home.path(), (48, 160), &["--config", &config]);
    let before = machine_nodes(&sim);
    assert_eq!(before.len(), 5, "{before:?}");
    assert!(
        before.iter().all(|(_, talos, _)| talos != "v1.12.0"),
        "{before:?}"
    );

    open_capi_plan(&mut s, ":upgrade v1.12.0");
    s.wait_for("the plan read and its guards passing", BOUND, |t| {
        t.contains(
            "TalosControlPlane/capi-work-cp gets: new ONEMachineTemplate \
             capi-work-cp-v1.12.0 (copy of capi-work-cp, VM template",
        ) && t.contains("guards pass: s starts")
    });
    let plan = s.text();
    assert!(plan.is_ascii(), "LANG=C must give ASCII only:\n{plan}");
    // The version path names what the nodes run, not only the template they came from.
    assert!(
        plan.contains("-> v1.12.0 (machine template capi-work-cp)"),
        "{plan}"
    );
    assert!(
        plan.contains("version path               Talos v1.11."),
        "{plan}"
    );
    assert!(plan.contains("MachineDeployment/capi-work-md-0"), "{plan}");
    assert!(plan.contains(" 0 warn, 0 fail"), "{plan}");
    for copy in ["capi-work-cp-v1.12.0", "capi-work-md-0-v1.12.0"] {
        assert!(
            capi.get("onemachinetemplates", copy).is_none(),
            "the plan copies nothing: {copy}"
        );
    }

    confirm_and_start(&mut s);
    s.wait_for("the control plane's template copied", ROLLOUT_BOUND, |t| {
        t.contains(
            "capi-work-cp: ONEMachineTemplate capi-work-cp-v1.12.0 created from \
             capi-work-cp",
        )
    });
    s.wait_for("a control-plane Machine replaced", ROLLOUT_BOUND, |t| {
        t.contains("capi-work-cp: machine ") && t.contains("capi-work-cp: old machine ")
    });
    s.wait_for("the workers' template copied", ROLLOUT_BOUND, |t| {
        t.contains(
            "capi-work-md-0: ONEMachineTemplate capi-work-md-0-v1.12.0 created from \
             capi-work-md-0",
        )
    });
    s.wait_for("the rollout done", ROLLOUT_BOUND, |t| {
        t.contains(&format!("rollout of {WORKLOAD} completed"))
    });
    let done = s.text();
    assert!(done.contains("2 of 2 phases"), "{done}");
    assert!(
        done.contains("upgrade Talos to v1.12.0 the Cluster API way"),
        "{done}"
    );
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");

    // Every Machine new, each on a node that runs the new Talos.
    wait_for_sim("every Machine replaced and on v1.12.0", || {
        let now = machine_nodes(&sim);
        now.len() == 5
            && now.iter().all(|(name, talos, up)| {
                *up && talos == "v1.12.0" && !before.iter().any(|(b, _, _)| b == name)
            })
    });
    capi_checks::assert_talos_templates_rolled(capi, "v1.12.0");
    assert!(audited(home.path(), "confirmed") && audited(home.path(), "succeeded"));
}

#[test]
fn c_cancels_a_capi_way_upgrade_at_its_next_poll_or_between_phases() {
    let sim = BackgroundSim::start_scaled("capi", TIME_SCALE, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut s = console_on_workload(&sim, home.path(), (48, 160), &[]);
    open_capi_plan(&mut s, ":upgrade-k8s 1.34.2");
    s.wait_for("the plan's guards passing", BOUND, |t| {
        t.contains("guards pass: s starts")
    });
    confirm_and_start(&mut s);
    s.wait_for("the control plane patched", ROLLOUT_BOUND, |t| {
        t.contains("TalosControlPlane/capi-work-cp patched to v1.34.2")
    });
    s.send(b"c");
    s.wait_for("the run cancelled", ROLLOUT_BOUND, |t| {
        t.contains(": cancelled")
    });
    let text = s.text();
    assert!(
        text.contains("cancelled while waiting for TalosControlPlane/capi-work-cp")
            || text.contains("cancelled before step 2 of 2"),
        "{text}"
    );
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
    // The workers' phase never began.
    let md = sim
        .fleet()
        .capi()
        .expect("capi scenario")
        .get("machinedeployments", "capi-work-md-0")
        .expect("the MachineDeployment");
    assert_eq!(md["spec"]["template"]["spec"]["version"], "v1.34.1");
    let audit =
        std::fs::read_to_string(home.path().join("taloscope-state/audit.log")).expect("audit log");
    assert!(
        audit
            .lines()
            .any(|l| l.contains("the Cluster API way") && l.contains("cancelled")),
        "{audit}"
    );
}
