//! `taloscope upgrade-k8s` as a process against the sim: --plan --output json passes every guard
//! on a Talos 1.12 cluster; a skipped minor and a target Talos does not run are refused;
//! `removed-api` shows its counts and is refused until --ack; on `healthy` the OS upgrade first,
//! then the Kubernetes upgrade, and `taloscope status --output json` agrees; a killed run is
//! resumed by the same command, and so is one a SIGINT stopped after the step under way.
mod upgrade_common;

use taloscope::rollout::StepPhase;
use upgrade_common::*;

const ACK: &str = "objects in removed API versions become unreadable";

use upgrade_common::plan_guard as guard;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_json_passes_on_talos_112_and_refuses_what_it_must() {
    let fx = start(builtin("healthy-112")).await;
    let mut cmd = fx.taloscope("healthy-112", "upgrade-k8s");
    cmd.args(["--to", "1.35.0", "--plan", "--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let plan: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(plan["cluster"], "healthy-112");
    assert_eq!(plan["from"], "v1.34.1");
    assert_eq!(plan["target"], "v1.35.0");
    assert_eq!(plan["blocked"], false);
    let guards = plan["guards"].as_array().expect("guards");
    assert_eq!(guards.len(), 11);
    for g in guards {
        assert_eq!(g["verdict"], "pass", "{g}");
    }
    let steps = plan["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 17);
    assert_eq!(steps[0]["component"], "kube-apiserver");
    assert_eq!(steps[0]["node"], "cp-1");
    assert_eq!(steps[16]["component"], "kubelet");
    assert_eq!(
        plan["pre_pull"], true,
        "pre-pull is on by default, as in talosctl"
    );

    for (flags, pre_pull) in [
        (&["--no-pre-pull"][..], false),
        (&["--pre-pull"][..], true),
        (&["--pre-pull", "--no-pre-pull"][..], false),
    ] {
        let mut cmd = fx.taloscope("healthy-112", "upgrade-k8s");
        cmd.args(["--to", "1.35.0", "--plan", "--output", "json"]);
        cmd.args(flags);
        let (code, stdout, stderr) = output(cmd).await;
        assert_eq!(code, Some(0), "{flags:?}: {stderr}");
        let plan: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        assert_eq!(plan["pre_pull"], pre_pull, "{flags:?}");
    }

    let mut cmd = fx.taloscope("healthy-112", "upgrade-k8s");
    cmd.args(["--to", "1.36.0", "--plan", "--output", "json"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}");
    let plan: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let path = guard(&plan, "kubernetes_path");
    assert_eq!(path["verdict"], "fail");
    assert!(
        path["reason"]
            .as_str()
            .is_some_and(|r| r.contains("skips a minor")),
        "{path}"
    );
    let mut cmd = fx.taloscope("healthy-112", "upgrade-k8s");
    cmd.args(["--to", "1.36.0", "--yes", "--confirm", "healthy-112"]);
    let (code, _, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("refused"), "{stderr}");
    assert!(
        fx.sim.state().mutating_calls().is_empty(),
        "no node was called"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removed_api_shows_counts_and_needs_the_ack() {
    let fx = start(builtin("removed-api")).await;
    let mut cmd = fx.taloscope("removed-api", "upgrade-k8s");
    cmd.args(["--to", "1.32.0", "--plan"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("REMOVED APIS"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("2")
                && l.contains("flowschemas.v1beta3.flowcontrol.apiserver.k8s.io")),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("FAIL") && l.contains("removed APIs") && l.contains(ACK)),
        "{stdout}"
    );
    let mut cmd = fx.taloscope("removed-api", "upgrade-k8s");
    cmd.args(["--to", "1.32.0", "--yes", "--confirm", "removed-api"]);
    let (code, _, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        fx.sim.state().mutating_calls().is_empty(),
        "no node was called"
    );

    let mut cmd = fx.taloscope("removed-api", "upgrade-k8s");
    cmd.args(["--to", "1.32.0", "--plan", "--output", "json", "--ack", ACK]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}");
    let plan: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(guard(&plan, "removed_apis")["verdict"], "warn");
    let counts = plan["removed_apis"].as_array().expect("counts");
    assert!(counts.iter().any(|c| c["count"] == 2), "{plan}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_healthy_os_first_then_kubernetes_and_status_agrees() {
    let fx = start(builtin("healthy")).await;
    let mut cmd = fx.taloscope("healthy", "upgrade-k8s");
    cmd.args(["--to", "1.35.0", "--plan"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "Talos v1.11.3 does not run 1.35: {stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("FAIL") && l.contains("Talos supports target")),
        "{stdout}"
    );
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(confirmed("v1.12.0", "healthy"));
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");

    let mut cmd = fx.taloscope("healthy", "upgrade-k8s");
    cmd.args(confirmed("1.35.0", "healthy"));
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    // The pre-pull first, a step per node and image (3 static pods and the kubelet on each
    // of 3 control planes, the kubelet on 2 workers), then the 17 components' steps.
    assert!(
        stdout.contains("[1/31] cp-1 pre-pull registry.k8s.io/kube-apiserver:v1.35.0: done"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[15/31] cp-1 kube-apiserver v1.35.0: done"),
        "{stdout}"
    );
    assert!(
        stdout.contains("upgrade of healthy to 1.35.0 completed"),
        "{stdout}"
    );

    let status = status_json(&fx, "healthy").await;
    let cluster = status["clusters"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == "healthy"))
        .unwrap_or_else(|| panic!("healthy in {status}"));
    let kube = &cluster["kubernetes"];
    assert_eq!(kube["server_version"], "v1.35.0", "{kube}");
    assert_eq!(kube["kube_proxy_version"], "v1.35.0", "{kube}");
    let components = kube["components"].as_array().expect("components");
    assert_eq!(components.len(), 9);
    for c in components {
        assert_eq!(c["version"], "v1.35.0", "{c}");
        assert_eq!(c["ready"], true, "{c}");
    }
    let nodes = cluster["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 5);
    for n in nodes {
        assert_eq!(n["kubelet_version"], "v1.35.0", "{n}");
        assert_eq!(n["talos_version"], "v1.12.0", "{n}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_run_is_resumed_by_the_same_command() {
    let fx = start(builtin("healthy-112")).await;
    let args = confirmed("1.35.0", "healthy-112");
    let mut cmd = fx.taloscope("healthy-112", "upgrade-k8s");
    cmd.args(args);
    let (mut child, seen) = run_until_line(cmd, "[19/31]").await;
    assert!(
        seen.iter()
            .any(|l| without_time(l).starts_with("[18/31]") && l.ends_with(": done")),
        "{seen:?}"
    );
    child.kill().await.expect("kill");

    let mut cmd = fx.taloscope("healthy-112", "upgrade-k8s");
    cmd.args(args);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("resuming the Kubernetes upgrade of healthy-112"),
        "{stderr}"
    );
    assert!(
        !stdout.contains("[1/31]") && !stdout.contains("[15/31]"),
        "finished steps are not run again: {stdout}"
    );
    let state = fx.sim.state();
    let cluster = state.cluster("healthy-112").expect("cluster");
    for n in cluster.nodes() {
        let k = n.status().kubernetes;
        assert_eq!(k.kubelet.version, "v1.35.0", "{}", n.name());
        assert!(
            k.static_pods
                .iter()
                .all(|p| p.version == "v1.35.0" && p.ready)
        );
    }
}

/// SIGINT as the first step begins: the run stops after the step under way (a batch's steps
/// all end), says what it leaves and exits 1; its journal stays unfinished with nothing begun
/// past the steps done, and the same command resumes it to the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_stops_after_the_step_under_way_and_the_same_command_resumes() {
    let fx = start(builtin("healthy-112")).await;
    let args = confirmed("1.35.0", "healthy-112");
    let mut cmd = fx.taloscope("healthy-112", "upgrade-k8s");
    cmd.args(args);
    let mut run = Watched::spawn(cmd);
    run.until_step("[1/31]").await;
    run.interrupt();
    let code = run.end().await;
    let (seen, said) = (&run.seen, &run.said);
    assert_eq!(code, Some(1), "{seen:#?}\n{said:#?}");
    assert!(
        said.iter()
            .any(|l| l.contains("cancelling after the step under way")),
        "{said:#?}"
    );
    let last = without_time(seen.last().expect("a line"));
    assert!(
        last.starts_with("cancelled after the step under way: ")
            && last.contains(" of 31 steps done")
            && last.contains("would be next")
            && last.contains("run the same command again to resume"),
        "{seen:#?}"
    );
    let journal =
        taloscope::rollout::RolloutJournal::load_unfinished(&fx.state_dir(), "healthy-112")
            .expect("readable")
            .expect("unfinished");
    let done = journal
        .steps
        .iter()
        .take_while(|s| s.phase == StepPhase::Done)
        .count();
    assert!(
        (1..31).contains(&done)
            && journal.steps[done..]
                .iter()
                .all(|s| s.phase == StepPhase::Pending),
        "the steps done, then nothing begun: {journal:?}"
    );

    let mut cmd = fx.taloscope("healthy-112", "upgrade-k8s");
    cmd.args(args);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("resuming the Kubernetes upgrade of healthy-112"),
        "{stderr}"
    );
    let state = fx.sim.state();
    let cluster = state.cluster("healthy-112").expect("cluster");
    for n in cluster.nodes() {
        assert_eq!(
            n.status().kubernetes.kubelet.version,
            "v1.35.0",
            "{}",
            n.name()
        );
    }
}
