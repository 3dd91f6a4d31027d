//! `taloscope scale` against the sim's `capi` scenarios: workers scaled to three end Ready in
//! the workload cluster; control planes 3 -> 5 -> 3 keep etcd healthy (the command checks it
//! on every poll, and the test watches the sim's etcd on its own); --plan changes nothing; and
//! the refusals (no confirmation, read-only, an even count without its ack, no quorum).
mod upgrade_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;
use upgrade_common::*;

const WORK: &str = "capi-work";
/// Slower than the upgrade tests: the CAPI controller's VMs boot and join on the sim clock.
const SCALE: f64 = 50.0;

/// Run it, confirmed.
const CONFIRMED: [&str; 3] = ["--yes", "--confirm", WORK];
/// Only plan, as JSON.
const PLAN_JSON: [&str; 3] = ["--plan", "--output", "json"];

/// `taloscope --context capi-work scale --role ROLE --replicas N EXTRA`, polling fast, bounded.
fn scale(fx: &Fixture, (role, replicas): (&str, &str), extra: &[&str]) -> tokio::process::Command {
    let mut cmd = fx.taloscope(WORK, "scale");
    cmd.args(["--role", role, "--replicas", replicas])
        .args(extra)
        .args(["--poll-ms", "50", "--timeout", "80"]);
    cmd
}

fn capi_object(fx: &Fixture, plural: &str, name: &str) -> Value {
    fx.sim
        .capi()
        .expect("capi scenario")
        .get(plural, name)
        .unwrap_or_else(|| panic!("{plural}/{name}"))
}

fn replicas(fx: &Fixture, plural: &str, name: &str) -> (u64, u64) {
    let o = capi_object(fx, plural, name);
    (
        o["spec"]["replicas"].as_u64().unwrap_or(0),
        o["status"]["readyReplicas"].as_u64().unwrap_or(0),
    )
}

/// Waits (bounded) until the control plane and the workers are all ready.
async fn settled(fx: &Fixture) {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let (cp, cp_ready) = replicas(fx, "taloscontrolplanes", "capi-work-cp");
        let (md, md_ready) = replicas(fx, "machinedeployments", "capi-work-md-0");
        if cp > 0 && cp == cp_ready && md == md_ready {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "capi scenario settles: cp {cp_ready}/{cp}, md {md_ready}/{md}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The JSON lines of a run: (event, data).
fn events(stdout: &str) -> Vec<(String, Value)> {
    stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            (
                v["event"].as_str().unwrap_or_default().to_string(),
                v["data"].clone(),
            )
        })
        .collect()
}

/// Watches the sim's etcd of the workload cluster until dropped: any moment without a
/// healthy majority is recorded.
struct EtcdWatch {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<Vec<String>>,
}

impl EtcdWatch {
    fn start(fx: &Fixture) -> EtcdWatch {
        let state = fx.sim.state();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let task = tokio::spawn(async move {
            let mut broken = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                let cluster = state.cluster(WORK).expect("workload cluster");
                let etcd = cluster.etcd();
                let healthy = etcd
                    .members
                    .iter()
                    .filter(|&&m| cluster.member_healthy(m))
                    .count();
                if healthy <= etcd.members.len() / 2 {
                    broken.push(format!(
                        "{healthy} of {} members healthy",
                        etcd.members.len()
                    ));
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            broken
        });
        EtcdWatch { stop, task }
    }

    async fn violations(self) -> Vec<String> {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.expect("watch task")
    }
}

/// Runs a confirmed control-plane scale to `to` and checks what it reported.
async fn scale_control_planes(fx: &Fixture, to: u32) {
    let to_text = to.to_string();
    let cmd = scale(
        fx,
        ("controlplane", &to_text),
        &[&CONFIRMED[..], &["--output", "json"]].concat(),
    );
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let events = events(&stdout);
    let etcd: Vec<&Value> = events
        .iter()
        .filter(|(e, d)| e == "progress" && d["kind"] == "etcd")
        .map(|(_, d)| d)
        .collect();
    assert!(!etcd.is_empty(), "etcd checked on the polls: {stdout}");
    for check in &etcd {
        assert_eq!(check["healthy"], true, "{check}");
    }
    let (_, finished) = events.last().expect("a finished line");
    assert_eq!(finished["succeeded"], true, "{finished}");
    assert_eq!(
        finished["polls"], finished["etcdHealthyPolls"],
        "etcd healthy on every poll: {finished}"
    );
    assert_eq!(finished["polls"].as_u64(), Some(etcd.len() as u64));
    let machines: Vec<&Value> = events
        .iter()
        .filter(|(e, d)| e == "progress" && d["kind"] == "machine")
        .map(|(_, d)| d)
        .collect();
    assert!(!machines.is_empty(), "Machine changes told: {stdout}");
    assert_eq!(
        replicas(fx, "taloscontrolplanes", "capi-work-cp"),
        (to as u64, to as u64)
    );
    let state = fx.sim.state();
    let members = state.cluster(WORK).expect("work").etcd().members.len();
    assert_eq!(members, to as usize, "etcd members after the scale");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_scaled_to_three_end_ready_in_the_workload_cluster() {
    let fx = start_scaled(builtin("capi"), SCALE).await;
    settled(&fx).await;
    let cmd = scale(&fx, ("worker", "3"), &CONFIRMED);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("spec.replicas 2 -> 3"), "{stdout}");
    assert!(stdout.contains(": created ("), "{stdout}");
    assert!(stdout.contains(" Ready"), "{stdout}");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        without_time(last)
            .starts_with("scale of MachineDeployment default/capi-work-md-0 2 -> 3 done"),
        "{last}"
    );

    let (spec, ready) = replicas(&fx, "machinedeployments", "capi-work-md-0");
    assert_eq!((spec, ready), (3, 3));
    let workers = fx.workers(WORK).await;
    assert_eq!(workers.len(), 3, "{workers:#?}");
    assert!(workers.iter().all(|n| n.ready), "{workers:#?}");
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).expect("audit log");
    assert!(
        audit.contains("outcome=\"confirmed\"") && audit.contains("outcome=\"succeeded\""),
        "{audit}"
    );
    // The run kept the cluster's action journal (a killed one is reported on the next start).
    let actions = taloscope::journal::ACTIONS;
    let journal: taloscope::journal::action::ActionRecord = actions
        .load(&actions.path_for(&fx.state_dir(), WORK))
        .expect("a readable journal")
        .expect("the scale kept a journal");
    assert!(
        journal
            .action
            .contains("MachineDeployment default/capi-work-md-0")
            && !journal.step.is_empty()
            && journal.outcome.as_deref() == Some("finished"),
        "{journal:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_planes_go_three_five_three_with_etcd_healthy_throughout() {
    let fx = start_scaled(builtin("capi"), SCALE).await;
    settled(&fx).await;
    let watch = EtcdWatch::start(&fx);
    scale_control_planes(&fx, 5).await;
    scale_control_planes(&fx, 3).await;
    let broken = watch.violations().await;
    assert!(broken.is_empty(), "etcd lost its majority: {broken:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_changes_nothing_and_refusals_change_nothing() {
    let fx = start_scaled(builtin("capi"), SCALE).await;
    settled(&fx).await;
    let before = capi_object(&fx, "taloscontrolplanes", "capi-work-cp")["spec"].clone();

    let (code, stdout, stderr) = output(scale(&fx, ("controlplane", "5"), &PLAN_JSON)).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let plan: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(plan["kind"], "TalosControlPlane");
    assert_eq!(
        (plan["from"].as_u64(), plan["to"].as_u64()),
        (Some(3), Some(5))
    );
    assert_eq!(plan["create"], 2);
    assert_eq!(plan["owner"]["management"], "admin@capi-mgmt");
    for id in [
        "no_other_rollout",
        "scale_settled",
        "scale_bounds",
        "etcd_healthy",
        "scale_quorum",
        "scale_odd_control_planes",
    ] {
        assert_eq!(plan_guard(&plan, id)["verdict"], "pass", "{id}: {stdout}");
    }

    let (code, table, _) = output(scale(&fx, ("worker", "1"), &["--plan"])).await;
    assert_eq!(code, Some(0), "{table}");
    assert!(table.contains("replicas:  2 -> 1"), "{table}");
    assert!(table.contains("GUARDS"), "{table}");

    // Neither --plan nor --yes: nothing done, said so.
    let (code, _, stderr) = output(scale(&fx, ("controlplane", "5"), &[])).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("nothing done"), "{stderr}");
    // --yes without --confirm, or with another name.
    let (code, _, stderr) = output(scale(&fx, ("controlplane", "5"), &["--yes"])).await;
    assert_eq!(code, Some(2), "{stderr}");
    let (code, _, stderr) = output(scale(
        &fx,
        ("controlplane", "5"),
        &["--yes", "--confirm", "capi-mgmt"],
    ))
    .await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--confirm must be the cluster name"),
        "{stderr}"
    );
    // Read-only.
    let mut cmd = scale(&fx, ("controlplane", "5"), &CONFIRMED);
    cmd.arg("--readonly");
    let (code, _, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("read-only"), "{stderr}");
    // An even count without its acknowledgement.
    let (code, stdout, stderr) = output(scale(&fx, ("controlplane", "4"), &CONFIRMED)).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("an even etcd member count"), "{stdout}");

    assert_eq!(
        capi_object(&fx, "taloscontrolplanes", "capi-work-cp")["spec"],
        before,
        "nothing changed"
    );
    let audit = std::fs::read_to_string(fx.state_dir().join("audit.log")).expect("audit log");
    assert!(audit.contains("refused: read-only"), "{audit}");
    assert!(!audit.contains("succeeded"), "{audit}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_plane_scale_without_etcd_quorum_is_refused() {
    let fx = start_scaled(builtin("capi-etcd-stopped"), SCALE).await;
    // The fault in place: the workload's API down with its etcd (the Lease unread).
    let deadline = tokio::time::Instant::now() + LIMIT;
    while fx.status(WORK).await.rollout_unread.is_none() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the API never went down"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (code, stdout, stderr) = output(scale(&fx, ("controlplane", "3"), &PLAN_JSON)).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    let plan: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(
        plan_guard(&plan, "scale_quorum")["verdict"],
        "fail",
        "{stdout}"
    );
    assert_eq!(
        plan_guard(&plan, "etcd_healthy")["verdict"],
        "fail",
        "{stdout}"
    );
    // The workload's API is down with its etcd: its rollout Lease cannot be read, which is
    // not taken for a free one.
    let lease = plan_guard(&plan, "no_other_rollout");
    assert_eq!(lease["verdict"], "fail", "{stdout}");
    assert!(
        lease["reason"].as_str().unwrap().contains("cannot be read"),
        "{lease}"
    );
    assert_eq!(plan["blocked"], true);

    let (code, stdout, stderr) = output(scale(&fx, ("controlplane", "3"), &CONFIRMED)).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("a guard blocks the scale"), "{stderr}");
    assert_eq!(
        capi_object(&fx, "taloscontrolplanes", "capi-work-cp")["spec"]["replicas"],
        1,
        "nothing changed"
    );
}
