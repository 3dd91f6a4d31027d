//! `taloscope status` after the Cluster API doctor's delete-Machine fix on the sim's
//! `capi-stuck-rollout`: the deleted Machine's node is no longer an etcd member, a Kubernetes
//! node or a Machine, but the talosconfig still names its address. Status lists that address
//! as not a member (not DOWN) and exits 0.
mod pty_support;
mod upgrade_common;

use std::time::Duration;

use serde_json::Value;
use upgrade_common::*;

const MGMT: &str = "admin@capi-mgmt";
const WORK: &str = "capi-work";

/// The doctor's findings on `context` once it reports `kind` (bounded: the controller may
/// still be writing status at start).
async fn finding(fx: &Fixture, kind: &str) -> Value {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let mut cmd = fx.taloscope(MGMT, "capi");
        cmd.args(["doctor", "--output", "json"]);
        let (_, stdout, stderr) = output(cmd).await;
        let report: Value =
            serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
        let found = (report["findings"].as_array().into_iter().flatten())
            .find(|f| f["kind"] == kind)
            .cloned();
        if let Some(found) = found {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the doctor never reported {kind}: {report}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `status --output json` of the workload cluster until `done` holds (bounded): exit code and
/// report.
async fn status_until(
    fx: &Fixture,
    done: impl Fn(Option<i32>, &Value) -> bool,
) -> (Option<i32>, Value) {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let mut cmd = fx.taloscope(WORK, "status");
        cmd.args(["--output", "json"]);
        let (code, stdout, stderr) = output(cmd).await;
        let report: Value =
            serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
        if done(code, &report) {
            return (code, report);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "status never settled: exit {code:?}, {report}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_exits_0_and_lists_a_deleted_machines_address_as_not_a_member() {
    let fx = start(builtin("capi-stuck-rollout")).await;
    let stuck = finding(&fx, "stuck-rollout").await;
    let id = stuck["id"].as_str().expect("finding id");
    let machine = stuck["subject"].as_str().expect("the stuck Machine");
    let talosconfig =
        std::fs::read_to_string(fx.sim.talosconfig_path()).expect("the sim's talosconfig");

    let mut cmd = fx.taloscope(WORK, "capi");
    cmd.args(["doctor", "--fix", id, "--yes", "--confirm", WORK])
        .args(["--wait", "90", "--poll-ms", "100"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let capi = fx.sim.capi().expect("capi scenario");
    assert!(capi.get("machines", machine).is_none(), "{machine} deleted");

    // Settled: every node the talosconfig names either answers or is not a member.
    let (code, report) = status_until(&fx, |_, r| {
        let nodes = r["clusters"][0]["nodes"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        nodes.iter().any(|n| n["not_a_member"] == true)
            && nodes
                .iter()
                .all(|n| n["error"].is_null() || n["not_a_member"] == true)
    })
    .await;
    assert_eq!(code, Some(0), "{report}");
    let nodes = report["clusters"][0]["nodes"].as_array().expect("nodes");
    let gone: Vec<&str> = nodes
        .iter()
        .filter(|n| n["not_a_member"] == true)
        .filter_map(|n| n["address"].as_str())
        .collect();
    for address in &gone {
        assert!(
            talosconfig.contains(address),
            "{address} is one the talosconfig names:\n{talosconfig}"
        );
        assert!(
            report["clusters"][0]["etcd"]["members"]
                .as_array()
                .into_iter()
                .flatten()
                .all(|m| m["hostname"] != *address),
            "{report}"
        );
    }

    // The table says it in words, and exits 0 too.
    let cmd = fx.taloscope(WORK, "status");
    let (code, table, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{table}\n{stderr}");
    for address in &gone {
        let row = table
            .lines()
            .find(|l| l.contains(&format!(" {address} ")))
            .unwrap_or_else(|| panic!("{address}'s row:\n{table}"));
        assert!(row.contains("not a member"), "{table}");
        assert!(!row.contains("DOWN"), "{table}");
    }
}

/// The doctor's delete-Machine fix on `capi-stuck-rollout`, then `status` until a node is not a
/// member: that node's status.
async fn after_the_fix(fx: &Fixture) -> Value {
    let stuck = finding(fx, "stuck-rollout").await;
    let id = stuck["id"].as_str().expect("finding id");
    let mut cmd = fx.taloscope(WORK, "capi");
    cmd.args(["doctor", "--fix", id, "--yes", "--confirm", WORK])
        .args(["--wait", "90", "--poll-ms", "100"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let (_, report) = status_until(fx, |_, r| {
        (r["clusters"][0]["nodes"].as_array().into_iter().flatten())
            .any(|n| n["not_a_member"] == true)
    })
    .await;
    (report["clusters"][0]["nodes"]
        .as_array()
        .into_iter()
        .flatten())
    .find(|n| n["not_a_member"] == true)
    .cloned()
    .expect("a node not a member")
}

/// The lines of talosconfig context `name` (its key's line excluded).
fn context_lines<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let key = format!("  \"{name}\":");
    text.lines()
        .skip_while(|l| *l != key)
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .collect()
}

/// The backups of `file` beside it.
fn backups_of(file: &std::path::Path) -> Vec<std::path::PathBuf> {
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let lead = format!("{name}.taloscope-backup-");
    std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&lead))
        .map(|e| e.path())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_forget_removes_a_not_a_member_address_from_the_talosconfig_with_a_backup() {
    let fx = start(builtin("capi-stuck-rollout")).await;
    let gone = after_the_fix(&fx).await["address"]
        .as_str()
        .expect("its address")
        .to_string();
    let file = fx.sim.talosconfig_path();
    let before = std::fs::read_to_string(&file).unwrap();
    assert!(backups_of(&file).is_empty(), "no backup yet");

    // The plan names the node, the file and the backup, and every guard passes.
    let mut cmd = fx.taloscope(WORK, "node");
    cmd.args(["forget", "--node", &gone, "--plan"]);
    let (code, plan, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{plan}\n{stderr}");
    assert!(plan.contains("FORGET node"), "{plan}");
    assert!(plan.contains(&gone), "{plan}");
    let backup_named = format!("{}.taloscope-backup-", file.display());
    assert!(plan.contains(&backup_named), "{plan}");
    assert!(plan.contains("role: none needed"), "{plan}");
    assert!(plan.contains(&format!("--confirm {gone}")), "{plan}");
    let mut cmd = fx.taloscope(WORK, "node");
    cmd.args(["forget", "--node", &gone, "--plan", "--output", "json"]);
    let (code, json, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{json}\n{stderr}");
    let json: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert_eq!(json["address"], gone.as_str(), "{json}");
    assert_eq!(json["blocked"], false, "{json}");
    assert_eq!(
        plan_guard(&json, "not_a_member")["verdict"],
        "pass",
        "{json}"
    );

    // Run: the address leaves the talosconfig, the backup holds the file as it was.
    let mut cmd = fx.taloscope(WORK, "node");
    cmd.args(["forget", "--node", &gone, "--yes", "--confirm", &gone]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("backed up"), "{stdout}");
    let after = std::fs::read_to_string(&file).unwrap();
    let work = context_lines(&after, WORK);
    assert!(work.iter().any(|l| l.contains("nodes:")), "{after}");
    for quoted in [format!("\"{gone}\""), format!("\"{gone}:")] {
        assert!(
            work.iter().all(|l| !l.contains(&quoted)),
            "{quoted} left in {WORK}: {work:?}"
        );
    }
    let backups = backups_of(&file);
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert!(
        stdout.contains(&backups[0].display().to_string()),
        "{stdout}"
    );
    assert_eq!(std::fs::read_to_string(&backups[0]).unwrap(), before);
    // Only the lists that named the address changed.
    let changed: Vec<(&str, &str)> = (before.lines().zip(after.lines()))
        .filter(|(b, a)| b != a)
        .collect();
    assert_eq!(before.lines().count(), after.lines().count(), "{after}");
    assert!(
        !changed.is_empty()
            && changed.iter().all(|(b, _)| b.contains(&gone)
                && (b.trim_start().starts_with("nodes:")
                    || b.trim_start().starts_with("endpoints:"))),
        "{changed:?}"
    );

    // status exits 0 and no longer has it from the talosconfig: only Talos discovery, which
    // keeps a member until its TTL, may still list it, as not a member.
    let mut cmd = fx.taloscope(WORK, "status");
    cmd.args(["--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let listed = (report["clusters"][0]["nodes"]
        .as_array()
        .into_iter()
        .flatten())
    .find(|n| n["address"] == gone.as_str());
    if let Some(node) = listed {
        assert_eq!(node["source"], "discovery", "{report}");
        assert_eq!(node["not_a_member"], true, "{report}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_forget_refuses_a_node_that_answers() {
    let fx = start(builtin("capi-stuck-rollout")).await;
    let (_, report) = status_until(&fx, |_, r| {
        (r["clusters"][0]["nodes"].as_array().into_iter().flatten()).any(|n| n["error"].is_null())
    })
    .await;
    let answering = (report["clusters"][0]["nodes"]
        .as_array()
        .into_iter()
        .flatten())
    .find(|n| n["error"].is_null())
    .and_then(|n| n["address"].as_str())
    .expect("a node that answers")
    .to_string();
    let file = fx.sim.talosconfig_path();
    let before = std::fs::read_to_string(&file).unwrap();

    let mut cmd = fx.taloscope(WORK, "node");
    cmd.args(["forget", "--node", &answering, "--plan", "--output", "json"]);
    let (code, json, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{json}\n{stderr}");
    let json: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let guard = plan_guard(&json, "not_a_member");
    assert_eq!(guard["blocks"], true, "{json}");
    assert!(
        guard["reason"]
            .as_str()
            .unwrap()
            .contains("answers the Talos API"),
        "{json}"
    );

    let mut cmd = fx.taloscope(WORK, "node");
    cmd.args([
        "forget",
        "--node",
        &answering,
        "--yes",
        "--confirm",
        &answering,
    ]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("refused") && stderr.contains("not a member"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        before,
        "nothing written"
    );
    assert!(
        backups_of(&file).is_empty(),
        "no backup of a refused forget"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_offers_a_not_a_member_node_only_its_forget_and_runs_it() {
    const BOUND: Duration = Duration::from_secs(90);
    let fx = start(builtin("capi-stuck-rollout")).await;
    let gone = after_the_fix(&fx).await;
    let name = gone["name"].as_str().expect("its name").to_string();
    let address = gone["address"].as_str().expect("its address").to_string();
    let file = fx.sim.talosconfig_path();
    let home = tempfile::tempdir().expect("temp home");
    let env = pty_support::env_on(&file, &fx.sim.kubeconfig_path());
    let mut s = pty_support::PtySession::start(24, 80, home.path(), &[], &env);
    s.wait_for("the fleet", BOUND, |t| {
        t.contains(WORK) && t.contains("Enter open")
    });
    s.send(format!(":ctx {WORK}\r").as_bytes());
    s.wait_for("the workload's nodes, one not a member", BOUND, |t| {
        t.contains("not a member")
    });
    // The selected row's full name is on the pane's bottom border.
    let selected = |t: &str| {
        t.lines().any(|l| {
            l.starts_with('+') && !l.contains("Nodes (") && l.contains(&format!(" {name} "))
        })
    };
    s.retry_until(
        "the node that is not a member selected",
        b"j",
        BOUND,
        selected,
    );
    s.send(b"a");
    s.wait_for("its only action, the forget", BOUND, |t| {
        t.contains("1 forget ") && t.contains("Enter shows the plan")
    });
    let menu = s.text();
    for other in ["reboot", "shutdown", "cordon", "drain"] {
        assert!(!menu.contains(other), "{menu}");
    }
    s.send(b"\r");
    s.wait_for("the forget's plan with passing guards", BOUND, |t| {
        t.contains("backup first") && t.contains("guards pass: s starts")
    });
    let plan = s.text();
    assert!(plan.contains("Role: none needed"), "{plan}");
    s.send(b"s");
    s.wait_for("the confirmation by the node's address", BOUND, |t| {
        t.contains("Type the node name in full")
    });
    s.send(format!("{address}\r").as_bytes());
    // The header's "done" and the progress log's line are drawn in one frame,
    // but a read can land mid-frame: wait for both.
    s.wait_for("the forget done, its backup logged", BOUND, |t| {
        t.contains(": done") && t.contains("backed up")
    });
    s.send(b"q");
    let (status, _raw) = s.quit_answering(BOUND);
    assert!(status.success(), "exit status {status:?}");
    let after = std::fs::read_to_string(&file).unwrap();
    let work = context_lines(&after, WORK);
    assert!(
        work.iter().all(|l| !l.contains(&format!("\"{address}\""))),
        "{work:?}"
    );
    assert_eq!(backups_of(&file).len(), 1);
}
