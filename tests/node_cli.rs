//! `taloscope node ...` and `taloscope service restart` as processes against the sim: a reboot
//! of cp-2 returns once cp-2 is back and Ready; on `cp2-down` rebooting cp-1 is refused by the
//! quorum guard; a disruption budget with no room fails the drain guard and one with room lets
//! the drain evict; a kubelet restart waits for it to run healthy again; a shutdown leaves the
//! node off; and every action is refused, with an audit line, read-only and as a reader.
mod upgrade_common;

use taloscope::kube::Eviction;
use upgrade_common::*;

/// `taloscope --context C node|service ...`, polling quickly.
fn node_cmd(fx: &Fixture, context: &str, words: &[&str]) -> tokio::process::Command {
    let mut cmd = fx.taloscope(context, words[0]);
    cmd.args(&words[1..]).args(["--poll-ms", "40"]);
    cmd
}

/// The address the sim's node `name` is reached at.
async fn address(fx: &Fixture, name: &str) -> String {
    let status = fx.status("healthy").await;
    status.node(name).expect("node").address.clone()
}

fn calls(fx: &Fixture, method: &str) -> Vec<String> {
    fx.sim
        .state()
        .mutating_calls()
        .into_iter()
        .filter(|c| c.method == method)
        .map(|c| c.node)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reboot_returns_when_the_node_is_back_and_ready() {
    let fx = start(builtin("healthy")).await;
    let cp2_address = address(&fx, "cp-2").await;
    let boot_before = fx
        .talos("healthy")
        .boot_id(&cp2_address)
        .await
        .expect("boot id");
    let cmd = node_cmd(
        &fx,
        "healthy",
        &[
            "node",
            "reboot",
            "--node",
            "cp-2",
            "--yes",
            "--confirm",
            "cp-2",
        ],
    );
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_eq!(calls(&fx, "MachineService.Reboot"), ["cp-2"]);
    assert!(stdout.contains("cp-2: reboot requested"), "{stdout}");
    assert!(
        stdout.contains("cp-2: rebooting: not answering"),
        "the node was followed down: {stdout}"
    );
    assert!(
        stdout.trim_end().ends_with("cp-2 rebooted and back"),
        "{stdout}"
    );
    // Returned only once back: Talos ready, Kubernetes Ready, a new boot, uncordoned.
    let status = fx.status("healthy").await;
    let cp2 = status.node("cp-2").expect("cp-2");
    assert!(cp2.ready && cp2.error.is_none(), "{cp2:?}");
    assert_eq!(cp2.k8s_ready, Some(true), "{cp2:?}");
    assert_eq!(cp2.cordoned, Some(false), "{cp2:?}");
    let boot_after = fx
        .talos("healthy")
        .boot_id(&cp2_address)
        .await
        .expect("boot id");
    assert_ne!(boot_before, boot_after);
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).expect("audit");
    assert!(
        audit.contains("action=\"reboot node cp-2\" outcome=\"confirmed\"")
            && audit.contains("action=\"reboot node cp-2\" outcome=\"succeeded\""),
        "{audit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_cp2_down_rebooting_cp1_is_refused_by_the_quorum_guard() {
    let fx = start(builtin("cp2-down")).await;
    let cmd = node_cmd(
        &fx,
        "cp2-down",
        &[
            "node", "reboot", "--node", "cp-1", "--plan", "--output", "json",
        ],
    );
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}");
    let plan: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(plan["blocked"], true);
    let quorum = plan_guard(&plan, "etcd_quorum");
    assert_eq!(quorum["verdict"], "fail", "{quorum}");
    assert!(
        quorum["reason"]
            .as_str()
            .is_some_and(|r| r.contains("taking cp-1 down breaks etcd quorum")),
        "{quorum}"
    );

    let cmd = node_cmd(
        &fx,
        "cp2-down",
        &[
            "node",
            "reboot",
            "--node",
            "cp-1",
            "--yes",
            "--confirm",
            "cp-1",
        ],
    );
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("FAIL") && l.contains("etcd quorum")),
        "the guard is named: {stdout}"
    );
    assert!(stderr.contains("refused"), "{stderr}");
    assert!(fx.sim.state().mutating_calls().is_empty());

    // A rollout holding the Lease blocks a node action too.
    let fx = start(builtin("healthy")).await;
    let _lease = fx.lease_held_by_bob("healthy").await;
    let cmd = node_cmd(
        &fx,
        "healthy",
        &[
            "node", "cordon", "--node", "w-1", "--plan", "--output", "json",
        ],
    );
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}");
    let plan: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(plan_guard(&plan, "no_other_rollout")["verdict"], "fail");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_action_is_refused_read_only_and_as_a_reader_with_an_audit_line() {
    let fx = start(builtin("healthy")).await;
    let actions: [&[&str]; 6] = [
        &["node", "reboot"],
        &["node", "shutdown"],
        &["node", "cordon"],
        &["node", "uncordon"],
        &["node", "drain"],
        &["service", "restart", "kubelet"],
    ];
    for action in actions {
        let mut words = action.to_vec();
        words.extend(["--node", "w-1", "--yes", "--confirm", "w-1"]);
        let mut cmd = node_cmd(&fx, "healthy", &words);
        cmd.arg("--readonly");
        let (code, stdout, stderr) = output(cmd).await;
        assert_eq!(code, Some(1), "{action:?}: {stdout}\n{stderr}");
        assert!(stderr.contains("read-only"), "{action:?}: {stderr}");

        let cmd = node_cmd(&fx, "healthy-reader", &words);
        let (code, stdout, stderr) = output(cmd).await;
        assert_eq!(code, Some(1), "{action:?}: {stdout}\n{stderr}");
        assert!(
            stdout.lines().any(|l| l.contains("FAIL")
                && l.contains("client role")
                && l.contains("os:reader")),
            "{action:?}: {stdout}"
        );
    }
    assert!(fx.sim.state().mutating_calls().is_empty());
    let api = fx.sim.kube_api(0).expect("kube API");
    assert!(api.actions().is_empty(), "{:?}", api.actions());
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).expect("audit");
    let lines: Vec<&str> = audit.lines().collect();
    for verb in [
        "reboot",
        "shut down",
        "cordon",
        "uncordon",
        "drain",
        "restart service kubelet on",
    ] {
        let about = format!("action=\"{verb} node w-1\"");
        let of = |outcome: &str| {
            lines
                .iter()
                .filter(|l| l.contains(&about) && l.contains(outcome))
                .count()
        };
        assert_eq!(of("outcome=\"refused: read-only\""), 1, "{verb}: {audit}");
        assert_eq!(
            of("outcome=\"failed: refused by its guards\""),
            1,
            "{verb}: {audit}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_honours_the_disruption_budget_and_cordon_uncordon_round_trip() {
    let fx = start(builtin("healthy")).await;
    let api = fx.sim.kube_api(0).expect("kube API");
    // Four web pods, all healthy, four needed: no disruption allowed.
    api.set_disruption_budget(Some(4));
    let kube = fx.kube("healthy").await;
    let pods = kube.pods_on_node("w-1").await.expect("pods");
    let web = pods.iter().find(|p| p.must_evict()).expect("a web pod");
    match kube
        .evict_pod(&web.namespace, &web.name)
        .await
        .expect("evict")
    {
        Eviction::Refused(why) => assert!(why.contains("disruption budget"), "{why}"),
        other => panic!("the budget let {other:?} through"),
    }
    let cmd = node_cmd(
        &fx,
        "healthy",
        &[
            "node", "drain", "--node", "w-1", "--plan", "--output", "json",
        ],
    );
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}");
    let plan: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let guard = plan_guard(&plan, "workloads_drainable");
    assert_eq!(guard["verdict"], "fail", "{guard}");
    assert!(
        guard["reason"]
            .as_str()
            .is_some_and(|r| r.contains("default/web") && r.contains("needs 4 healthy, has 4")),
        "{guard}"
    );

    // Room for one at a time: each evicted pod is replaced on w-2 before the next goes.
    api.set_disruption_budget(Some(3));
    let cmd = node_cmd(
        &fx,
        "healthy",
        &[
            "node",
            "drain",
            "--node",
            "w-1",
            "--yes",
            "--confirm",
            "w-1",
        ],
    );
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("w-1 drained: 2 pods evicted"), "{stdout}");
    let left = kube.pods_on_node("w-1").await.expect("pods");
    assert!(left.iter().all(|p| !p.must_evict()), "{left:?}");
    let w1 = |nodes: Vec<taloscope::kube::KubeNode>| {
        nodes.into_iter().find(|n| n.name == "w-1").expect("w-1")
    };
    assert!(w1(kube.nodes().await.expect("nodes")).unschedulable);

    let cmd = node_cmd(
        &fx,
        "healthy",
        &[
            "node",
            "uncordon",
            "--node",
            "w-1",
            "--yes",
            "--confirm",
            "w-1",
        ],
    );
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(!w1(kube.nodes().await.expect("nodes")).unschedulable);
    let cmd = node_cmd(
        &fx,
        "healthy",
        &[
            "node",
            "cordon",
            "--node",
            "w-1",
            "--yes",
            "--confirm",
            "w-1",
        ],
    );
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let node = w1(kube.nodes().await.expect("nodes"));
    assert!(
        node.unschedulable && node.cordoned_by.is_none(),
        "an operator's cordon carries no rollout mark: {node:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubelet_restarts_other_services_refuse_and_shutdown_leaves_the_node_off() {
    let fx = start(builtin("healthy")).await;
    let cmd = node_cmd(
        &fx,
        "healthy",
        &[
            "service",
            "restart",
            "kubelet",
            "--node",
            "w-1",
            "--yes",
            "--confirm",
            "w-1",
        ],
    );
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("w-1: Service \"kubelet\" restarted"),
        "{stdout}"
    );
    assert!(
        stdout
            .trim_end()
            .ends_with("kubelet on w-1 running and healthy"),
        "{stdout}"
    );
    assert_eq!(calls(&fx, "MachineService.ServiceRestart"), ["w-1"]);

    let cmd = node_cmd(
        &fx,
        "healthy",
        &["service", "restart", "etcd", "--node", "cp-1", "--plan"],
    );
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("FAIL") && l.contains("service restartable")),
        "{stdout}"
    );
    // The node refuses it too, as system.go APIRestart does.
    let cp1 = address(&fx, "cp-1").await;
    let refused = fx.talos("healthy").service_restart(&cp1, "etcd").await;
    let err = refused.expect_err("etcd is not restartable via the API");
    assert!(
        err.to_string()
            .contains("doesn't support restart operation via API"),
        "{err}"
    );
    // A reader may not call it at all (machined.go: operator or admin).
    let reader = fx.talos("healthy-reader");
    let w1 = address(&fx, "w-1").await;
    let denied = reader.service_restart(&w1, "kubelet").await;
    assert!(
        matches!(
            denied,
            Err(taloscope::talos::TalosError::PermissionDenied { .. })
        ),
        "{denied:?}"
    );
    let denied = reader.shutdown(&w1, false).await;
    assert!(
        matches!(
            denied,
            Err(taloscope::talos::TalosError::PermissionDenied { .. })
        ),
        "{denied:?}"
    );

    let cmd = node_cmd(
        &fx,
        "healthy",
        &[
            "node",
            "shutdown",
            "--node",
            "w-2",
            "--yes",
            "--confirm",
            "w-2",
        ],
    );
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.trim_end().ends_with("w-2 is off (not answering)"),
        "{stdout}"
    );
    assert_eq!(calls(&fx, "MachineService.Shutdown"), ["w-2"]);
    let status = fx.status("healthy").await;
    let w2 = status.node("w-2").expect("w-2");
    assert!(w2.error.is_some() && !w2.ready, "{w2:?}");
}
