//! `taloscope capi doctor` against the sim's stuck CAPI scenarios at a fast time scale: each
//! injected stuck state found with its explanation, its fix refused without the typed name or
//! in read-only mode, applied through the dispatcher (audited) and followed until it clears
//! (the rollout completes, the member is gone); the stopped single member's node rebooted
//! (confirmed by the node's name) until etcd leads again; the healthy scenario with none. Each
//! applied fix keeps the action journal a killed run is reported from on the next start.
mod upgrade_common;

use std::time::Duration;

use serde_json::Value;
use upgrade_common::*;

const MGMT: &str = "admin@capi-mgmt";
/// Going on though the workload's rollout Lease cannot be read.
const ACK: &str = "no one else is changing this cluster";
const WORK: &str = "capi-work";
/// `--fix` applied: confirmed, followed for at most 90 s, read every 100 ms.
const APPLY: [&str; 7] = [
    "--yes",
    "--confirm",
    WORK,
    "--wait",
    "90",
    "--poll-ms",
    "100",
];

/// `capi doctor --output json` of `context`: exit code and report.
async fn doctor(fx: &Fixture, context: &str) -> (Option<i32>, Value) {
    let mut cmd = fx.taloscope(context, "capi");
    cmd.args(["doctor", "--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    let report =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    (code, report)
}

/// The findings once `wanted` (a finding kind, or none) is what the doctor reports (bounded:
/// the controller may still be writing status at start).
async fn findings_until(fx: &Fixture, context: &str, wanted: Option<&str>) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let (code, report) = doctor(fx, context).await;
        let findings = report["findings"].as_array().cloned().unwrap_or_default();
        let kinds: Vec<&str> = findings.iter().filter_map(|f| f["kind"].as_str()).collect();
        let done = match wanted {
            Some(kind) => code == Some(1) && kinds == [kind],
            None => code == Some(0) && kinds.is_empty(),
        };
        if done {
            return findings;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "doctor of {context} never reported {wanted:?}: exit {code:?}, {report}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `capi doctor --fix ID` with `extra` flags: exit code, stdout, stderr.
async fn fix(
    fx: &Fixture,
    context: &str,
    id: &str,
    extra: &[&str],
) -> (Option<i32>, String, String) {
    let mut cmd = fx.taloscope(context, "capi");
    cmd.args(["doctor", "--fix", id]).args(extra);
    output(cmd).await
}

/// The action journal the last fix on the workload cluster kept.
fn action_journal(fx: &Fixture) -> taloscope::journal::action::ActionRecord {
    let actions = taloscope::journal::ACTIONS;
    actions
        .load(&actions.path_for(&fx.state_dir(), WORK))
        .expect("a readable journal")
        .expect("the fix kept a journal")
}

fn audit(fx: &Fixture) -> String {
    std::fs::read_to_string(fx.state_dir().join("audit.log")).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_capi_cluster_has_no_findings() {
    let fx = start(builtin("capi")).await;
    let findings = findings_until(&fx, WORK, None).await;
    assert!(findings.is_empty());
    let (code, report) = doctor(&fx, MGMT).await;
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["cluster"], WORK);
    assert_eq!(report["owner"], "admin@capi-mgmt/default/capi-work");
    let mut cmd = fx.taloscope(WORK, "capi");
    cmd.arg("doctor");
    let (code, table, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(table.contains("no stuck state found"), "{table}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_stuck_on_an_unhealthy_member_completes_once_its_machine_is_deleted() {
    let fx = start(builtin("capi-stuck-rollout")).await;
    let findings = findings_until(&fx, MGMT, Some("stuck-rollout")).await;
    let finding = &findings[0];
    let id = finding["id"].as_str().unwrap();
    let machine = finding["subject"].as_str().unwrap();
    assert!(
        finding["explanation"]
            .as_str()
            .unwrap()
            .contains("for etcd to become healthy before scaling down"),
        "{finding}"
    );
    assert_eq!(finding["fix"]["fix"], "delete-machine", "{finding}");

    let (code, plan, stderr) = fix(&fx, WORK, id, &["--plan", "--output", "json"]).await;
    assert_eq!(code, Some(0), "{plan}\n{stderr}");
    let plan: Value = serde_json::from_str(&plan).unwrap();
    assert_eq!(
        plan_guard(&plan, "stuck_machine")["verdict"],
        "pass",
        "{plan}"
    );
    assert_eq!(
        plan_guard(&plan, "etcd_quorum")["verdict"],
        "pass",
        "{plan}"
    );

    // Refused without the name typed in full, and in read-only mode; nothing deleted.
    let (code, _, stderr) = fix(&fx, WORK, id, &["--yes", "--confirm", "capi"]).await;
    assert_eq!(code, Some(2), "{stderr}");
    let (code, _, stderr) = fix(&fx, WORK, id, &["--yes", "--confirm", WORK, "--readonly"]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("read-only"), "{stderr}");
    let capi = fx.sim.capi().expect("capi scenario");
    assert!(capi.get("machines", machine).is_some(), "not deleted yet");

    let (code, stdout, stderr) = fix(&fx, WORK, id, &APPLY).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!("Machine default/{machine} deleted")),
        "{stdout}"
    );
    assert!(stdout.contains("cleared"), "{stdout}");
    assert!(capi.get("machines", machine).is_none());
    // The rollout completed: three control planes, all at the new version.
    let versions: Vec<String> = capi
        .list("machines")
        .iter()
        .filter(|m| {
            m["metadata"]["labels"]
                .get("cluster.x-k8s.io/control-plane")
                .is_some()
        })
        .map(|m| {
            m["spec"]["version"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(versions.len(), 3, "{versions:?}");
    let tcp = &capi.list("taloscontrolplanes")[0];
    assert!(
        versions.iter().all(|v| v == &tcp["spec"]["version"]),
        "{versions:?}"
    );
    findings_until(&fx, WORK, None).await;
    let journal = action_journal(&fx);
    assert!(
        journal
            .action
            .contains(&format!("Machine default/{machine}"))
            && journal
                .step
                .contains(&format!("Machine default/{machine} deleted"))
            && journal.outcome.as_deref() == Some("finished"),
        "{journal:?}"
    );
    let audit = audit(&fx);
    assert!(
        audit.contains(&format!("delete stuck Machine default/{machine}"))
            && audit.contains("outcome=\"succeeded\"")
            && audit.contains("refused: read-only"),
        "{audit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orphaned_member_is_removed_and_etcd_is_healthy_again() {
    let fx = start(builtin("capi-orphaned-member")).await;
    let findings = findings_until(&fx, WORK, Some("orphaned-member")).await;
    let finding = &findings[0];
    let id = finding["id"].as_str().unwrap();
    let member = finding["fix"]["memberId"].as_str().unwrap().to_string();
    assert!(
        finding["summary"]
            .as_str()
            .unwrap()
            .contains("4 members for 3"),
        "{finding}"
    );
    let (code, plan, stderr) = fix(&fx, WORK, id, &["--plan", "--output", "json"]).await;
    assert_eq!(code, Some(0), "{plan}\n{stderr}");
    let plan: Value = serde_json::from_str(&plan).unwrap();
    assert_eq!(plan["plan"]["kind"], "etcd", "{plan}");
    assert_eq!(
        plan_guard(&plan, "member_without_node")["verdict"],
        "pass",
        "{plan}"
    );

    let (code, stdout, stderr) = fix(&fx, WORK, id, &APPLY).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("removed; 3 member(s) left"), "{stdout}");
    let status = fx.status(WORK).await;
    assert_eq!(status.etcd.members.len(), 3);
    assert!(
        status
            .etcd
            .members
            .iter()
            .all(|m| m.id != member && m.healthy)
    );
    findings_until(&fx, MGMT, None).await;
    assert!(audit(&fx).contains("remove etcd member"), "{}", audit(&fx));
}

/// The stopped single member's finding, its id and the node its fix reboots.
async fn stopped_member(fx: &Fixture) -> (String, String) {
    let findings = findings_until(fx, WORK, Some("etcd-stopped")).await;
    let finding = &findings[0];
    assert_eq!(finding["fix"]["fix"], "reboot-node", "{finding}");
    let explanation = finding["explanation"].as_str().unwrap();
    assert!(
        explanation.contains("starts etcd at every boot") && explanation.contains("--recover-from"),
        "{finding}"
    );
    (
        finding["id"].as_str().unwrap().to_string(),
        finding["fix"]["node"].as_str().unwrap().to_string(),
    )
}

/// The sim's node: its boot count and whether its etcd service is stopped.
fn node_state(fx: &Fixture, node: &str) -> (u64, bool) {
    let state = fx.sim.state();
    let status = state
        .cluster(WORK)
        .and_then(|c| c.node(node))
        .expect("workload node")
        .status();
    (status.boot, status.etcd_stopped)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_single_member_is_rebooted_and_etcd_leads_again() {
    let fx = start(builtin("capi-etcd-stopped")).await;
    let (id, node) = stopped_member(&fx).await;
    // The workload's own Kubernetes API is down with its etcd: the status says so, with no
    // node data from it, and the rollout Lease unread.
    let status = fx.status(WORK).await;
    let kube = status.kubernetes.as_ref().expect("a kube context");
    assert!(
        kube.error.is_some() && kube.components.is_empty(),
        "{kube:?}"
    );
    assert!(
        status.nodes.iter().all(|n| n.k8s_ready.is_none()),
        "{status:?}"
    );
    let unread = status.rollout_unread.as_deref().unwrap_or_default();
    assert!(unread.contains("Timeout"), "{status:?}");

    let before = node_state(&fx, &node);
    let (code, plan, stderr) = fix(&fx, WORK, &id, &["--plan", "--output", "json"]).await;
    assert_eq!(
        code,
        Some(1),
        "blocked until acknowledged: {plan}\n{stderr}"
    );
    let plan: Value = serde_json::from_str(&plan).unwrap();
    assert_eq!(plan["plan"]["kind"], "reboot-node", "{plan}");
    for guard in ["node_action_role", "etcd_stopped"] {
        assert_eq!(plan_guard(&plan, guard)["verdict"], "pass", "{plan}");
    }
    // The Lease cannot be read with the API down: said, not passed over.
    let lease = plan_guard(&plan, "no_other_rollout");
    assert_eq!(lease["verdict"], "warn", "{plan}");
    assert_eq!(lease["needs_ack"], ACK, "{plan}");
    assert!(
        lease["reason"].as_str().unwrap().contains("cannot be read"),
        "{lease}"
    );

    let apply = [
        "--yes",
        "--confirm",
        &node,
        "--wait",
        "90",
        "--poll-ms",
        "100",
    ];
    let (code, stdout, stderr) = fix(&fx, WORK, &id, &apply).await;
    assert_eq!(
        code,
        Some(1),
        "not without the acknowledgement: {stdout}\n{stderr}"
    );
    assert!(stdout.contains(ACK), "the table names it: {stdout}");
    assert_eq!(node_state(&fx, &node), before, "not rebooted");
    let (code, stdout, stderr) = fix(&fx, WORK, &id, &[&apply[..], &["--ack", ACK]].concat()).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("back, running and ready"), "{stdout}");
    assert!(stdout.contains("cleared"), "{stdout}");
    let (boot, stopped) = node_state(&fx, &node);
    assert!(boot >= 2 && !stopped, "rebooted, etcd running");
    findings_until(&fx, WORK, None).await;
    let status = fx.status(WORK).await;
    assert_eq!(status.etcd.members.len(), 1, "{:?}", status.etcd);
    assert!(status.etcd.members[0].healthy, "{:?}", status.etcd);
    assert_eq!(
        status.etcd.leader().map(|m| m.hostname.as_str()),
        Some(node.as_str())
    );
    // The reboot kept the node action's journal: it ended, so nothing is reported interrupted.
    let journal = action_journal(&fx);
    assert!(
        journal.action == format!("reboot node {node}")
            && journal.step.ends_with("back, running and ready")
            && journal.outcome.as_deref() == Some("finished"),
        "{journal:?}"
    );
    let audit = audit(&fx);
    assert!(
        audit.contains(&format!("reboot node {node}")) && audit.contains("outcome=\"succeeded\""),
        "{audit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rebooting_the_stopped_member_is_refused_unconfirmed_or_read_only_and_changes_nothing() {
    let fx = start(builtin("capi-etcd-stopped")).await;
    let (id, node) = stopped_member(&fx).await;
    let before = node_state(&fx, &node);
    assert!(before.1, "etcd stopped");
    // The cluster's name is not the node's: a reboot is confirmed by the node it reboots.
    let (code, _, stderr) = fix(&fx, WORK, &id, &["--yes", "--confirm", WORK]).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("node name"), "{stderr}");
    let (code, _, stderr) = fix(&fx, WORK, &id, &["--yes", "--confirm", &node, "--readonly"]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("read-only"), "{stderr}");
    assert_eq!(
        node_state(&fx, &node),
        before,
        "not rebooted, etcd still stopped"
    );
    findings_until(&fx, WORK, Some("etcd-stopped")).await;
    let audit = audit(&fx);
    assert!(
        audit.contains("refused: read-only") && !audit.contains("succeeded"),
        "{audit}"
    );
}

/// The control-plane Machines' versions once there are three of them, none deleting.
fn control_plane_versions(fx: &Fixture) -> Vec<String> {
    fx.sim
        .capi()
        .expect("capi scenario")
        .list("machines")
        .iter()
        .filter(|m| {
            m["metadata"]["labels"]
                .get("cluster.x-k8s.io/control-plane")
                .is_some()
        })
        .map(|m| {
            m["spec"]["version"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_machine_whose_member_left_is_deleted_and_replaced() {
    let fx = start(builtin("capi-etcd-leaving")).await;
    let findings = findings_until(&fx, WORK, Some("etcd-left")).await;
    let finding = &findings[0];
    let id = finding["id"].as_str().unwrap();
    let machine = finding["subject"].as_str().unwrap();
    assert!(
        finding["summary"]
            .as_str()
            .unwrap()
            .contains("2 members for 3 control-plane Machines"),
        "{finding}"
    );
    assert_eq!(finding["fix"]["fix"], "delete-machine", "{finding}");
    let (code, plan, stderr) = fix(&fx, WORK, id, &["--plan", "--output", "json"]).await;
    assert_eq!(code, Some(0), "{plan}\n{stderr}");
    let plan: Value = serde_json::from_str(&plan).unwrap();
    assert_eq!(
        plan_guard(&plan, "stuck_machine")["verdict"],
        "pass",
        "{plan}"
    );

    let (code, stdout, stderr) = fix(&fx, WORK, id, &APPLY).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("cleared"), "{stdout}");
    let capi = fx.sim.capi().expect("capi scenario");
    assert!(capi.get("machines", machine).is_none());
    assert_eq!(control_plane_versions(&fx).len(), 3);
    findings_until(&fx, WORK, None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_surge_machine_without_a_node_is_deleted_and_the_rollout_completes() {
    let fx = start(builtin("capi-no-node-ref")).await;
    let findings = findings_until(&fx, WORK, Some("no-node-ref")).await;
    let finding = &findings[0];
    let id = finding["id"].as_str().unwrap();
    let machine = finding["subject"].as_str().unwrap();
    let tcp = &fx.sim.capi().expect("capi").list("taloscontrolplanes")[0];
    let said = tcp["status"]["conditions"].to_string();
    assert!(
        said.contains("no addresses were found for node")
            || said.contains("expected to have 4 members, got 3"),
        "the provider's own words: {said}"
    );

    let (code, stdout, stderr) = fix(&fx, WORK, id, &APPLY).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("cleared"), "{stdout}");
    let capi = fx.sim.capi().expect("capi scenario");
    assert!(capi.get("machines", machine).is_none());
    let versions = control_plane_versions(&fx);
    assert_eq!(versions.len(), 3, "{versions:?}");
    assert!(versions.iter().all(|v| v == "v1.34.2"), "{versions:?}");
    findings_until(&fx, WORK, None).await;
}

/// Nodes named by FQDN (`capi-fqdn`: each Machine's nodeRef and `Hostname` address is
/// `<hostname>.example.internal`, as kubelets on AWS register them) while Talos, and so every
/// etcd member, keeps the short hostname. The provider's `auditEtcd` cuts the Node name at the
/// first `.` (CACPPT controllers/etcd.go), and so does the doctor: no live member is orphaned,
/// and the provider removed none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fqdn_node_names_leave_no_live_member_orphaned() {
    let fx = start(builtin("capi-fqdn")).await;
    let machines = settled_machines(&fx).await;
    let control_planes: Vec<&Value> = machines
        .iter()
        .filter(|m| {
            m["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.contains("-cp-"))
        })
        .collect();
    assert_eq!(control_planes.len(), 3, "{machines:?}");
    for m in &control_planes {
        let name = m["metadata"]["name"].as_str().unwrap();
        let fqdn = format!("{name}.example.internal");
        assert_eq!(m["status"]["nodeRef"]["name"], fqdn.as_str(), "{m}");
        let addresses = m["status"]["addresses"].as_array().expect("addresses");
        assert!(
            addresses
                .iter()
                .any(|a| a["type"] == "Hostname" && a["address"] == fqdn.as_str()),
            "{m}"
        );
    }
    let findings = findings_until(&fx, WORK, None).await;
    assert!(findings.is_empty());
    let status = fx.status(WORK).await;
    let mut members: Vec<String> = status
        .etcd
        .members
        .iter()
        .map(|m| m.hostname.clone())
        .collect();
    members.sort();
    let mut short: Vec<String> = control_planes
        .iter()
        .map(|m| m["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    short.sort();
    assert_eq!(
        members, short,
        "every member stays, named by its short hostname"
    );
}

/// `capi-drain-blocked`: a worker Machine deleted while a PodDisruptionBudget allows none of
/// the workload's pods to go stays deleting, its drain refused at every retry (cluster-api
/// machine_controller.go `reconcileDelete`). The doctor names it, with the refusal and the
/// ways out and no automated fix; once the budget allows, the Machine goes and nothing is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_machine_stuck_deleting_on_a_refused_drain_is_found() {
    let fx = start(builtin("capi-drain-blocked")).await;
    let findings = findings_until(&fx, WORK, Some("drain-blocked")).await;
    let finding = &findings[0];
    let machine = finding["subject"].as_str().expect("subject").to_string();
    assert!(machine.contains("-md-0-"), "a worker: {finding}");
    assert!(finding["fix"].is_null(), "{finding}");
    let explanation = finding["explanation"].as_str().unwrap_or_default();
    assert!(
        explanation.contains("disruption budget") && explanation.contains("exclude-node-draining"),
        "{explanation}"
    );
    let capi = fx.sim.capi().expect("capi scenario");
    let stuck = capi.get("machines", &machine).expect("still there");
    assert!(
        stuck["metadata"]["deletionTimestamp"].is_string(),
        "{stuck}"
    );
    fx.sim
        .kube_api(1)
        .expect("the workload's API")
        .set_disruption_budget(None);
    findings_until(&fx, WORK, None).await;
    assert!(capi.get("machines", &machine).is_none(), "the Machine went");
}
