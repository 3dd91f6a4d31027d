//! End-to-end: the console in an 80x24 pseudo-terminal on a sim served from the
//! test process (its OpenNebula sim and `taloscope.yaml`), NO_COLOR=1 LANG=C.
//! From `healthy`'s nodes pane, `p` opens the wizard, two workers are
//! planned (its guards all pass), confirmed by name and followed on screen until both joined; a
//! console killed mid-provision and reopened shows the VM it started and
//! follows it to joined. On `capi`'s workload cluster the plan's `capi_owned` row fails,
//! naming `taloscope scale`, and `s` is refused by it.
mod pty_support;

use std::path::Path;
use std::time::Duration;

use pty_support::{BackgroundSim, PtySession};

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);
const JOIN_BOUND: Duration = Duration::from_secs(150);

fn console_on(sim: &BackgroundSim, home: &Path) -> PtySession {
    let env = [
        ("NO_COLOR", "1".to_string()),
        ("LANG", "C".to_string()),
        ("TALOSCONFIG", sim.talosconfig()),
        ("KUBECONFIG", sim.kubeconfig()),
        (
            "TALOSCOPE_CONFIG",
            sim.dir.path().join("taloscope.yaml").display().to_string(),
        ),
    ];
    let mut s = PtySession::start(24, 80, home, &[], &env);
    s.wait_for("the fleet", BOUND, |t| {
        t.contains("healthy") && t.contains("Enter open")
    });
    s.send(b":ctx healthy\r");
    s.wait_for("healthy's nodes", BOUND, |t| t.contains("+ Nodes ("));
    s
}

/// Rows of the VMs table (they carry the VM's loopback IP; the progress lines
/// do too, but start with their time) that show `stage`.
fn vm_rows(text: &str, stage: &str) -> usize {
    text.lines()
        .filter(|l| {
            l.contains("healthy-worker-")
                && l.contains(" 127.")
                && !l.contains("[+")
                && l.contains(&format!(" {stage} "))
        })
        .count()
}

/// `p`, the count raised to `count`, the plan, `s` and the name typed.
fn provision(s: &mut PtySession, count: usize) {
    s.send(b"p");
    s.wait_for("the wizard with the configured template", BOUND, |t| {
        t.contains("Provision new nodes for healthy") && t.contains("talos-healthy-worker")
    });
    let wizard = s.text();
    assert!(wizard.is_ascii(), "LANG=C must give ASCII only:\n{wizard}");
    assert!(wizard.contains("sim-opennebula"), "{wizard}");
    for _ in 1..count {
        s.send(b"+");
    }
    let wanted = format!("{count} VM(s)");
    s.wait_for("the count", BOUND, |t| t.contains(&wanted));
    s.send(b"\r");
    s.wait_for("the plan and its guards", BOUND, |t| {
        t.contains("guards pass: s starts")
    });
    let plan = s.text();
    assert!(
        plan.contains("PROVISION") && plan.contains("7 pass, 0 warn, 0 fail"),
        "{plan}"
    );
    s.send(b"s");
    s.wait_for("the confirmation", BOUND, |t| {
        t.contains("Type the cluster name in full")
    });
    s.send(b"healthy\r");
    s.wait_for("the progress pane", BOUND, |t| {
        t.contains("Provision of healthy") && t.contains("+ VMs ")
    });
}

#[test]
fn two_workers_provisioned_from_the_tui_until_both_joined() {
    let sim = BackgroundSim::start_scaled("healthy", 4.0, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut s = console_on(&sim, home.path());
    provision(&mut s, 2);
    let seen_states = std::cell::RefCell::new(std::collections::BTreeSet::new());
    s.wait_for("both workers joined", JOIN_BOUND, |t| {
        for stage in ["creating", "booting", "running", "apid"] {
            if t.contains(&format!(" {stage} ")) {
                seen_states.borrow_mut().insert(stage);
            }
        }
        vm_rows(t, "joined") == 2 && t.contains("2 of 2 joined")
    });
    assert!(
        !seen_states.borrow().is_empty(),
        "the pane showed no stage before joined"
    );
    let done = s.text();
    assert!(done.contains("RUNNING"), "{done}");
    let (status, _raw) = s.quit_answering(BOUND);
    assert!(status.success(), "exit status {status:?}");
    let audit =
        std::fs::read_to_string(home.path().join("taloscope-state/audit.log")).unwrap_or_default();
    assert!(
        audit.contains("provision") && audit.contains("confirmed"),
        "{audit}"
    );
}

#[test]
fn a_console_killed_mid_provision_shows_and_follows_its_vm_when_reopened() {
    let sim = BackgroundSim::start_scaled("healthy", 1.0, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut s = console_on(&sim, home.path());
    provision(&mut s, 1);
    s.wait_for("the VM created", BOUND, |t| {
        t.lines()
            .any(|l| l.contains("healthy-worker-") && (l.contains("PROLOG") || l.contains("BOOT")))
    });
    let journal = home.path().join("taloscope-state/provisions/healthy.json");
    assert!(journal.exists(), "no journal at {}", journal.display());
    s.child.kill().expect("kill the console");
    drop(s);

    let mut s = console_on(&sim, home.path());
    s.send(b":provisions\r");
    s.wait_for("the journal's VM", BOUND, |t| {
        t.contains("Provision of healthy") && t.contains("healthy-worker-")
    });
    s.wait_for("the VM joined", JOIN_BOUND, |t| vm_rows(t, "joined") == 1);
    let (status, _raw) = s.quit_answering(BOUND);
    assert!(status.success(), "exit status {status:?}");
}

#[test]
fn a_cluster_cluster_api_owns_is_refused_by_capi_owned_in_the_wizard() {
    let sim = BackgroundSim::start("capi", BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut env = sim.console_env();
    let config = sim.dir.path().join("taloscope.yaml").display().to_string();
    env.push(("TALOSCOPE_CONFIG", config));
    let mut s = PtySession::start(40, 160, home.path(), &[], &env);
    s.wait_for("the fleet, capi-work owned", BOUND, |t| {
        t.contains("capi-work") && t.contains("Enter open")
    });
    s.send(b":ctx capi-work\r");
    s.wait_for("capi-work's nodes", BOUND, |t| t.contains("+ Nodes ("));
    s.send(b"p");
    s.wait_for("the wizard", BOUND, |t| {
        t.contains("Provision new nodes for capi-work")
    });
    s.send(b"\r");
    // One condition on one frame: a frame caught mid-draw may end a row early.
    s.wait_for("the capi_owned row failing, naming the owner", BOUND, |t| {
        t.lines().any(|l| {
            l.contains("fail")
                && l.contains("not owned by Cluster API")
                && l.contains("owned by Cluster API (admin@capi-mgmt/default/capi-work)")
        })
    });
    s.send(b"s");
    s.wait_for("start refused, the guard named", BOUND, |t| {
        t.contains("guard failing: not owned by Cluster API")
            && !t.contains("Type the cluster name in full")
    });
    let (status, _raw) = s.quit_answering(BOUND);
    assert!(status.success(), "exit status {status:?}");
    let audit =
        std::fs::read_to_string(home.path().join("taloscope-state/audit.log")).unwrap_or_default();
    // The refusal is audited (as every plan screen's and the command line's are); nothing
    // was confirmed or started.
    assert!(
        audit.contains("outcome=\"refused: guard failing: not owned by Cluster API\"")
            && !audit.contains("confirmed")
            && !audit.contains("started"),
        "only the refusal: {audit}"
    );
}
