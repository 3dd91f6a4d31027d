//! `taloscope provision` as operators run it, against the sim's OpenNebula and
//! OneFlow endpoints and its Talos and Kubernetes APIs: two workers until
//! Ready (and `status` agrees), a VM stuck in BOOT_FAILURE then terminated,
//! a console killed mid-provision whose journal still lists its VMs,
//! read-only refusal, wrong password, missing template, wrong machine config. The providers'
//! and guards' tests are in provision_guards_sim.rs.
mod provision_common;
mod talos_common;

use std::path::Path;
use std::time::Duration;

use provision_common::*;
use talos_common::{scenario, start, start_at, within};
use taloscope::provision::{ProvisionJournal, ProvisionStage};

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
