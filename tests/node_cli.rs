//! `taloscope node ...` and `taloscope service restart` as processes against the sim: a reboot
//! of cp-2 returns once cp-2 is back and Ready; on `cp2-down` rebooting cp-1 is refused by the
//! quorum guard; a disruption budget with no room fails the drain guard and one with room lets
//! the drain evict; a kubelet restart waits for it to run healthy again; a shutdown leaves the
//! node off; a SIGINT while a reboot waits cancels it, saying the node stays cordoned; a rollback
//! boots the install before the last upgrade, and a node never upgraded refuses it; an etcd
//! leave takes a control plane's member out (a worker has none to take out, and a member whose
//! going loses quorum is refused) and the node joins again when it reboots; and every action
//! is refused, with an audit line, read-only and as a reader.
mod upgrade_common;

use taloscope::kube::Eviction;
use taloscope::talos::{LegacyUpgrade, TalosError};
use upgrade_common::*;

/// `taloscope --context C node|service ACTION... --node N [more]`, polling quickly.
fn node_cmd(
    fx: &Fixture,
    context: &str,
    action: &[&str],
    node: &str,
    more: &[&str],
) -> tokio::process::Command {
    let mut cmd = fx.taloscope(context, action[0]);
    cmd.args(&action[1..])
        .args(["--node", node])
        .args(more)
        .args(["--poll-ms", "40"]);
    cmd
}

/// Runs `action` on `node` with `--yes --confirm NODE` (plus `more`); asserts the exit code
/// and returns stdout and stderr.
async fn run_confirmed(
    fx: &Fixture,
    context: &str,
    action: &[&str],
    node: &str,
    more: &[&str],
    code: i32,
) -> (String, String) {
    let mut cmd = node_cmd(fx, context, action, node, &["--yes", "--confirm", node]);
    cmd.args(more);
    let (got, stdout, stderr) = output(cmd).await;
    assert_eq!(got, Some(code), "{action:?} {node}: {stdout}\n{stderr}");
    (stdout, stderr)
}

/// The `--plan --output json` of `action` on `node`, which a guard blocks (exit 1).
async fn blocked_plan(
    fx: &Fixture,
    context: &str,
    action: &[&str],
    node: &str,
) -> serde_json::Value {
    let cmd = node_cmd(fx, context, action, node, &["--plan", "--output", "json"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}");
    let plan: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(plan["blocked"], true, "{plan}");
    plan
}

/// Asserts the guard `id` of `plan` fails with a reason containing each of `words`.
fn assert_fails(plan: &serde_json::Value, id: &str, words: &[&str]) {
    let guard = plan_guard(plan, id);
    assert_eq!(guard["verdict"], "fail", "{guard}");
    let reason = guard["reason"].as_str().unwrap_or_default();
    assert!(words.iter().all(|w| reason.contains(w)), "{guard}");
}

/// Whether a table's line shows the guard titled `title` failing (and containing `also`).
fn fails_in_table(stdout: &str, title: &str, also: &str) -> bool {
    stdout
        .lines()
        .any(|l| l.contains("FAIL") && l.contains(title) && l.contains(also))
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
    let talos = fx.talos("healthy");
    let boot_before = talos.boot_id(&cp2_address).await.expect("boot id");
    let (stdout, _) = run_confirmed(&fx, "healthy", &["node", "reboot"], "cp-2", &[], 0).await;
    assert_eq!(calls(&fx, "MachineService.Reboot"), ["cp-2"]);
    assert!(stdout.contains("cp-2: reboot requested"), "{stdout}");
    // Whether a poll lands in the node's short downtime (about 0.1 s at the sim's time scale)
    // is luck; the new boot id below is what proves the run followed a real reboot.
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
    let boot_after = talos.boot_id(&cp2_address).await.expect("boot id");
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
    let plan = blocked_plan(&fx, "cp2-down", &["node", "reboot"], "cp-1").await;
    assert_fails(
        &plan,
        "etcd_quorum",
        &["taking cp-1 down breaks etcd quorum"],
    );
    let (stdout, stderr) =
        run_confirmed(&fx, "cp2-down", &["node", "reboot"], "cp-1", &[], 1).await;
    assert!(
        fails_in_table(&stdout, "etcd quorum", ""),
        "the guard is named: {stdout}"
    );
    assert!(stderr.contains("refused"), "{stderr}");
    assert!(fx.sim.state().mutating_calls().is_empty());

    // A rollout holding the Lease blocks a node action too.
    let fx = start(builtin("healthy")).await;
    let _lease = fx.lease_held_by_bob("healthy").await;
    let plan = blocked_plan(&fx, "healthy", &["node", "cordon"], "w-1").await;
    assert_fails(&plan, "no_other_rollout", &["bob@jump2"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_action_is_refused_read_only_and_as_a_reader_with_an_audit_line() {
    let fx = start(builtin("healthy")).await;
    let actions: [&[&str]; 8] = [
        &["node", "reboot"],
        &["node", "shutdown"],
        &["node", "cordon"],
        &["node", "uncordon"],
        &["node", "drain"],
        &["node", "rollback"],
        &["node", "etcd-leave"],
        &["service", "restart", "kubelet"],
    ];
    for action in actions {
        let (_, stderr) = run_confirmed(&fx, "healthy", action, "w-1", &["--readonly"], 1).await;
        assert!(stderr.contains("read-only"), "{action:?}: {stderr}");
        let (stdout, _) = run_confirmed(&fx, "healthy-reader", action, "w-1", &[], 1).await;
        assert!(
            fails_in_table(&stdout, "client role", "os:reader"),
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
        "roll back",
        "etcd leave",
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
            of("outcome=\"failed: refused by its guards: guard \\\"client role\\\" blocks"),
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
    let plan = blocked_plan(&fx, "healthy", &["node", "drain"], "w-1").await;
    assert_fails(
        &plan,
        "workloads_drainable",
        &["default/web", "needs 4 healthy, has 4"],
    );

    // Room for one at a time: each evicted pod is replaced on w-2 before the next goes.
    api.set_disruption_budget(Some(3));
    // The plan names the pods it evicts.
    let mut cmd = fx.taloscope("healthy", "node");
    cmd.args(["drain", "--node", "w-1", "--plan"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    for pod in pods.iter().filter(|p| p.must_evict()) {
        assert!(
            stdout.contains(&pod.key()),
            "{} named in\n{stdout}",
            pod.key()
        );
    }
    let (stdout, _) = run_confirmed(&fx, "healthy", &["node", "drain"], "w-1", &[], 0).await;
    assert!(stdout.contains("w-1 drained: 2 pods evicted"), "{stdout}");
    let left = kube.pods_on_node("w-1").await.expect("pods");
    assert!(left.iter().all(|p| !p.must_evict()), "{left:?}");
    let w1 = async || {
        let nodes = kube.nodes().await.expect("nodes");
        nodes.into_iter().find(|n| n.name == "w-1").expect("w-1")
    };
    assert!(w1().await.unschedulable);
    run_confirmed(&fx, "healthy", &["node", "uncordon"], "w-1", &[], 0).await;
    assert!(!w1().await.unschedulable);
    let json = ["--output", "json"];
    let (stdout, _) = run_confirmed(&fx, "healthy", &["node", "cordon"], "w-1", &json, 0).await;
    let outcome: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(
        (
            &outcome["operation"],
            &outcome["succeeded"],
            &outcome["node"]
        ),
        (
            &serde_json::json!("cordon"),
            &serde_json::json!(true),
            &serde_json::json!("w-1")
        ),
        "{outcome}"
    );
    let node = w1().await;
    assert!(
        node.unschedulable && node.cordoned_by.is_none(),
        "an operator's cordon carries no rollout mark: {node:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubelet_restarts_other_services_refuse_and_shutdown_leaves_the_node_off() {
    let fx = start(builtin("healthy")).await;
    let restart_kubelet = ["service", "restart", "kubelet"];
    let (stdout, _) = run_confirmed(&fx, "healthy", &restart_kubelet, "w-1", &[], 0).await;
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

    let plan = blocked_plan(&fx, "healthy", &["service", "restart", "etcd"], "cp-1").await;
    assert_fails(&plan, "service_restartable", &["etcd"]);
    // The node refuses it too, as system.go APIRestart does.
    let cp1 = address(&fx, "cp-1").await;
    let refused = fx.talos("healthy").service_restart(&cp1, "etcd").await;
    let err = refused.expect_err("etcd is not restartable via the API");
    assert!(
        err.to_string()
            .contains("doesn't support restart operation via API"),
        "{err}"
    );
    // A reader may not call either (machined.go: operator or admin).
    let reader = fx.talos("healthy-reader");
    let w1 = address(&fx, "w-1").await;
    let denied = reader.service_restart(&w1, "kubelet").await.err();
    assert!(
        matches!(denied, Some(TalosError::PermissionDenied { .. })),
        "{denied:?}"
    );
    let denied = reader.shutdown(&w1, false).await.err();
    assert!(
        matches!(denied, Some(TalosError::PermissionDenied { .. })),
        "{denied:?}"
    );

    let (stdout, _) = run_confirmed(&fx, "healthy", &["node", "shutdown"], "w-2", &[], 0).await;
    assert!(
        stdout.trim_end().ends_with("w-2 is off (not answering)"),
        "{stdout}"
    );
    assert_eq!(calls(&fx, "MachineService.Shutdown"), ["w-2"]);
    let status = fx.status("healthy").await;
    let w2 = status.node("w-2").expect("w-2");
    assert!(w2.error.is_some() && !w2.ready, "{w2:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reboot_whose_wait_can_never_end_is_refused_naming_the_disarm_fix() {
    // cp-3 of `alarm` raised NOSPACE: its member stays unhealthy, so a reboot could never see
    // it back. Refused by the guard before anything is asked or changed.
    let fx = start(builtin("alarm")).await;
    let plan = blocked_plan(&fx, "alarm", &["node", "reboot"], "cp-3").await;
    assert_fails(
        &plan,
        "wait_can_finish",
        &["NOSPACE", "disarm the NOSPACE alarm first"],
    );
    let (stdout, stderr) = run_confirmed(&fx, "alarm", &["node", "reboot"], "cp-3", &[], 1).await;
    assert!(
        fails_in_table(&stdout, "its wait can finish", "NOSPACE"),
        "{stdout}"
    );
    assert!(
        stderr.contains("refused: a guard blocks the reboot node cp-3 in alarm")
            && stderr.contains("its wait can finish"),
        "the refusal names the guard: {stderr}"
    );
    assert!(fx.sim.state().mutating_calls().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_single_control_plane_reboot_takes_the_ack_its_plan_asks_for() {
    let fx = start(builtin("single-cp")).await;
    let cmd = node_cmd(&fx, "single-cp", &["node", "reboot"], "cp-1", &["--plan"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}");
    let ack = stdout
        .split("needs --ack \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the plan names its acknowledgement")
        .to_string();
    let cmd = node_cmd(
        &fx,
        "single-cp",
        &["node", "reboot"],
        "cp-1",
        &["--plan", "--ack", &ack],
    );
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "the ack is taken: {stdout}\n{stderr}");
    assert!(
        stdout.contains("ready: run it with --yes --confirm"),
        "{stdout}"
    );
    let cmd = node_cmd(
        &fx,
        "single-cp",
        &["node", "reboot"],
        "cp-1",
        &["--plan", "--ack", "the API may be down"],
    );
    let (code, _, stderr) = output(cmd).await;
    assert_eq!(code, Some(2), "a mistyped ack is a usage error: {stderr}");
    assert!(
        stderr
            .contains("--ack \"the API may be down\" is not an acknowledgement this plan asks for")
            && stderr.contains(&ack),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_a_killed_run_left_is_reported_once_with_the_node_it_left_cordoned() {
    let fx = start(builtin("healthy")).await;
    // What a killed reboot of w-1 leaves in the state dir: its journal, no outcome, no holder
    // alive (the lock beside it is free).
    let journal = taloscope::journal::action::begin_action(
        &fx.state_dir(),
        "healthy",
        "reboot node w-1",
        Some("w-1"),
    )
    .expect("journal");
    let mut journal = journal;
    journal
        .update(|r| {
            r.left_cordoned = Some("w-1".into());
            r.step = "w-1: reboot requested".into();
        })
        .expect("written");
    drop(journal);
    let (_, stderr) = run_confirmed(&fx, "healthy", &["node", "cordon"], "w-2", &[], 0).await;
    assert!(
        stderr.contains("reboot node w-1 in healthy was interrupted")
            && stderr.contains("it left w-1 cordoned: uncordon it?"),
        "{stderr}"
    );
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).expect("audit");
    assert!(
        audit.contains("action=\"reboot node w-1\" outcome=\"interrupted\""),
        "{audit}"
    );
    let (_, stderr) = run_confirmed(&fx, "healthy", &["node", "uncordon"], "w-2", &[], 0).await;
    assert!(!stderr.contains("interrupted"), "told once: {stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_while_a_reboot_waits_cancels_it_saying_the_node_stays_cordoned() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    // Real time: cp-2 stays down for the sim's 20 s reboot, far longer than the cancel takes.
    let fx = start_scaled(builtin("healthy"), 1.0).await;
    let mut cmd = node_cmd(
        &fx,
        "healthy",
        &["node", "reboot"],
        "cp-2",
        &["--yes", "--confirm", "cp-2"],
    );
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    let pid = child.id().expect("running").to_string();
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let seen = tokio::time::timeout(LIMIT, async {
        let mut seen = Vec::new();
        let mut signalled = false;
        while let Some(line) = lines.next_line().await.expect("read") {
            if !signalled && line.ends_with("cp-2: reboot requested") {
                let kill = std::process::Command::new("kill")
                    .args(["-INT", &pid])
                    .status()
                    .expect("kill");
                assert!(kill.success());
                signalled = true;
            }
            seen.push(line);
        }
        seen
    })
    .await
    .expect("the run ends within LIMIT");
    let status = child.wait().await.expect("exit status");
    assert_eq!(status.code(), Some(1), "{seen:#?}");
    let last = seen.last().map(String::as_str).unwrap_or_default();
    assert!(
        last.starts_with("cancelled while waiting for the node to come back")
            && last.contains("cp-2 stays cordoned"),
        "{seen:#?}"
    );
    let journal: taloscope::journal::action::ActionRecord = taloscope::journal::ACTIONS
        .load(&taloscope::journal::ACTIONS.path_for(&fx.state_dir(), "healthy"))
        .expect("readable")
        .expect("kept");
    assert!(
        journal
            .outcome
            .as_deref()
            .is_some_and(|o| o.starts_with("cancelled"))
            && journal.left_cordoned.as_deref() == Some("cp-2"),
        "{journal:?}"
    );
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).expect("audit");
    assert!(
        audit.contains("action=\"reboot node cp-2\" outcome=\"cancelled while waiting"),
        "{audit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_boots_the_install_before_the_last_upgrade_and_a_node_never_upgraded_refuses() {
    let fx = start(builtin("healthy")).await;
    let (talos, w1) = (fx.talos("healthy"), address(&fx, "w-1").await);
    let tag = async || talos.version(&w1).await.expect("version").tag;
    assert_eq!(tag().await, "v1.11.3");
    // Nothing in the other boot entry: Talos refuses (grub/revert.go), after the drain.
    let (stdout, stderr) =
        run_confirmed(&fx, "healthy", &["node", "rollback"], "w-1", &[], 1).await;
    assert!(
        format!("{stdout}{stderr}").contains("label does not exist"),
        "{stdout}\n{stderr}"
    );
    assert!(calls(&fx, "MachineService.Rollback").is_empty());
    // The drain cordoned it; the console and `node uncordon` undo that.
    run_confirmed(&fx, "healthy", &["node", "uncordon"], "w-1", &[], 0).await;
    let upgrade = LegacyUpgrade {
        image: "ghcr.io/siderolabs/installer:v1.11.5".into(),
        ..Default::default()
    };
    talos.upgrade(&w1, &upgrade).await.expect("upgrade");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while talos.version(&w1).await.map(|v| v.tag).ok().as_deref() != Some("v1.11.5") {
        assert!(
            std::time::Instant::now() < deadline,
            "w-1 never came up upgraded"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let plan = node_cmd(&fx, "healthy", &["node", "rollback"], "w-1", &["--plan"]);
    let (code, stdout, _) = output(plan).await;
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.starts_with("ROLL BACK node w-1 in healthy"),
        "{stdout}"
    );
    let (stdout, _) = run_confirmed(&fx, "healthy", &["node", "rollback"], "w-1", &[], 0).await;
    assert_eq!(calls(&fx, "MachineService.Rollback"), ["w-1"]);
    assert!(
        stdout
            .trim_end()
            .ends_with("w-1: back on Talos v1.11.3 (was v1.11.5), running and ready"),
        "{stdout}"
    );
    assert_eq!(tag().await, "v1.11.3");
    let status = fx.status("healthy").await;
    let node = status.node("w-1").expect("w-1");
    assert!(node.ready && node.cordoned == Some(false), "{node:?}");
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).expect("audit");
    assert!(
        audit.contains("action=\"roll back node w-1\" outcome=\"succeeded\""),
        "{audit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_leave_takes_the_member_out_and_the_node_joins_again_when_it_reboots() {
    let fx = start(builtin("healthy")).await;
    let hostnames = |status: &taloscope::fleet::ClusterStatus| -> Vec<String> {
        let mut names: Vec<String> = (status.etcd.members.iter())
            .map(|m| m.hostname.clone())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        hostnames(&fx.status("healthy").await),
        ["cp-1", "cp-2", "cp-3"]
    );
    // A worker runs no member: there is nothing to leave.
    let plan = blocked_plan(&fx, "healthy", &["node", "etcd-leave"], "w-1").await;
    assert_fails(&plan, "wait_can_finish", &["w-1 runs no etcd member"]);
    let plan = node_cmd(&fx, "healthy", &["node", "etcd-leave"], "cp-3", &["--plan"]);
    let (code, stdout, _) = output(plan).await;
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.starts_with("ETCD LEAVE node cp-3 in healthy"),
        "{stdout}"
    );
    assert!(stdout.contains("2 of 2 members left healthy"), "{stdout}");
    let (stdout, _) = run_confirmed(&fx, "healthy", &["node", "etcd-leave"], "cp-3", &[], 0).await;
    assert_eq!(calls(&fx, "MachineService.EtcdLeaveCluster"), ["cp-3"]);
    assert!(
        stdout
            .trim_end()
            .ends_with("etcd stopped; cp-3 joins etcd again when it next boots"),
        "{stdout}"
    );
    let status = fx.status("healthy").await;
    assert_eq!(hostnames(&status), ["cp-1", "cp-2"]);
    let cp3 = address(&fx, "cp-3").await;
    let etcd = (fx
        .talos("healthy")
        .service_list(&cp3)
        .await
        .expect("services"))
    .into_iter()
    .find(|s| s.id == "etcd")
    .expect("etcd listed");
    assert_eq!(etcd.state, "Finished", "{etcd:?}");
    // cp-3 runs no member now: the menu and the command have nothing more to take out.
    let plan = blocked_plan(&fx, "healthy", &["node", "etcd-leave"], "cp-3").await;
    assert_fails(&plan, "wait_can_finish", &["cp-3 runs no etcd member"]);
    // A reboot starts etcd on its emptied data directory: cp-3 joins as a member again.
    run_confirmed(&fx, "healthy", &["node", "reboot"], "cp-3", &[], 0).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while hostnames(&fx.status("healthy").await).len() < 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "cp-3 never joined etcd again"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        hostnames(&fx.status("healthy").await),
        ["cp-1", "cp-2", "cp-3"]
    );
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).expect("audit");
    assert!(
        audit.contains("action=\"etcd leave node cp-3\" outcome=\"succeeded\""),
        "{audit}"
    );

    // On cp2-down only cp-3 answers besides cp-1: cp-1's going would leave one of two.
    let fx = start(builtin("cp2-down")).await;
    let plan = blocked_plan(&fx, "cp2-down", &["node", "etcd-leave"], "cp-1").await;
    assert_fails(&plan, "etcd_quorum", &["removing cp-1 loses quorum"]);
    assert!(fx.sim.state().mutating_calls().is_empty());
}
