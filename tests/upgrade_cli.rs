//! `taloscope upgrade` as a process against the sim: --plan --output json on `healthy` shows
//! every guard passing; a skipped minor and `cp2-down` are refused; read-only refuses; --yes
//! --confirm upgrades every node one at a time; a killed run is resumed by the same command, also
//! one its journal says was paused; a SIGINT stops the run after the node step under way, its
//! journal left for the same command to resume; a second run while the first lives is refused
//! naming it, and resumes once the first is killed; a corrupt rollout journal stops the upgrade, naming the
//! file, and nothing else.
mod upgrade_common;

use taloscope::rollout::StepPhase;
use upgrade_common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_json_on_healthy_passes_every_guard_and_a_skipped_minor_is_refused() {
    let fx = start(builtin("healthy")).await;
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(["--to", "v1.12.0", "--plan", "--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let plan: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(plan["cluster"], "healthy");
    assert_eq!(plan["target"], "v1.12.0");
    assert_eq!(plan["blocked"], false);
    let guards = plan["guards"].as_array().expect("guards");
    assert_eq!(guards.len(), 13);
    for g in guards {
        assert_eq!(g["verdict"], "pass", "{g}");
    }
    assert_eq!(plan["steps"].as_array().map(Vec::len), Some(5));

    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(["--to", "v1.13.0", "--plan", "--output", "json"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}");
    let plan: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let path = plan["guards"]
        .as_array()
        .and_then(|gs| gs.iter().find(|g| g["id"] == "version_path"))
        .expect("version path guard");
    assert_eq!(path["verdict"], "fail");
    let reason = path["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("skips a minor") && reason.contains("1.12"),
        "names the skipped minor: {reason}"
    );
    assert!(fx.sim.state().mutating_calls().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cp2_down_and_read_only_are_refused_without_any_call() {
    let fx = start(builtin("cp2-down")).await;
    let mut cmd = fx.taloscope("cp2-down", "upgrade");
    cmd.args(["--to", "v1.12.0", "--plan"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("FAIL") && l.contains("etcd healthy")),
        "{stdout}"
    );
    let mut cmd = fx.taloscope("cp2-down", "upgrade");
    cmd.args(["--to", "v1.12.0", "--yes", "--confirm", "cp2-down"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("refused"), "{stderr}");

    let mut cmd = fx.taloscope("cp2-down", "upgrade");
    cmd.arg("--readonly")
        .args(["--to", "v1.12.0", "--yes", "--confirm", "cp2-down"]);
    let (code, _, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("read-only"), "{stderr}");
    assert!(
        fx.sim.state().mutating_calls().is_empty(),
        "no node was called"
    );
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).expect("audit log");
    assert!(audit.contains("refused: read-only"), "{audit}");
    assert!(audit.contains("failed: refused by its guards"), "{audit}");
}

/// The same `upgrade --yes` again on `healthy`: it resumes the journal and completes.
async fn resume_to_the_end(fx: &Fixture) {
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(confirmed("v1.12.0", "healthy"));
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("resuming the upgrade of healthy"),
        "{stderr}"
    );
    assert!(
        stdout.contains("upgrade of healthy to v1.12.0 completed"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yes_confirm_upgrades_every_node_and_a_killed_run_is_resumed() {
    let fx = start(builtin("healthy")).await;
    // The wrong name is a usage error and changes nothing.
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(["--to", "v1.12.0", "--yes", "--confirm", "prod"]);
    let (code, _, stderr) = output(cmd).await;
    assert_eq!(code, Some(2), "{stderr}");

    let args = confirmed("v1.12.0", "healthy");
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(args);
    let (mut child, seen) = run_until_line(cmd, "[2/5]").await;
    assert!(
        seen.iter()
            .any(|l| without_time(l).starts_with("[1/5]") && l.ends_with(": done")),
        "{seen:?}"
    );
    child.kill().await.expect("kill");

    resume_to_the_end(&fx).await;
    let state = fx.sim.state();
    for (node, version) in versions(&fx, "healthy") {
        assert_eq!(version, "v1.12.0", "{node}");
        assert_eq!(state.upgrade_calls("healthy", &node), 1, "{node}");
    }
    assert_control_planes_one_at_a_time(&fx, "healthy");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_shows_another_consoles_rollout_from_its_lease() {
    let fx = start(builtin("healthy")).await;
    let _theirs = fx.lease_held_by_bob("healthy").await;
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(["--to", "v1.12.0", "--plan"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.lines().any(|l| l.contains("FAIL")
            && l.contains("no other rollout")
            && l.contains("bob@jump2")),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_run_is_refused_naming_the_first_and_resumes_once_it_is_killed() {
    let fx = start(builtin("healthy")).await;
    let plan = fx.plan("healthy", "v1.12.0").await;
    let held = plan.steps[1].node.clone();
    let state = fx.sim.state();
    let cluster = state.cluster("healthy").expect("cluster");
    // The second node stays down after its reboot: the first run waits there until killed.
    cluster.set_never_returns(&held, true).expect("node");
    let args = confirmed("v1.12.0", "healthy");
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(args);
    let (mut first, _) = run_until_line(cmd, "[2/5]").await;
    let pid = first.id().expect("the first run's pid");

    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(args);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("refused: the upgrade of healthy to v1.12.0 is running in ")
            && stderr.contains(&format!("/{pid}-"))
            && stderr.contains(&format!("(pid {pid} on "))
            && stderr.contains("running since "),
        "names the first run: {stdout}\n{stderr}"
    );
    assert!(!stderr.contains("resuming"), "{stderr}");
    let lease = fx.kube("healthy").await.read_rollout_lease().await;
    let holder = lease
        .expect("lease readable")
        .expect("a lease")
        .holder
        .clone();
    assert!(
        holder.contains(&format!("/{pid}-")),
        "still the first run's: {holder}"
    );

    first.kill().await.expect("SIGKILL");
    cluster.set_never_returns(&held, false).expect("node");
    resume_to_the_end(&fx).await;
    for (node, version) in versions(&fx, "healthy") {
        assert_eq!(version, "v1.12.0", "{node}");
    }
    assert_control_planes_one_at_a_time(&fx, "healthy");
}

/// The rollout journal of the fixture's cluster `cluster`.
fn journal_path(fx: &Fixture, cluster: &str) -> std::path::PathBuf {
    taloscope::journal::ROLLOUTS.path_for(&fx.state_dir(), cluster)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_saved_while_paused_is_resumed_by_yes_confirm_and_runs_to_the_end() {
    let fx = start(builtin("healthy")).await;
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(confirmed("v1.12.0", "healthy"));
    let (mut child, _) = run_until_line(cmd, "[2/5]").await;
    child.kill().await.expect("kill");
    // The journal as a console leaves it when it quits while its rollout is paused.
    let path = journal_path(&fx, "healthy");
    let text = std::fs::read_to_string(&path).expect("the killed run's journal");
    let mut journal: serde_json::Value = serde_json::from_str(&text).expect("journal json");
    assert_eq!(journal["outcome"], serde_json::Value::Null, "{journal}");
    journal["paused"] = true.into();
    std::fs::write(&path, journal.to_string()).expect("journal written");

    // Bounded: a run that stayed held would fail here, not hang.
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(confirmed("v1.12.0", "healthy"));
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("resuming the upgrade of healthy")
            && stderr.contains("the upgrade of healthy was left paused; it resumes"),
        "{stderr}"
    );
    assert!(
        stdout.contains("upgrade of healthy to v1.12.0 completed"),
        "{stdout}"
    );
    for (node, version) in versions(&fx, "healthy") {
        assert_eq!(version, "v1.12.0", "{node}");
    }
    let text = std::fs::read_to_string(&path).expect("the journal");
    let journal: serde_json::Value = serde_json::from_str(&text).expect("journal json");
    assert_eq!(journal["paused"], false, "no longer paused: {journal}");
    assert_control_planes_one_at_a_time(&fx, "healthy");
}

/// SIGINT while the second node's step waits for the node: the step still ends (its wait
/// included), the run stops before the third, says what it leaves and exits 1 as a cancelled
/// gated run does; its journal stays unfinished, and the same command resumes it to the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_stops_after_the_node_step_under_way_and_the_same_command_resumes() {
    let fx = start(builtin("healthy")).await;
    let plan = fx.plan("healthy", "v1.12.0").await;
    let nodes: Vec<String> = plan.steps.iter().map(|s| s.node.clone()).collect();
    let state = fx.sim.state();
    let cluster = state.cluster("healthy").expect("cluster");
    // The second node stays down after its reboot: its step is under way when the signal comes.
    cluster.set_never_returns(&nodes[1], true).expect("node");
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(confirmed("v1.12.0", "healthy"));
    let mut run = Watched::spawn(cmd);
    run.until_step("[2/5]").await;
    run.interrupt();
    run.until_said("cancelling after the step under way").await;
    let said = &run.said;
    assert!(
        said.iter()
            .any(|l| l.contains("signal again to stop at once")),
        "{said:#?}"
    );
    // The step under way goes on to its end once its node is back.
    cluster.set_never_returns(&nodes[1], false).expect("node");
    let code = run.end().await;
    let (seen, said) = (&run.seen, &run.said);
    assert_eq!(code, Some(1), "{seen:#?}\n{said:#?}");
    let last = without_time(seen.last().expect("a line"));
    assert!(
        last.starts_with("cancelled after the step under way: 2 of 5 nodes done")
            && last.contains(&format!("({}, {})", nodes[0], nodes[1]))
            && last.contains(&format!("node 3 of 5 ({}) would be next", nodes[2]))
            && last.contains("run the same command again to resume"),
        "{seen:#?}"
    );
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).expect("audit log");
    assert!(
        audit.contains(
            "outcome=\"cancelled: stopped after the step under way, its journal kept to resume\""
        ),
        "{audit}"
    );
    let journal = taloscope::rollout::RolloutJournal::load_unfinished(&fx.state_dir(), "healthy")
        .expect("readable")
        .expect("unfinished");
    let phases: Vec<StepPhase> = journal.steps.iter().map(|s| s.phase).collect();
    assert_eq!(
        phases,
        [
            StepPhase::Done,
            StepPhase::Done,
            StepPhase::Pending,
            StepPhase::Pending,
            StepPhase::Pending
        ],
        "{journal:?}"
    );
    for (i, node) in nodes.iter().enumerate() {
        let calls = state.upgrade_calls("healthy", node);
        assert_eq!(
            calls,
            usize::from(i < 2),
            "{node}: nothing past the step under way"
        );
    }

    resume_to_the_end(&fx).await;
    for (node, version) in versions(&fx, "healthy") {
        assert_eq!(version, "v1.12.0", "{node}");
        assert_eq!(state.upgrade_calls("healthy", &node), 1, "{node}");
    }
    assert_control_planes_one_at_a_time(&fx, "healthy");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_rollout_journal_stops_the_upgrade_naming_it_and_nothing_else() {
    let fx = start(builtin("healthy")).await;
    let path = journal_path(&fx, "healthy");
    std::fs::create_dir_all(path.parent().expect("its folder")).expect("folder");
    std::fs::write(&path, "{ not a journal").expect("journal written");
    let file = path.display().to_string();

    // A node action's plan and the offered targets do not read the rollout journal.
    let mut cmd = fx.taloscope("healthy", "node");
    cmd.args(["reboot", "--node", "cp-2", "--plan"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(!stderr.contains(&file), "{stderr}");
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.arg("--plan");
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("TARGETS for healthy"), "{stdout}");

    // The upgrades do, and refuse naming it, planned or run.
    for args in [
        vec!["--to", "v1.12.0", "--plan"],
        confirmed("v1.12.0", "healthy").to_vec(),
    ] {
        let mut cmd = fx.taloscope("healthy", "upgrade");
        cmd.args(&args);
        let (code, stdout, stderr) = output(cmd).await;
        assert_eq!(code, Some(2), "{args:?}: {stdout}\n{stderr}");
        assert!(
            stderr.contains(&format!("{file} is corrupt")),
            "{args:?}: {stderr}"
        );
    }
    assert!(fx.sim.state().mutating_calls().is_empty());
}

/// Every line of `stdout` is a JSON document; returns them.
fn json_lines(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_json_is_json_for_a_run_for_nothing_to_do_and_for_refusals() {
    let fx = start(builtin("healthy")).await;
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(confirmed("v1.12.0", "healthy"))
        .args(["--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let events = json_lines(&stdout);
    assert!(events.iter().any(|e| e["event"] == "step"), "{stdout}");
    let last = events.last().expect("a finished line");
    assert_eq!(last["event"], "finished", "{stdout}");
    assert_eq!(last["data"]["outcome"]["outcome"], "completed", "{stdout}");

    // Now there is nothing to do, planned or run.
    for args in [
        vec!["--to", "v1.12.0", "--plan", "--output", "json"],
        vec![
            "--to",
            "v1.12.0",
            "--yes",
            "--confirm",
            "healthy",
            "--output",
            "json",
        ],
    ] {
        let mut cmd = fx.taloscope("healthy", "upgrade");
        cmd.args(&args);
        let (code, stdout, stderr) = output(cmd).await;
        assert_eq!(code, Some(0), "{args:?}: {stdout}\n{stderr}");
        let lines = json_lines(&stdout);
        assert_eq!(lines.len(), 1, "{args:?}: {stdout}");
        assert_eq!(lines[0]["event"], "stopped");
        assert_eq!(lines[0]["data"]["exit_code"], 0);
        let message = lines[0]["data"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("healthy"), "{message}");
    }

    // Refusals and usage errors, of every command that takes --output.
    let refusals: [(&str, &str, Vec<&str>, i32); 5] = [
        (
            "healthy",
            "upgrade",
            vec![
                "--readonly",
                "--to",
                "v1.12.1",
                "--yes",
                "--confirm",
                "healthy",
            ],
            1,
        ),
        ("nowhere", "upgrade", vec!["--to", "v1.12.1", "--plan"], 2),
        (
            "nowhere",
            "upgrade-k8s",
            vec!["--to", "1.35.0", "--plan"],
            2,
        ),
        ("nowhere", "status", vec![], 2),
        (
            "nowhere",
            "provision",
            vec!["--role", "worker", "--plan"],
            2,
        ),
    ];
    for (context, subcommand, args, want) in refusals {
        let mut cmd = fx.taloscope(context, subcommand);
        cmd.args(&args).args(["--output", "json"]);
        let (code, stdout, stderr) = output(cmd).await;
        assert_eq!(
            code,
            Some(want),
            "{subcommand} {args:?}: {stdout}\n{stderr}"
        );
        let lines = json_lines(&stdout);
        let stopped = lines
            .last()
            .unwrap_or_else(|| panic!("{subcommand}: no JSON"));
        assert_eq!(stopped["event"], "stopped", "{subcommand}: {stdout}");
        assert_eq!(stopped["data"]["exit_code"], want);
        let message = stopped["data"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(context) || message.contains("read-only"),
            "{subcommand}: names the context: {message}"
        );
    }
}
