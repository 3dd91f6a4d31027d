//! End-to-end in an 80x24 pseudo-terminal (NO_COLOR=1 LANG=C) on the `capi` sim served from
//! the test process at a big time scale: the console on `capi-work`, `C` opens `:capi`, the
//! MachineDeployment selected, `s`, `3` and Enter give the plan with every guard passing, `s`
//! and the typed name start it, and the progress follows the new Machine until done. Afterwards
//! `:capi` shows 3/3, the sim's MachineDeployment has 3 Ready replicas, the workload cluster 3
//! Ready workers, and the audit log the scale confirmed and succeeded.
mod pty_support;
mod upgrade_common;

use std::time::Duration;

use pty_support::{PtySession, env_on};
use upgrade_common::{builtin, start_scaled};

const WORK: &str = "capi-work";
/// The CAPI controller's VMs boot and join on the sim clock (as tests/capi_scale.rs).
const SCALE: f64 = 50.0;
/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);
const SCALE_BOUND: Duration = Duration::from_secs(240);

/// `spec.replicas` and `status.readyReplicas` of a CAPI object in the sim.
fn replicas(fx: &upgrade_common::Fixture, plural: &str, name: &str) -> (u64, u64) {
    let o = fx.sim.capi().expect("capi scenario").get(plural, name);
    let o = o.unwrap_or_else(|| panic!("{plural}/{name}"));
    let count = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    (
        count(&o["spec"]["replicas"]),
        count(&o["status"]["readyReplicas"]),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scaling_the_workers_from_capi_ends_with_three_ready_workers_and_an_audit_line() {
    let fx = start_scaled(builtin("capi"), SCALE).await;
    let deadline = tokio::time::Instant::now() + BOUND;
    while replicas(&fx, "machinedeployments", "capi-work-md-0") != (2, 2) {
        assert!(tokio::time::Instant::now() < deadline, "the workers settle");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let home = tempfile::tempdir().expect("temp home");
    let env = env_on(&fx.sim.talosconfig_path(), &fx.sim.kubeconfig_path());
    let mut s = PtySession::start(24, 80, home.path(), &[], &env);
    s.wait_for("the fleet", BOUND, |t| {
        t.contains(WORK) && t.contains("Enter open")
    });
    s.send(format!(":ctx {WORK}\r").as_bytes());
    s.wait_for("the nodes pane", BOUND, |t| t.contains("+ Nodes ("));
    // The management clusters are read in the background: C until its owner is known.
    s.retry_until("the :capi screen", b"C", BOUND, |t| {
        t.contains("Cluster API: ") && t.contains("Enter: every condition of")
    });
    s.retry_until("the MachineDeployment selected", b"j", BOUND, |t| {
        t.contains("Enter: every condition of MachineDeployment/capi-work-md-0")
    });
    s.send(b"s");
    s.wait_for("the replica count asked", BOUND, |t| {
        t.contains("New replicas: ") && t.contains("MachineDeployment default/capi-work-md-0")
    });
    s.send(b"x3\r");
    s.wait_for("the plan with its guards passing", BOUND, |t| {
        t.contains("replicas:  2 -> 3") && t.contains("guards pass: s starts")
    });
    let plan = s.text();
    assert!(plan.is_ascii(), "LANG=C must give ASCII only:\n{plan}");
    s.send(b"s");
    s.wait_for("the confirmation by the cluster's name", BOUND, |t| {
        t.contains("Type the cluster name in full")
    });
    s.send(format!("{WORK}\r").as_bytes());
    s.wait_for("the progress", BOUND, |t| t.contains("Machines  2 -> 3"));
    s.wait_for("the scale done", SCALE_BOUND, |t| {
        t.contains("done: 3 Machines, every node Ready")
    });
    let done = s.text();
    assert!(
        done.contains("1 created, 1 got a node, 1 Ready, 0 deleting, 0 deleted"),
        "{done}"
    );
    s.send(b"\x1b");
    s.wait_for("the tree read again", BOUND, |t| {
        t.lines()
            .any(|l| l.contains("MachineDeployment/") && l.contains("3/3"))
    });
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");

    assert_eq!(
        replicas(&fx, "machinedeployments", "capi-work-md-0"),
        (3, 3)
    );
    let workers = fx.workers(WORK).await;
    assert_eq!(workers.len(), 3, "{workers:#?}");
    assert!(workers.iter().all(|n| n.ready), "{workers:#?}");
    let audit =
        std::fs::read_to_string(home.path().join("taloscope-state/audit.log")).expect("audit log");
    let action = "action=\"scale MachineDeployment default/capi-work-md-0 from 2 to 3 replicas (Cluster API)\"";
    assert!(
        audit.contains(&format!("{action} outcome=\"confirmed\""))
            && audit.contains(&format!("{action} outcome=\"succeeded\"")),
        "{audit}"
    );
}
