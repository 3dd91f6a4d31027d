//! `taloscope config patch` as a process against the sim's `config-drift` scenario (Talos
//! 1.13, which still reboots for a change it cannot apply at once): a kubelet extra-arg patch
//! planned for the workers shows per worker its one changed path and the node's own "no
//! reboot", and runs node by node until every worker runs it; a change that needs a reboot
//! (`machine.env`) planned for the control planes says "reboot" per node, and `--mode
//! no-reboot` is refused by the node's dry run with upstream's reason.
mod upgrade_common;

use serde_json::Value;
use taloscope_sim::Scenario;
use upgrade_common::*;

const CLUSTER: &str = "config-drift";

fn patch_file(fx: &Fixture, name: &str, text: &str) -> String {
    let path = fx.state_dir().join(name);
    std::fs::create_dir_all(fx.state_dir()).unwrap();
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn patch(fx: &Fixture, file: &str, extra: &[&str]) -> tokio::process::Command {
    let mut cmd = fx.taloscope(CLUSTER, "config");
    cmd.args(["patch", "--patch", file, "--poll-ms", "100"])
        .args(extra);
    cmd
}

async fn json_plan(fx: &Fixture, file: &str, extra: &[&str]) -> Value {
    let mut args = vec!["--plan", "--output", "json"];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = output(patch(fx, file, &args)).await;
    assert!(code == Some(0) || code == Some(1), "{code:?} {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout} {stderr}"))
}

/// The sim's nodes hold their cluster's keys as base64 PEM ("-----BEGIN ... PRIVATE KEY"): a
/// node's diff quotes them, and none may be printed.
fn assert_no_secret(text: &str) {
    for quoted in ["LS0tLS1CRUdJTi", "PRIVATE KEY"] {
        assert!(!text.contains(quoted), "a secret printed: {text}");
    }
}

const KUBELET_ARG: &str = "machine:\n  kubelet:\n    extraArgs:\n      max-pods: \"250\"\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kubelet_arg_for_the_workers_is_planned_without_reboot_and_rolled_out_node_by_node() {
    let fx = start(builtin(CLUSTER)).await;
    let file = patch_file(&fx, "kubelet.yaml", KUBELET_ARG);

    let plan = json_plan(&fx, &file, &["--role", "worker"]).await;
    assert_eq!(plan["blocked"], false, "{plan}");
    let nodes = plan["nodes"].as_array().expect("nodes");
    let names: Vec<&str> = nodes.iter().map(|n| n["node"].as_str().unwrap()).collect();
    assert_eq!(names, ["w-1", "w-2"], "{plan}");
    for n in nodes {
        let changes = n["changes"].as_array().expect("changes");
        assert_eq!(changes.len(), 1, "one changed path on {}: {n}", n["node"]);
        assert_eq!(changes[0]["path"], "machine.kubelet.extraArgs.max-pods");
        assert_eq!(changes[0]["before"], Value::Null);
        assert_eq!(changes[0]["after"], "250");
        assert_eq!(n["reboots"], false, "{n}");
        assert_eq!(n["mode"], "no-reboot", "{n}");
        assert!(
            n["mode_details"]
                .as_str()
                .unwrap()
                .contains("without a reboot"),
            "{n}"
        );
    }
    assert_eq!(plan_guard(&plan, "config_accepted")["verdict"], "pass");

    let (code, table, stderr) = output(patch(&fx, &file, &["--role", "worker", "--plan"])).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        table.contains("w-1 (127.")
            && table.contains("worker): no reboot - Applied configuration without a reboot"),
        "{table}"
    );
    assert!(
        table.contains("machine.kubelet.extraArgs.max-pods: (absent) -> 250"),
        "{table}"
    );

    let (code, stdout, stderr) = output(patch(
        &fx,
        &file,
        &["--role", "worker", "--yes", "--confirm", CLUSTER],
    ))
    .await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_no_secret(&stdout);
    assert_no_secret(&table);
    let first = stdout.find("w-1: patched").expect("w-1 patched");
    let second = stdout.find("w-2: patched").expect("w-2 patched");
    assert!(first < second, "one node after the other: {stdout}");

    for node in ["w-1", "w-2"] {
        let mut show = fx.taloscope(CLUSTER, "config");
        show.args(["show", "--node", node]);
        let (code, yaml, stderr) = output(show).await;
        assert_eq!(code, Some(0), "{stderr}");
        assert!(yaml.contains("max-pods"), "{node}: {yaml}");
    }
    let mut show = fx.taloscope(CLUSTER, "config");
    show.args(["show", "--node", "cp-1"]);
    let (_, yaml, _) = output(show).await;
    assert!(!yaml.contains("max-pods"), "the control planes untouched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_that_needs_a_reboot_says_so_per_node_and_no_reboot_is_refused() {
    let fx = start(builtin(CLUSTER)).await;
    let file = patch_file(
        &fx,
        "env.yaml",
        "machine:\n  env:\n    GRPC_GO_LOG_SEVERITY_LEVEL: error\n",
    );

    let plan = json_plan(&fx, &file, &["--role", "controlplane"]).await;
    let nodes = plan["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 3, "{plan}");
    for n in nodes {
        assert_eq!(n["reboots"], true, "{n}");
        assert_eq!(n["mode"], "reboot", "{n}");
    }
    assert_eq!(
        plan_guard(&plan, "etcd_quorum")["verdict"],
        "pass",
        "{plan}"
    );

    let plan = json_plan(
        &fx,
        &file,
        &["--role", "controlplane", "--mode", "no-reboot"],
    )
    .await;
    assert_eq!(plan["blocked"], true, "{plan}");
    assert_no_secret(&plan.to_string());
    let refused = plan["nodes"][0]["refused"].as_str().expect("refused");
    assert!(
        refused.contains("can't be applied in immediate mode"),
        "upstream's reason: {refused}"
    );
    let (code, _, stderr) = output(patch(
        &fx,
        &file,
        &[
            "--role",
            "controlplane",
            "--mode",
            "no-reboot",
            "--yes",
            "--confirm",
            CLUSTER,
        ],
    ))
    .await;
    assert_eq!(code, Some(1), "refused: {stderr}");
    assert!(stderr.contains("config accepted"), "{stderr}");

    // In auto mode each control plane reboots, one after another, etcd healthy between.
    let (code, stdout, stderr) = output(patch(
        &fx,
        &file,
        &["--role", "controlplane", "--yes", "--confirm", CLUSTER],
    ))
    .await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let at = |line: &str| {
        stdout
            .find(line)
            .unwrap_or_else(|| panic!("{line:?} in {stdout}"))
    };
    let done: Vec<usize> = ["cp-1", "cp-2", "cp-3"]
        .iter()
        .map(|n| at(&format!("{n}: patched, back and healthy")))
        .collect();
    let started: Vec<usize> = ["cp-1", "cp-2", "cp-3"]
        .iter()
        .map(|n| at(&format!("{n}: applied (reboot)")))
        .collect();
    for i in 1..3 {
        assert!(
            done[i - 1] < started[i],
            "each control plane back before the next reboots: {stdout}"
        );
    }
    assert_no_secret(&stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tried_change_is_confirmed_once_the_node_is_back_and_healthy() {
    let fx = start(builtin(CLUSTER)).await;
    let file = patch_file(&fx, "kubelet.yaml", KUBELET_ARG);
    // The sim runs 200 times faster than the wall clock: an hour on its clock is 18 s here.
    let plan = json_plan(
        &fx,
        &file,
        &["--nodes", "w-1", "--mode", "try", "--try-timeout", "1h"],
    )
    .await;
    assert_eq!(plan["try_timeout_seconds"], 3600, "{plan}");
    assert_eq!(plan["nodes"][0]["mode"], "try", "{plan}");
    let (code, stdout, stderr) = output(patch(
        &fx,
        &file,
        &[
            "--nodes",
            "w-1",
            "--mode",
            "try",
            "--try-timeout",
            "1h",
            "--yes",
            "--confirm",
            CLUSTER,
        ],
    ))
    .await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("w-1: tried, healthy, confirmed"),
        "{stdout}"
    );
    let mut show = fx.taloscope(CLUSTER, "config");
    show.args(["show", "--node", "w-1"]);
    let (_, yaml, _) = output(show).await;
    assert!(yaml.contains("max-pods"), "{yaml}");
}

/// `config-drift`'s shape, w-1's kubelet never ready again once it restarts.
const KUBELET_STUCK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/scenarios/kubelet-stuck.yaml"
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tried_change_the_node_is_not_healthy_with_is_reverted_by_the_node_and_stops_the_rollout()
{
    let scenario = std::path::Path::new(KUBELET_STUCK);
    let fx = start(Scenario::from_file(scenario).expect("scenario")).await;
    let file = patch_file(&fx, "kubelet.yaml", KUBELET_ARG);
    let mut cmd = fx.taloscope("kubelet-stuck", "config");
    cmd.args([
        "patch",
        "--patch",
        &file,
        "--poll-ms",
        "100",
        "--role",
        "worker",
        "--mode",
        "try",
        "--try-timeout",
        "3s",
        "--yes",
        "--confirm",
        "kubelet-stuck",
    ]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    let all = format!("{stdout}\n{stderr}");
    assert!(
        all.contains(
            "w-1: not healthy within the try timeout; the node reverted the change by itself"
        ),
        "{all}"
    );
    assert!(!all.contains("w-2: tried"), "w-2 untouched: {all}");
    for node in ["w-1", "w-2"] {
        let mut show = fx.taloscope("kubelet-stuck", "config");
        show.args(["show", "--node", node]);
        let (code, yaml, stderr) = output(show).await;
        assert_eq!(code, Some(0), "{stderr}");
        assert!(!yaml.contains("max-pods"), "{node} runs without it: {yaml}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_node_or_a_bad_patch_file_is_named() {
    let fx = start(builtin(CLUSTER)).await;
    let file = patch_file(&fx, "kubelet.yaml", KUBELET_ARG);
    let (code, _, stderr) = output(patch(&fx, &file, &["--nodes", "w-9", "--plan"])).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("no node named \"w-9\""), "{stderr}");
    let bad = patch_file(&fx, "bad.yaml", "machine: [");
    let (code, _, stderr) = output(patch(&fx, &bad, &["--plan"])).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("bad.yaml"), "{stderr}");
}
