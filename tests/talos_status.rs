//! Status collection and `taloscope status` against the sim: the `healthy`
//! cluster reports 5 nodes, versions, 3 healthy etcd members, one leader and a
//! quorum tolerating one failure; in `cp2-down` cp-2 is unreachable, exit 1.
mod talos_common;

use std::process::Command;
use std::time::{Duration, Instant};

use talos_common::{fast, scenario, start, within};
use taloscope::fleet::{CollectOptions, FleetStatus, NodeRole, collect_context};
use taloscope::talos::MachineStage;

fn status_command(talosconfig: &std::path::Path, home: &std::path::Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_taloscope"));
    cmd.args(["status"])
        .args(args)
        .env("TALOSCONFIG", talosconfig)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env_remove("KUBECONFIG")
        .env_remove("TALOSCOPE_CONFIG")
        .env_remove("TALOS_HOME");
    cmd
}

/// Runs the binary off the runtime so the in-process sim keeps serving.
async fn run(cmd: Command) -> std::process::Output {
    let mut cmd = cmd;
    within(
        60,
        "taloscope status",
        tokio::task::spawn_blocking(move || cmd.output()),
    )
    .await
    .expect("join")
    .expect("taloscope runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collect_reports_the_healthy_cluster() {
    let sim = start(scenario("healthy")).await;
    let opts = CollectOptions {
        client: fast(),
        ..Default::default()
    };
    let c = within(
        20,
        "collect",
        collect_context("healthy", &sim.context("healthy"), &opts),
    )
    .await;
    assert!(c.reachable && c.error.is_none());
    assert_eq!(c.role, "os:admin");
    let names: Vec<&str> = c.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["cp-1", "cp-2", "cp-3", "w-1", "w-2"]);
    for n in &c.nodes {
        assert_eq!(n.talos_version.as_deref(), Some("v1.11.3"), "{n:?}");
        assert_eq!(n.stage, Some(MachineStage::Running));
        assert!(n.ready && n.error.is_none(), "{n:?}");
        let want = if n.name.starts_with("cp") {
            NodeRole::Controlplane
        } else {
            NodeRole::Worker
        };
        assert_eq!(n.role, want, "{n:?}");
    }
    assert_eq!(c.etcd.members.len(), 3);
    assert!(c.etcd.members.iter().all(|m| m.healthy && m.id.len() == 16));
    assert_eq!(c.etcd.leader().map(|m| m.hostname.as_str()), Some("cp-1"));
    assert_eq!(c.etcd.members.iter().filter(|m| m.leader).count(), 1);
    assert_eq!(
        (
            c.etcd.quorum.members,
            c.etcd.quorum.healthy,
            c.etcd.quorum.needed,
            c.etcd.quorum.tolerates
        ),
        (3, 3, 2, 1)
    );
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_json_for_healthy_exits_0() {
    let sim = start(scenario("healthy")).await;
    let home = tempfile::tempdir().expect("home");
    let out = run(status_command(
        &sim.fleet.talosconfig_path(),
        home.path(),
        &["--context", "healthy", "--output", "json"],
    ))
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let fleet: FleetStatus = serde_json::from_slice(&out.stdout).expect("JSON contract");
    assert_eq!(fleet.clusters.len(), 1);
    let c = &fleet.clusters[0];
    assert_eq!(c.name, "healthy");
    assert_eq!(c.nodes.len(), 5);
    assert!(
        c.nodes
            .iter()
            .all(|n| n.talos_version.as_deref() == Some("v1.11.3"))
    );
    assert_eq!(c.etcd.members.iter().filter(|m| m.healthy).count(), 3);
    assert_eq!(c.etcd.members.iter().filter(|m| m.leader).count(), 1);
    assert_eq!(c.etcd.quorum.tolerates, 1);
    // the raw keys, not just what our own structs accept
    let raw: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(raw["clusters"][0]["nodes"][0]["role"], "controlplane");
    assert_eq!(raw["clusters"][0]["nodes"][0]["stage"], "running");
    assert!(raw["clusters"][0]["nodes"][0]["error"].is_null());
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_for_cp2_down_names_it_and_exits_1() {
    let sim = start(scenario("cp2-down")).await;
    let home = tempfile::tempdir().expect("home");
    let started = Instant::now();
    let out = run(status_command(
        &sim.fleet.talosconfig_path(),
        home.path(),
        &["--context", "cp2-down", "--output", "json"],
    ))
    .await;
    // connect 3 s per endpoint at worst, then one 5 s call round, plus start-up
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    let fleet: FleetStatus = serde_json::from_slice(&out.stdout).expect("JSON contract");
    let c = &fleet.clusters[0];
    assert!(c.reachable);
    let cp2 = c
        .nodes
        .iter()
        .find(|n| n.name == "cp-2")
        .expect("cp-2 named from cluster members");
    assert!(
        cp2.error
            .as_deref()
            .is_some_and(|e| e.contains("unreachable")),
        "{cp2:?}"
    );
    assert_eq!(cp2.role, NodeRole::Controlplane);
    assert!(
        c.nodes
            .iter()
            .filter(|n| n.name != "cp-2")
            .all(|n| n.error.is_none())
    );
    let m = c
        .etcd
        .members
        .iter()
        .find(|m| m.hostname == "cp-2")
        .expect("cp-2 member");
    assert!(!m.healthy);
    assert_eq!((c.etcd.quorum.healthy, c.etcd.quorum.tolerates), (2, 0));
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_table_and_configuration_errors() {
    let sim = start(scenario("single-cp")).await;
    let home = tempfile::tempdir().expect("home");
    let out = run(status_command(
        &sim.fleet.talosconfig_path(),
        home.path(),
        &["--context", "single-cp"],
    ))
    .await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("cp-1") && text.contains("controlplane"),
        "{text}"
    );
    assert!(text.contains("tolerates 0 more failures"), "{text}");
    assert!(text.contains("etcd: 1 member, 1 healthy"), "{text}");

    let out = run(status_command(
        &sim.fleet.talosconfig_path(),
        home.path(),
        &["--context", "nope"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"nope\""));

    let missing = home.path().join("no-such-talosconfig");
    let out = run(status_command(&missing, home.path(), &[])).await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    sim.fleet.shutdown().await;
}
