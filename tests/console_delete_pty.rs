//! End-to-end in an 80x24 pseudo-terminal (NO_COLOR=1 LANG=C) on a sim served from the test
//! process: `taloscope create` makes `lab` (1 control plane, 1 worker) headlessly, then the
//! console deletes it: `:ctx lab`, `D`, the acknowledgement typed, `s`, the name typed, and the
//! progress follows each VM until gone and the contexts removed. Afterwards the sim holds no VM
//! of lab, neither config file has a lab context, both files have a new backup, the audit log
//! has the delete, and the fleet no longer shows lab.
mod provision_common;
mod pty_support;
mod talos_common;

use std::path::Path;
use std::time::Duration;

use provision_common::{config_file, live_vms, run};
use pty_support::PtySession;
use talos_common::{Sim, scenario, start};

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);
const DELETE_BOUND: Duration = Duration::from_secs(180);
const ACK: &str = "this destroys the cluster and its data";

/// `taloscope create` of lab, 1+1, as the command line runs it.
async fn create_lab(sim: &Sim) {
    let args = [
        "create",
        "--name",
        "lab",
        "--provider",
        "sim-opennebula",
        "--controlplanes",
        "1",
        "--workers",
        "1",
        "--talos",
        "v1.11.3",
        "--poll-ms",
        "50",
        "--yes",
        "--confirm",
        "lab",
        "--ack",
        "pin the fingerprints shown",
    ];
    let r = run(sim, &config_file(sim), &args).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// The backups taloscope made of `file` so far.
fn backups_of(file: &Path) -> usize {
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{name}.taloscope-backup-"))
        })
        .count()
}

/// The console on `sim` with its own files (the same state dir the command line used).
fn console(sim: &Sim) -> PtySession {
    let env = [
        ("NO_COLOR", "1".to_string()),
        ("LANG", "C".to_string()),
        (
            "TALOSCONFIG",
            sim.fleet.talosconfig_path().display().to_string(),
        ),
        (
            "KUBECONFIG",
            sim.fleet.kubeconfig_path().display().to_string(),
        ),
        ("TALOSCOPE_CONFIG", config_file(sim).display().to_string()),
    ];
    let mut s = PtySession::start(24, 80, sim.dir.path(), &[], &env);
    s.wait_for("the fleet with lab", BOUND, |t| {
        t.contains("lab") && t.contains("healthy") && t.contains("Enter open")
    });
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_lab_from_the_console_leaves_no_vm_no_context_and_both_backups() {
    let sim = start(scenario("healthy")).await;
    let before = live_vms(&sim).await;
    create_lab(&sim).await;
    assert_eq!(live_vms(&sim).await.len(), before.len() + 2);
    let (talosconfig, kubeconfig) = (sim.fleet.talosconfig_path(), sim.fleet.kubeconfig_path());
    let backups = (backups_of(&talosconfig), backups_of(&kubeconfig));

    let mut s = console(&sim);
    s.send(b":ctx lab\r");
    s.wait_for("lab's nodes", BOUND, |t| t.contains("+ Nodes ("));
    s.send(b"D");
    s.wait_for("the delete plan asking for the ack", BOUND, |t| {
        t.contains("Delete cluster lab: terminate 2 VM(s)")
            && t.contains("then type: this destroys")
    });
    let plan = s.text();
    assert!(plan.is_ascii(), "LANG=C must give ASCII only:\n{plan}");
    assert!(
        plan.contains("taloscope created lab: its journal names the VMs"),
        "{plan}"
    );
    s.send(b"a");
    s.send(format!("{ACK}\r").as_bytes());
    s.wait_for("the guards passing", BOUND, |t| {
        t.contains("guards pass: s starts")
    });
    s.send(b"s");
    s.wait_for("the confirmation by the cluster's name", BOUND, |t| {
        t.contains("Type the cluster name in full")
    });
    s.send(b"lab\r");
    s.wait_for("the delete done", DELETE_BOUND, |t| {
        t.contains("remove its contexts: done")
    });
    let done = s.text();
    assert!(done.contains("is gone"), "{done}");
    assert!(done.contains("every VM is gone"), "{done}");
    // The backups' paths are as long as the test's temporary directory makes
    // them; the files themselves are counted below.
    assert!(done.contains("(backup"), "{done}");
    s.send(b"\x1b");
    s.wait_for("the fleet without lab", BOUND, |t| {
        t.contains("healthy") && t.contains("Enter open") && !t.contains("lab")
    });
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");

    assert_eq!(live_vms(&sim).await, before, "no VM of lab left");
    let contexts = run(&sim, &config_file(&sim), &["contexts", "-o", "json"]).await;
    assert_eq!(contexts.code, 0, "{}", contexts.stderr);
    assert!(!contexts.stdout.contains("\"lab\""), "{}", contexts.stdout);
    assert!(
        backups_of(&talosconfig) > backups.0,
        "a new talosconfig backup"
    );
    assert!(
        backups_of(&kubeconfig) > backups.1,
        "a new kubeconfig backup"
    );
    let audit = provision_common::audit(&sim);
    let action = "action=\"delete cluster: terminate 2 VM(s), remove its contexts\"";
    assert!(
        audit.contains(&format!("{action} outcome=\"confirmed\""))
            && audit.contains(&format!("{action} outcome=\"succeeded\"")),
        "{audit}"
    );
}
