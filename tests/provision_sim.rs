//! `taloscope provision` as operators run it, against the sim's OpenNebula and
//! OneFlow endpoints and its Talos and Kubernetes APIs: two workers until
//! Ready (and `status` agrees), a VM stuck in BOOT_FAILURE then terminated,
//! a console killed mid-provision whose journal still lists its VMs,
//! read-only refusal, wrong password, missing template, wrong machine config.
mod talos_common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use talos_common::{Sim, scenario, start, start_at, within};
use taloscope::provision::{ProvisionJournal, ProvisionStage};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn state_dir(sim: &Sim) -> PathBuf {
    let dir = sim.dir.path().join("taloscope-state");
    std::fs::create_dir_all(&dir).expect("state dir");
    dir
}

fn config_file(sim: &Sim) -> PathBuf {
    sim.fleet
        .opennebula()
        .expect("the sim runs OpenNebula")
        .config_file()
}

fn command(sim: &Sim, config: &Path, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_taloscope"));
    cmd.args(args)
        .arg("--config")
        .arg(config)
        .env("HOME", sim.dir.path())
        .env("TALOSCOPE_STATE_DIR", state_dir(sim))
        .env("TALOSCONFIG", sim.fleet.talosconfig_path())
        .env("KUBECONFIG", sim.fleet.kubeconfig_path())
        .env_remove("TALOSCOPE_CONFIG")
        .env_remove("ONE_AUTH")
        .env_remove("ONE_XMLRPC")
        .env_remove("ONEFLOW_URL")
        .kill_on_drop(true);
    cmd
}

async fn run(sim: &Sim, config: &Path, args: &[&str]) -> Run {
    let out: Output = within(120, "taloscope", command(sim, config, args).output())
        .await
        .expect("taloscope runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `provision --context healthy --role worker`, then `more`.
fn provision_worker<'a>(more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["provision", "--context", "healthy", "--role", "worker"];
    args.extend_from_slice(more);
    args
}

/// The sim's taloscope.yaml with one text replaced, written beside it.
fn edited_config(sim: &Sim, name: &str, from: &str, to: &str) -> PathBuf {
    let text = std::fs::read_to_string(config_file(sim)).expect("sim config");
    assert!(text.contains(from), "{from} in the sim's config:\n{text}");
    let path = sim.dir.path().join(name);
    std::fs::write(&path, text.replace(from, to)).expect("write config");
    path
}

fn audit(sim: &Sim) -> String {
    std::fs::read_to_string(state_dir(sim).join("audit.log")).unwrap_or_default()
}

#[tokio::test]
async fn two_workers_join_and_status_shows_seven_nodes() {
    let sim = start(scenario("healthy")).await;
    let config = config_file(&sim);
    let plan = run(
        &sim,
        &config,
        &provision_worker(&["--count", "2", "--plan", "-o", "json"]),
    )
    .await;
    assert_eq!(plan.code, 0, "{}{}", plan.stdout, plan.stderr);
    let plan: serde_json::Value = serde_json::from_str(&plan.stdout).expect("plan JSON");
    assert_eq!(plan["source"]["name"], "talos-healthy-worker");
    assert_eq!(plan["vm_names"].as_array().map(Vec::len), Some(2));

    let r = run(
        &sim,
        &config,
        &provision_worker(&["--count", "2", "--yes", "--confirm", "healthy"]),
    )
    .await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("healthy: 2 of 2 new node(s) joined"),
        "{}",
        r.stdout
    );
    let joined: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.contains(": joined (ACTIVE/RUNNING)"))
        .collect();
    assert_eq!(joined.len(), 2, "{}", r.stdout);
    let audit = audit(&sim);
    assert!(
        audit.contains("outcome=\"confirmed\"") && audit.contains("outcome=\"succeeded\""),
        "{audit}"
    );

    let status = run(
        &sim,
        &config,
        &["status", "--context", "healthy", "-o", "json"],
    )
    .await;
    assert_eq!(status.code, 0, "{}{}", status.stdout, status.stderr);
    let status: serde_json::Value = serde_json::from_str(&status.stdout).expect("status JSON");
    let nodes = status["clusters"][0]["nodes"]
        .as_array()
        .expect("nodes")
        .clone();
    assert_eq!(nodes.len(), 7, "{nodes:?}");
    for name in ["healthy-worker-1", "healthy-worker-2"] {
        let node = nodes
            .iter()
            .find(|n| n["name"] == name)
            .unwrap_or_else(|| panic!("{name} in status"));
        assert_eq!(node["role"], "worker");
        assert_eq!(node["ready"], true, "{node}");
        assert_eq!(node["k8s_ready"], true, "{node}");
    }

    let journal = ProvisionJournal::open(&state_dir(&sim), "healthy").expect("journal");
    let stages: Vec<_> = journal
        .entries()
        .iter()
        .map(|e| (e.progress.name.as_str(), e.progress.stage))
        .collect();
    assert_eq!(
        stages,
        [
            ("healthy-worker-1", ProvisionStage::Joined),
            ("healthy-worker-2", ProvisionStage::Joined)
        ]
    );
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn boot_failure_stops_the_vm_then_terminate_ends_it() {
    let sim = start(scenario("healthy")).await;
    let config = edited_config(
        &sim,
        "bootfail.yaml",
        "\"talos-healthy-worker\"",
        "\"talos-healthy-bootfail\"",
    );
    let r = run(
        &sim,
        &config,
        &provision_worker(&["--yes", "--confirm", "healthy", "--timeout", "60"]),
    )
    .await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let failed = r
        .stdout
        .lines()
        .find(|l| l.contains(": failed (ACTIVE/BOOT_FAILURE)"))
        .unwrap_or_else(|| panic!("a BOOT_FAILURE line in:\n{}", r.stdout));
    assert!(failed.contains("--terminate"), "{failed}");
    assert!(
        r.stdout.contains("0 of 1 new node(s) joined"),
        "{}",
        r.stdout
    );
    assert!(
        audit(&sim).contains("outcome=\"failed: "),
        "{}",
        audit(&sim)
    );

    let journal = ProvisionJournal::open(&state_dir(&sim), "healthy").expect("journal");
    let entry = &journal.entries()[0];
    assert_eq!(entry.progress.stage, ProvisionStage::Failed);
    let id = entry.progress.id.expect("VM id").to_string();

    let t = run(
        &sim,
        &config,
        &[
            "provision",
            "--context",
            "healthy",
            "--terminate",
            &id,
            "--yes",
            "--confirm",
            "healthy",
        ],
    )
    .await;
    assert_eq!(t.code, 0, "{}{}", t.stdout, t.stderr);
    assert!(t.stdout.contains(": terminated ("), "{}", t.stdout);
    let journal = ProvisionJournal::open(&state_dir(&sim), "healthy").expect("journal");
    assert_eq!(
        journal.entries()[0].progress.stage,
        ProvisionStage::Terminated
    );
    assert!(audit(&sim).contains(&format!(
        "action=\"terminate VM {id} on sim-opennebula\" outcome=\"succeeded\""
    )));
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn console_killed_mid_provision_journal_lists_its_vms() {
    // Real time: a VM takes seconds to boot, so the kill lands mid-provision.
    let sim = start_at(scenario("healthy"), 1.0).await;
    let config = config_file(&sim);
    let mut child = command(
        &sim,
        &config,
        &provision_worker(&["--count", "2", "--yes", "--confirm", "healthy"]),
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .expect("spawn taloscope");
    let state = state_dir(&sim);
    within(30, "both VMs in the journal", async {
        loop {
            if let Ok(j) = ProvisionJournal::open(&state, "healthy")
                && j.entries()
                    .iter()
                    .filter(|e| e.progress.id.is_some())
                    .count()
                    == 2
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    child.start_kill().expect("kill taloscope");
    let status = within(10, "taloscope exits", child.wait())
        .await
        .expect("wait");
    assert!(!status.success(), "killed mid-provision, yet it succeeded");

    let reopened = ProvisionJournal::open(&state, "healthy").expect("journal after the kill");
    let names: Vec<&str> = reopened
        .entries()
        .iter()
        .map(|e| e.progress.name.as_str())
        .collect();
    assert_eq!(names, ["healthy-worker-1", "healthy-worker-2"]);
    assert!(
        reopened
            .entries()
            .iter()
            .all(|e| e.provider == "sim-opennebula" && e.role == "worker")
    );
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn readonly_wrong_password_missing_template_and_wrong_config_are_refused() {
    let sim = start(scenario("healthy")).await;
    let config = config_file(&sim);

    let r = run(
        &sim,
        &config,
        &provision_worker(&["--readonly", "--yes", "--confirm", "healthy"]),
    )
    .await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("read-only"), "{}", r.stderr);
    assert!(
        audit(&sim).contains("outcome=\"refused: read-only\""),
        "{}",
        audit(&sim)
    );

    let r = run(
        &sim,
        &config,
        &provision_worker(&["--yes", "--confirm", "healthy-typo"]),
    )
    .await;
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);

    let auth = sim.fleet.opennebula().expect("one").auth_file();
    let auth_line = format!(
        "auth_file: {}",
        serde_json::Value::String(auth.display().to_string())
    );
    let bad = edited_config(
        &sim,
        "bad-password.yaml",
        &auth_line,
        "username: oneadmin\n    password: not-the-password",
    );
    for provider in ["sim-opennebula", "sim-oneflow"] {
        let r = run(
            &sim,
            &bad,
            &provision_worker(&["--plan", "--provider", provider]),
        )
        .await;
        assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
        assert!(
            r.stderr
                .contains(&format!("provider {provider} (http://127.")),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("authentication failed"), "{}", r.stderr);
        assert!(!r.stderr.contains("not-the-password"), "{}", r.stderr);
    }

    let missing = edited_config(
        &sim,
        "missing.yaml",
        "\"talos-healthy-worker\"",
        "\"talos-nope\"",
    );
    let r = run(&sim, &missing, &provision_worker(&["--plan"])).await;
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("no VM template named \"talos-nope\""),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("talos-healthy-worker"),
        "the known templates are listed: {}",
        r.stderr
    );

    let cp = sim
        .fleet
        .opennebula()
        .expect("one")
        .machine_config_file("healthy", taloscope_sim::NodeRole::ControlPlane);
    let worker = sim
        .fleet
        .opennebula()
        .expect("one")
        .machine_config_file("healthy", taloscope_sim::NodeRole::Worker);
    let quoted = |p: &Path| serde_json::Value::String(p.display().to_string()).to_string();
    let swapped = edited_config(
        &sim,
        "swapped.yaml",
        &format!("worker: {}", quoted(&worker)),
        &format!("worker: {}", quoted(&cp)),
    );
    let r = run(&sim, &swapped, &provision_worker(&["--plan"])).await;
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(&cp.display().to_string()) && r.stderr.contains("\"controlplane\""),
        "{}",
        r.stderr
    );

    // Nothing was created by any of these.
    assert!(
        ProvisionJournal::open(&state_dir(&sim), "healthy")
            .expect("journal")
            .entries()
            .is_empty()
    );
    sim.fleet.shutdown().await;
}

/// A OneFlow service document names a role's VMs but not their state or IPs (OpenNebula's
/// role.rb), so a OneFlow provider without `xmlrpc_endpoint` is refused by name unless
/// `ONE_XMLRPC` names one; with it a scale-out is followed until the node joins.
#[tokio::test]
async fn a_oneflow_provider_follows_its_vms_at_xmlrpc_endpoint_else_one_xmlrpc() {
    let sim = start(scenario("healthy")).await;
    let xmlrpc = sim
        .fleet
        .opennebula()
        .expect("one")
        .xmlrpc_url()
        .to_string();
    let line = format!(
        "\n    xmlrpc_endpoint: {}",
        serde_json::Value::String(xmlrpc.clone())
    );
    let config = edited_config(&sim, "no-xmlrpc.yaml", &line, "");
    let oneflow = |more: &[&'static str]| {
        let mut args = provision_worker(&["--provider", "sim-oneflow"]);
        args.extend_from_slice(more);
        args
    };
    let r = run(&sim, &config, &oneflow(&["--plan"])).await;
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("provider sim-oneflow")
            && r.stderr.contains("xmlrpc_endpoint")
            && r.stderr.contains("ONE_XMLRPC"),
        "{}",
        r.stderr
    );

    let mut cmd = command(
        &sim,
        &config,
        &oneflow(&[
            "--ack",
            "use this template",
            "--yes",
            "--confirm",
            "healthy",
        ]),
    );
    cmd.env("ONE_XMLRPC", &xmlrpc);
    let out = within(120, "taloscope", cmd.output())
        .await
        .expect("taloscope runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("healthy: 1 of 1 new node(s) joined"),
        "{stdout}"
    );
    let journal = ProvisionJournal::open(&state_dir(&sim), "healthy").expect("journal");
    let entry = &journal.entries()[0];
    assert_eq!(entry.progress.stage, ProvisionStage::Joined);
    assert!(entry.progress.ip.is_some(), "the IP came over XML-RPC");
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn a_control_plane_for_a_cluster_that_can_lose_none_is_refused_by_the_quorum_guard() {
    let sim = start(scenario("cp2-down")).await;
    let config = config_file(&sim);
    let args = [
        "provision",
        "--context",
        "cp2-down",
        "--role",
        "controlplane",
        "--count",
        "1",
        "--plan",
    ];
    let r = run(&sim, &config, &args).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.lines().any(|l| l.contains("FAIL")
            && l.contains("etcd quorum for a join")
            && l.contains("can lose 0")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("blocked by 2 guard(s)"), "{}", r.stdout);
    let mut json_args = args.to_vec();
    json_args.extend(["--output", "json"]);
    let r = run(&sim, &config, &json_args).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let plan: serde_json::Value = serde_json::from_str(&r.stdout).expect("plan JSON");
    assert_eq!(plan["blocked"], true);
    assert_eq!(plan["cluster"], "cp2-down", "the plan's own fields stay");
    let quorum = plan["guards"]
        .as_array()
        .and_then(|gs| gs.iter().find(|g| g["id"] == "join_quorum"))
        .expect("the quorum guard");
    assert_eq!(quorum["verdict"], "fail");
    assert!(sim.fleet.opennebula().is_some());
}

#[tokio::test]
async fn a_fourth_control_plane_needs_the_even_count_ack_and_two_need_theirs() {
    let sim = start(scenario("healthy")).await;
    let config = config_file(&sim);
    let plan = |count: &'static str, acks: &[&'static str]| {
        let mut args = vec![
            "provision",
            "--context",
            "healthy",
            "--role",
            "controlplane",
            "--count",
            count,
            "--plan",
        ];
        for a in acks {
            args.extend(["--ack", a]);
        }
        args
    };
    let r = run(&sim, &config, &plan("1", &[])).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.lines().any(|l| l.contains("WARN")
            && l.contains("3 -> 4")
            && l.contains("--ack \"an even etcd member count\"")),
        "{}",
        r.stdout
    );
    let r = run(&sim, &config, &plan("1", &["an even etcd member count"])).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = run(&sim, &config, &plan("2", &[])).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .lines()
            .any(|l| l.contains("WARN") && l.contains("one control plane at a time")),
        "{}",
        r.stdout
    );
    let r = run(
        &sim,
        &config,
        &plan("2", &["several control planes at once"]),
    )
    .await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

#[tokio::test]
async fn the_demo_is_three_clusters_with_their_alternate_contexts_and_status_agrees() {
    let sim = start(scenario("demo")).await;
    let config = config_file(&sim);
    let r = run(&sim, &config, &["contexts", "--output", "json"]).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let contexts: serde_json::Value = serde_json::from_str(&r.stdout).expect("contexts JSON");
    let clusters = contexts["clusters"].as_array().expect("clusters");
    let names: Vec<&str> = clusters.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names, ["edge", "prod", "staging"], "{}", r.stdout);
    for c in clusters {
        let name = c["name"].as_str().unwrap_or_default();
        assert_eq!(c["talos_context"], name);
        assert_eq!(c["kube_context"], format!("admin@{name}"));
        assert_eq!(
            c["alternate_contexts"],
            serde_json::json!([format!("{name}-reader")])
        );
    }
    let r = run(&sim, &config, &["status", "--output", "json"]).await;
    let status: serde_json::Value = serde_json::from_str(&r.stdout).expect("status JSON");
    let status_names: Vec<&str> = status["clusters"]
        .as_array()
        .expect("clusters")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(status_names, names);
    // Naming the reader context asks prod with the reader's rights.
    let r = run(
        &sim,
        &config,
        &["status", "--context", "prod-reader", "--output", "json"],
    )
    .await;
    let status: serde_json::Value = serde_json::from_str(&r.stdout).expect("status JSON");
    assert_eq!(status["clusters"][0]["name"], "prod");
    assert_eq!(status["clusters"][0]["role"], "os:reader");
}

/// `flow-full`'s OneFlow worker role is at its `max_vms` (2), as the sim's service document
/// reports it: `provision --plan` of one more worker there fails the provider room guard and
/// exits 1; its control-plane role sets no `max_vms`, so that guard passes there.
#[tokio::test]
async fn a_oneflow_role_at_its_max_vms_fails_the_provider_room_guard() {
    let sim = start(scenario("flow-full")).await;
    let config = config_file(&sim);
    let plan = |role| {
        [
            "provision",
            "--context",
            "flow-full",
            "--provider",
            "sim-oneflow",
            "--role",
            role,
            "--plan",
        ]
    };
    let r = run(&sim, &config, &plan("worker")).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let room = r
        .stdout
        .lines()
        .find(|l| l.contains("provider room"))
        .unwrap_or_else(|| panic!("no provider room guard:\n{}", r.stdout));
    assert!(room.contains("FAIL"), "{room}");
    assert!(
        room.contains("role worker would have 3 VMs; its max_vms is 2"),
        "{room}"
    );

    let r = run(&sim, &config, &plan("controlplane")).await;
    let room = r.stdout.lines().find(|l| l.contains("provider room"));
    let room = room.unwrap_or_else(|| panic!("no provider room guard:\n{}", r.stdout));
    assert!(room.contains("sets no max_vms"), "{room}");
}
