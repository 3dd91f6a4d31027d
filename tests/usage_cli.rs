//! The command line's usage errors and their messages, as a process against the sim: an
//! unknown `--to` exits 2 naming the versions that can be targeted, a mistyped `--ack` is told
//! apart from a missing one, and `upgrade --plan` offers the running minor's newest patch
//! first.
mod upgrade_common;

use upgrade_common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_target_is_a_usage_error_naming_the_targets() {
    let fx = start(builtin("healthy")).await;
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(["--to", "v9.9.9", "--plan"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(2), "a usage error: {stdout}\n{stderr}");
    assert!(
        stderr.contains("--to v9.9.9: not a Talos release healthy can be upgraded to")
            && stderr.contains("it can target v1.11.6")
            && stderr.contains("v1.12."),
        "names the targets: {stderr}"
    );

    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(["--to", "v9.9.9", "--yes", "--confirm", "healthy"]);
    cmd.args(["--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(2), "{stdout}\n{stderr}");
    let stopped: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(stopped["data"]["exit_code"], 2, "{stopped}");
    assert!(fx.sim.state().mutating_calls().is_empty());

    // A listed release off the version path is the guard's to refuse (exit 1), with the plan.
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(["--to", "v1.13.0", "--plan"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("skips a minor"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mistyped_ack_names_what_was_given_and_what_is_asked() {
    let fx = start(builtin("healthy")).await;
    // An unlisted patch on the path asks for its acknowledgement.
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(["--to", "v1.12.99", "--plan"]);
    let (missing_code, missing, missing_err) = output(cmd).await;
    assert_eq!(missing_code, Some(1), "{missing}\n{missing_err}");
    assert!(
        missing.contains("needs --ack \"an unlisted Talos release\""),
        "{missing}"
    );

    for extra in [&["--plan"][..], &["--yes", "--confirm", "healthy"]] {
        let mut cmd = fx.taloscope("healthy", "upgrade");
        cmd.args(["--to", "v1.12.99", "--ack", "unlisted release"])
            .args(extra);
        let (code, stdout, stderr) = output(cmd).await;
        assert_eq!(code, Some(2), "{extra:?}: {stdout}\n{stderr}");
        assert!(
            stderr.contains(
                "--ack \"unlisted release\" is not an acknowledgement this plan asks for"
            ) && stderr.contains("\"an unlisted Talos release\""),
            "{extra:?}: names both: {stderr}"
        );
        assert_ne!(stderr, missing_err);
    }
    assert!(fx.sim.state().mutating_calls().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_offered_targets_default_to_the_running_minors_newest_patch() {
    let fx = start(builtin("healthy")).await;
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(["--plan", "--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let targets: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(targets["default"], "v1.11.6", "{targets}");
    assert!(
        targets["offered"]
            .as_array()
            .is_some_and(|o| o.iter().any(|t| t["version"] == "v1.12.11")),
        "the next minor is offered too: {targets}"
    );

    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.arg("--plan");
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}");
    let marked: Vec<&str> = stdout.lines().filter(|l| l.contains("(default)")).collect();
    assert_eq!(marked.len(), 1, "{stdout}");
    assert!(marked[0].trim_start().starts_with("v1.11.6"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_target_of_a_cluster_cluster_api_owns_is_the_same_usage_error() {
    let fx = start(builtin("capi")).await;
    let mut cmd = fx.taloscope("capi-work", "upgrade");
    cmd.args(["--to", "v9.9.9", "--plan"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("--to v9.9.9: not a Talos release") && stderr.contains("it can target"),
        "{stderr}"
    );
}
