//! `taloscope status` after the Cluster API doctor's delete-Machine fix on the sim's
//! `capi-stuck-rollout`: the deleted Machine's node is no longer an etcd member, a Kubernetes
//! node or a Machine, but the talosconfig still names its address. Status lists that address
//! as not a member (not DOWN) and exits 0.
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
