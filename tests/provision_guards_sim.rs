//! `taloscope provision` against the sim, its providers and guards: a OneFlow provider
//! followed over XML-RPC, the quorum guard refusing a control plane a cluster cannot lose, the
//! even-count acknowledgements, the demo's three clusters, a OneFlow role at its max_vms, a VM
//! quota too small for the new VMs, the rollout Lease a provision takes (refused while another run holds it, released after),
//! and a cluster Cluster API owns refused by `capi_owned` (the CAPI way named).
mod provision_common;
mod talos_common;

use provision_common::*;
use talos_common::{scenario, start, within};
use taloscope::provision::{ProvisionJournal, ProvisionStage};

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

/// New VMs beside Cluster API's Machines: the plan's `capi_owned` row fails naming the owner
/// and `taloscope scale`; `--yes` is refused before any VM is made. On a cluster no
/// management cluster owns the row is there too, passing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provisioning_a_cluster_cluster_api_owns_is_refused_by_capi_owned() {
    let sim = start(scenario("capi")).await;
    let config = config_file(&sim);
    let worker = |cluster: &'static str, more: &[&'static str]| {
        let mut args = vec!["provision", "--context", cluster, "--role", "worker"];
        args.extend_from_slice(more);
        args
    };
    let r = run(
        &sim,
        &config,
        &worker("capi-work", &["--plan", "--output", "json"]),
    )
    .await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let plan: serde_json::Value = serde_json::from_str(&r.stdout).expect("plan JSON");
    let guard = |plan: &serde_json::Value| {
        plan["guards"]
            .as_array()
            .and_then(|gs| gs.iter().find(|g| g["id"] == "capi_owned"))
            .cloned()
            .unwrap_or_else(|| panic!("the capi_owned row in {plan}"))
    };
    let owned = guard(&plan);
    assert_eq!(owned["verdict"], "fail", "{owned}");
    let reason = owned["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("owned by Cluster API (admin@capi-mgmt/default/capi-work)")
            && reason.contains("taloscope scale --context capi-work"),
        "{reason}"
    );

    let vms_before = live_vms(&sim).await;
    let r = run(
        &sim,
        &config,
        &worker("capi-work", &["--yes", "--confirm", "capi-work"]),
    )
    .await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("refused") && r.stderr.contains("not owned by Cluster API"),
        "{}",
        r.stderr
    );
    assert_eq!(live_vms(&sim).await, vms_before, "no VM was made");
    assert!(
        audit(&sim).contains("refused by its guards"),
        "{}",
        audit(&sim)
    );

    let r = run(
        &sim,
        &config,
        &worker("capi-mgmt", &["--plan", "--output", "json"]),
    )
    .await;
    let plan: serde_json::Value = serde_json::from_str(&r.stdout).expect("plan JSON");
    assert_eq!(guard(&plan)["verdict"], "pass", "{plan}");
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

/// `one-tight`'s user holds a VM quota of 8 VMs, 5 in use: `provision --plan` of 4 workers
/// fails the provider room guard with the figures and exits 1; 3 fit.
#[tokio::test]
async fn a_vm_quota_too_small_for_the_new_vms_fails_the_provider_room_guard() {
    let sim = start(scenario("one-tight")).await;
    let config = config_file(&sim);
    let plan = |count| {
        [
            "provision",
            "--context",
            "one-tight",
            "--role",
            "worker",
            "--count",
            count,
            "--plan",
        ]
    };
    let room = |r: &Run| {
        let line = r.stdout.lines().find(|l| l.contains("provider room"));
        let line = line.unwrap_or_else(|| panic!("no provider room guard:\n{}", r.stdout));
        line.to_string()
    };
    let r = run(&sim, &config, &plan("4")).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let line = room(&r);
    assert!(line.contains("FAIL"), "{line}");
    assert!(
        line.contains("user tenant: VMS quota 8, 5 used, the plan needs 4"),
        "{line}"
    );
    let r = run(&sim, &config, &plan("3")).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        room(&r).contains("user tenant: VMS 5+3 of 8"),
        "{}",
        r.stdout
    );
    // A OneFlow role's new VMs are the user's too.
    let mut flow = plan("4").to_vec();
    flow.extend(["--provider", "sim-oneflow"]);
    let r = run(&sim, &config, &flow).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let line = room(&r);
    assert!(
        line.contains("role worker: 6 VMs; it sets no max_vms; user tenant: VMS quota 8, 5 used"),
        "{line}"
    );
}

/// The rollout Lease of the sim's cluster `healthy`, through its kube context.
async fn healthy_kube(sim: &talos_common::Sim) -> taloscope::kube::KubeClient {
    let kubeconfig =
        kube::config::Kubeconfig::read_from(sim.fleet.kubeconfig_path()).expect("sim kubeconfig");
    taloscope::kube::KubeClient::new(&kubeconfig, "admin@healthy", Default::default())
        .await
        .expect("kube client")
}

/// Principle 4: one run changes a cluster at a time. A provision takes the cluster's rollout
/// Lease as an upgrade does: refused, naming the holder, while another console's upgrade holds
/// it (and no VM is created); once that is released it runs, and it gives the Lease back.
#[tokio::test]
async fn a_held_rollout_lease_refuses_provisioning_and_a_finished_one_releases_it() {
    let sim = start(scenario("healthy")).await;
    let config = config_file(&sim);
    let kube = healthy_kube(&sim).await;
    let bobs = kube
        .acquire_rollout_lease(
            "healthy",
            "bob@jump2",
            None,
            (taloscope::rollout::RolloutKind::TalosUpgrade, "v1.12.0", 5),
            std::time::Duration::from_secs(600),
        )
        .await
        .expect("bob takes the lease");
    let before = live_vms(&sim).await;
    let yes = provision_worker(&["--yes", "--confirm", "healthy"]);
    let r = run(&sim, &config, &yes).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("refused: upgrade in progress on healthy by bob@jump2, node 1 of 5"),
        "{}",
        r.stdout
    );
    assert_eq!(live_vms(&sim).await, before, "no VM while refused");
    let info = kube
        .read_rollout_lease()
        .await
        .expect("read")
        .expect("held");
    assert_eq!(info.holder, "bob@jump2", "bob's lease is left alone");

    bobs.release().await.expect("bob releases");
    let r = run(&sim, &config, &yes).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("healthy: 1 of 1 new node(s) joined"),
        "{}",
        r.stdout
    );
    assert_eq!(
        kube.read_rollout_lease().await.expect("read"),
        None,
        "the finished provision released the lease"
    );
    sim.fleet.shutdown().await;
}
