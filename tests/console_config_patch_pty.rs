//! The config screen's patch wizard end to end in an 80x24 pseudo-terminal (NO_COLOR=1
//! LANG=C) on the sim's `config-drift` (Talos 1.13): `p` on w-1's configuration, a kubelet
//! extra-arg patch for every worker planned from each worker's own dry run ("no reboot" per
//! worker, its one changed path), started through the typed confirmation and run node by node
//! to its end, each node's phases (apply, wait, checks) shown as they happen; and a change
//! that needs a reboot planned for the control planes says "reboot" per node, while
//! `no-reboot` is refused by the nodes with upstream's reason and the plan's Start names the
//! failing guard. In try mode on a cluster whose w-1 kubelet never gets Ready again, w-1's
//! change is on trial, not confirmed, reverted by the node itself, and the rollout stops
//! before w-2, all said on screen.
mod pty_support;

use std::path::Path;
use std::time::Duration;

use pty_support::{BackgroundSim, PtySession, console_on_five_nodes};

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);
const CLUSTER: &str = "config-drift";
const RIGHT: &[u8] = b"\x1b[C";

fn patch_file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("patch file");
    path.display().to_string()
}

/// The wizard of `node`'s configuration, `file` typed as its patch.
fn wizard_with(s: &mut PtySession, node: &str, file: &str) {
    s.send(format!(":config {node}\r").as_bytes());
    s.wait_for("the node's configuration", BOUND, |t| {
        t.contains(&format!("Machine config of {node}:")) && t.contains("+ machine.kubelet")
    });
    s.send(b"p");
    s.wait_for("the patch wizard", BOUND, |t| {
        t.contains(&format!("Patch the machine configuration of {CLUSTER}"))
            && t.contains("Enter plan")
    });
    s.send(file.as_bytes());
    s.send(b"\t");
}

#[test]
fn a_kubelet_arg_for_the_workers_is_planned_without_reboot_and_patched_node_by_node() {
    let sim = BackgroundSim::start(CLUSTER, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let file = patch_file(
        home.path(),
        "kubelet.yaml",
        "machine:\n  kubelet:\n    extraArgs:\n      max-pods: \"250\"\n",
    );
    let mut s = console_on_five_nodes(&sim, home.path(), CLUSTER, BOUND);
    wizard_with(&mut s, "w-1", &file);
    s.send(RIGHT);
    s.wait_for("every worker chosen", BOUND, |t| {
        t.contains("< every worker >")
    });
    s.send(b"\r");
    s.wait_for("the plan from both workers' dry runs", BOUND, |t| {
        t.contains("w-1 (") && t.contains("w-2 (") && t.contains("guards pass")
    });
    let plan = s.text();
    assert_eq!(
        plan.matches("worker): no reboot - Applied configuration without a reboot")
            .count(),
        2,
        "the node's own word per worker:\n{plan}"
    );
    assert_eq!(
        plan.matches("machine.kubelet.extraArgs.max-pods: (absent) -> 250")
            .count(),
        2,
        "one changed path per worker:\n{plan}"
    );
    assert!(
        !plan.contains("cp-1 ("),
        "the control planes untouched:\n{plan}"
    );
    s.send(b"s");
    s.wait_for("the typed confirmation", BOUND, |t| t.contains("Type the"));
    s.send(format!("{CLUSTER}\r").as_bytes());
    s.wait_for("w-1 patched first", BOUND, |t| {
        t.contains("w-1: patched, back and healthy")
    });
    s.wait_for(
        "w-2's phases as they happen: applied, then its checks",
        BOUND,
        |t| t.contains("w-2: checks: running, Ready"),
    );
    s.wait_for("both workers patched, one after the other", BOUND, |t| {
        t.contains("2 node(s) of config-drift patched")
    });
    let done = s.text();
    assert!(!done.contains("LS0tLS1CRUdJTi"), "no secret shown:\n{done}");
    let (status, _raw) = s.quit_answering(BOUND);
    assert!(status.success(), "exit status {status:?}");
}

#[test]
fn a_change_that_needs_a_reboot_says_so_and_no_reboot_is_refused_with_upstreams_reason() {
    let sim = BackgroundSim::start(CLUSTER, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let file = patch_file(
        home.path(),
        "env.yaml",
        "machine:\n  env:\n    GRPC_GO_LOG_SEVERITY_LEVEL: error\n",
    );
    let mut s = console_on_five_nodes(&sim, home.path(), CLUSTER, BOUND);
    wizard_with(&mut s, "cp-1", &file);
    s.send(RIGHT);
    s.send(RIGHT);
    s.wait_for("every control plane chosen", BOUND, |t| {
        t.contains("< every control plane >")
    });
    s.send(b"\r");
    s.wait_for("a reboot per control plane", BOUND, |t| {
        t.matches("controlplane): reboot - ").count() >= 2
    });
    s.send(b"\x1b");
    s.wait_for("the wizard again", BOUND, |t| {
        t.contains("< every control plane >")
    });
    s.send(b"\t");
    s.send(RIGHT);
    s.wait_for("no-reboot chosen", BOUND, |t| t.contains("< no-reboot >"));
    s.send(b"\r");
    s.wait_for("the nodes refuse it with upstream's reason", BOUND, |t| {
        t.contains("can't be applied in immediate mode")
            && t.contains("Start refused: guard failing: config accepted")
    });
    s.send(b"s");
    s.wait_for("Start refused", BOUND, |t| {
        t.contains("refused: guard failing: config accepted")
    });
    assert!(!s.text().contains("Type the"), "no confirmation asked");
    let (status, _raw) = s.quit_answering(BOUND);
    assert!(status.success(), "exit status {status:?}");
    assert!(
        pty_support::audit_log(home.path()).contains("guard failing: config accepted"),
        "the refusal audited"
    );
}

/// `config-drift`'s shape, w-1's kubelet never Ready again once it restarts (the scenario of
/// tests/config_patch_cli.rs's rollback test).
const KUBELET_STUCK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/scenarios/kubelet-stuck.yaml"
);

/// Whether `node` of `kubelet-stuck` runs the kubelet patch, as `config show` reads it.
fn runs_the_patch(sim: &BackgroundSim, home: &Path, node: &str) -> bool {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_taloscope"))
        .env_clear()
        .env("HOME", home)
        .env("TALOSCOPE_STATE_DIR", home.join("taloscope-state"))
        .env("TALOSCOPE_RELEASES_REGISTRY", "off")
        .args(["--talosconfig", &sim.talosconfig()])
        .args([
            "--context",
            "kubelet-stuck",
            "config",
            "show",
            "--node",
            node,
        ])
        .output()
        .expect("taloscope config show");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).contains("max-pods")
}

#[test]
fn a_tried_change_the_node_is_not_healthy_with_is_reverted_by_the_node_and_stops_the_rollout() {
    // 20 simulated seconds a real one: the node reverts its 60 s trial after 3 s here.
    let sim = BackgroundSim::start_scaled(KUBELET_STUCK, 20.0, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let file = patch_file(
        home.path(),
        "kubelet.yaml",
        "machine:\n  kubelet:\n    extraArgs:\n      max-pods: \"250\"\n",
    );
    let mut s = sim.console_on_cluster(home.path(), (40, 200), "kubelet-stuck", BOUND);
    s.wait_for("the three nodes", BOUND, |t| t.contains("+ Nodes (3)"));
    s.send(b":config w-1\r");
    s.wait_for("w-1's configuration", BOUND, |t| {
        t.contains("Machine config of w-1:") && t.contains("+ machine.kubelet")
    });
    s.send(b"p");
    s.wait_for("the patch wizard", BOUND, |t| t.contains("Enter plan"));
    s.send(file.as_bytes());
    s.send(b"\t");
    s.send(RIGHT);
    s.wait_for("every worker chosen", BOUND, |t| {
        t.contains("< every worker >")
    });
    s.send(b"\t");
    for _ in 0..3 {
        s.send(RIGHT);
    }
    s.wait_for("try mode, its timeout offered", BOUND, |t| {
        t.contains("< try >") && t.contains("1m")
    });
    s.send(b"\r");
    s.wait_for("the plan of both workers", BOUND, |t| {
        t.contains("w-1 (") && t.contains("w-2 (") && t.contains("guards pass")
    });
    s.send(b"s");
    s.wait_for("the typed confirmation", BOUND, |t| t.contains("Type the"));
    s.send(b"kubelet-stuck\r");
    s.wait_for("w-1 on trial", BOUND, |t| t.contains("w-1: on trial"));
    s.wait_for("w-1 reverted by itself, the rollout stopped", BOUND, |t| {
        t.contains("the node reverted the change by itself") && t.contains("the rollout stops here")
    });
    let end = s.text();
    assert!(!end.contains("w-1: tried, healthy, confirmed"), "{end}");
    assert!(!end.contains("w-2: applying"), "w-2 untouched:\n{end}");
    let w2 = (end.lines()).find(|l| l.contains("w-2: apply (try), wait"));
    assert!(
        w2.is_some_and(|l| l.contains("pending")),
        "w-2's step:\n{end}"
    );
    for node in ["w-1", "w-2"] {
        assert!(!runs_the_patch(&sim, home.path(), node), "{node} runs it");
    }
    let (status, _raw) = s.quit_answering(BOUND);
    assert!(status.success(), "exit status {status:?}");
}
