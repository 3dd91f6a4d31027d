//! `taloscope create` and `taloscope delete` as operators run them, against the sim's
//! OpenNebula and OneFlow endpoints: the plan and its guards (a name in use, an even
//! control-plane count, the versions, a missing template, a provider without room), both
//! providers, and the delete plan of a cluster taloscope did not create (refused unless --adopt
//! names its VMs).
mod provision_common;
mod talos_common;

use std::path::{Path, PathBuf};

use provision_common::{Run, audit, edited_config, live_vms, run, state_dir};
use talos_common::{Sim, scenario, start};

/// The sim's taloscope.yaml with new clusters' templates (and service template) named for
/// both providers, written beside it.
fn config(sim: &Sim) -> PathBuf {
    let one = sim.fleet.opennebula().expect("the sim runs OpenNebula");
    let text = std::fs::read_to_string(one.config_file()).expect("sim config");
    let named = text
        .replace(
            "  sim-opennebula:\n",
            "  sim-opennebula:\n    templates: {controlplane: talos-healthy-controlplane, worker: talos-healthy-worker}\n",
        )
        .replace(
            "    service_template: talos-cluster\n",
            "    service_template: talos-healthy\n",
        );
    assert_ne!(named, text, "providers in the sim's config:\n{text}");
    let path = sim.dir.path().join("create.yaml");
    std::fs::write(&path, named).expect("write config");
    path
}

fn create<'a>(name: &'a str, provider: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "create",
        "--name",
        name,
        "--provider",
        provider,
        "--controlplanes",
        "3",
        "--workers",
        "2",
        "--talos",
        "v1.11.3",
    ];
    args.extend_from_slice(more);
    args
}

fn json(r: &Run) -> serde_json::Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", r.stdout, r.stderr))
}

fn guard<'a>(plan: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    let guards = plan["guards"].as_array().expect("guards");
    let g = guards.iter().find(|g| g["id"] == id);
    g.unwrap_or_else(|| panic!("guard {id} in {guards:?}"))
}

fn verdict<'a>(plan: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    &guard(plan, id)["verdict"]
}

fn reason<'a>(plan: &'a serde_json::Value, id: &str) -> &'a str {
    guard(plan, id)["reason"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn the_plan_names_five_vms_the_versions_and_passing_guards() {
    let sim = start(scenario("healthy")).await;
    let config = config(&sim);
    let r = run(
        &sim,
        &config,
        &create("lab", "sim-opennebula", &["--plan", "-o", "json"]),
    )
    .await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let plan = json(&r);
    assert_eq!(plan["source"]["kind"], "templates");
    assert_eq!(
        plan["source"]["controlplane"]["name"],
        "talos-healthy-controlplane"
    );
    let names: Vec<&str> = plan["vms"]
        .as_array()
        .expect("vms")
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "lab-controlplane-1",
            "lab-controlplane-2",
            "lab-controlplane-3",
            "lab-worker-1",
            "lab-worker-2"
        ]
    );
    assert_eq!(
        (plan["talos"].as_str(), plan["kubernetes"].as_str()),
        (Some("v1.11.3"), Some("1.34.1"))
    );
    assert_eq!(plan["delivery"], "maintenance");
    assert_eq!(plan["endpoint"]["kind"], "first_control_plane");
    assert_eq!(plan["blocked"], false, "{plan}");
    assert!(
        plan["bundle_path"]
            .as_str()
            .is_some_and(|p| p.ends_with("clusters/lab.secrets.yaml")),
        "{plan}"
    );

    let table = run(&sim, &config, &create("lab", "sim-opennebula", &["--plan"])).await;
    assert_eq!(table.code, 0, "{}{}", table.stdout, table.stderr);
    for text in [
        "CREATE     cluster lab: 3 control plane(s), 2 worker(s)",
        "GUARDS",
        "name free",
    ] {
        assert!(table.stdout.contains(text), "{text} in:\n{}", table.stdout);
    }
}

/// `one-tight`: the sim's user is `tenant` with a VM quota of 8 VMs, 5 of them its cluster's,
/// and the new-cluster service template's worker role allows 1 VM: a 3+2 cluster fits neither
/// provider, and the guard says by how much; 1+2 fits the quota.
#[tokio::test]
async fn a_provider_without_room_fails_the_provider_guard_with_its_figures() {
    let sim = start(scenario("one-tight")).await;
    let config = sim
        .fleet
        .opennebula()
        .expect("OpenNebula sim")
        .config_file();
    let json_plan = ["--plan", "-o", "json"];
    let r = run(&sim, &config, &create("lab", "sim-opennebula", &json_plan)).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let plan = json(&r);
    assert_eq!(verdict(&plan, "provider_ready"), "fail");
    let why = reason(&plan, "provider_ready");
    assert!(
        why.contains("user tenant: VMS quota 8, 5 used, the plan needs 5"),
        "{why}"
    );
    let mut small = create("lab", "sim-opennebula", &json_plan);
    small[6] = "1";
    let r = run(&sim, &config, &small).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let why = reason(&json(&r), "provider_ready").to_string();
    assert!(why.contains("user tenant: VMS 5+3 of 8"), "{why}");
    assert!(why.contains("group users: no VM quota"), "{why}");

    let r = run(&sim, &config, &create("lab", "sim-oneflow", &json_plan)).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let plan = json(&r);
    assert_eq!(verdict(&plan, "provider_ready"), "fail");
    let why = reason(&plan, "provider_ready");
    assert!(
        why.contains("role worker would have 2 VMs; its max_vms is 1"),
        "{why}"
    );
    // OneFlow's VMs are the user's too: 1+1 fits both, 3+1 not the quota.
    let mut flow = create("lab", "sim-oneflow", &json_plan);
    (flow[6], flow[8]) = ("1", "1");
    let r = run(&sim, &config, &flow).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let why = reason(&json(&r), "provider_ready").to_string();
    assert!(why.contains("role worker: 1 of at most 1 VMs"), "{why}");
    assert!(why.contains("user tenant: VMS 5+2 of 8"), "{why}");
    flow[6] = "3";
    let r = run(&sim, &config, &flow).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let why = reason(&json(&r), "provider_ready").to_string();
    assert!(
        why.contains("user tenant: VMS quota 8, 5 used, the plan needs 4"),
        "{why}"
    );
}

#[tokio::test]
async fn a_name_in_use_an_even_count_and_user_data_without_endpoint_block() {
    let sim = start(scenario("healthy")).await;
    let config = config(&sim);
    let taken = run(
        &sim,
        &config,
        &create("healthy", "sim-opennebula", &["--plan", "-o", "json"]),
    )
    .await;
    assert_eq!(taken.code, 1, "{}{}", taken.stdout, taken.stderr);
    assert_eq!(verdict(&json(&taken), "name_free"), "fail");

    let mut even = create("lab", "sim-opennebula", &["--plan", "-o", "json"]);
    even[6] = "2";
    let r = run(&sim, &config, &even).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(verdict(&json(&r), "control_plane_count"), "warn");
    even.extend(["--ack", "an even etcd member count"]);
    let acked = run(&sim, &config, &even).await;
    assert_eq!(acked.code, 0, "{}{}", acked.stdout, acked.stderr);

    let user_data = create(
        "lab",
        "sim-opennebula",
        &["--deliver", "user-data", "--plan", "-o", "json"],
    );
    let r = run(&sim, &config, &user_data).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(verdict(&json(&r), "config_delivery"), "fail");
    let given = create(
        "lab",
        "sim-opennebula",
        &[
            "--deliver",
            "user-data",
            "--endpoint",
            "127.0.0.1",
            "--plan",
            "-o",
            "json",
        ],
    );
    let r = run(&sim, &config, &given).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(verdict(&json(&r), "config_delivery"), "warn");
}

#[tokio::test]
async fn bad_versions_and_a_missing_template_are_named() {
    let sim = start(scenario("healthy")).await;
    let config = config(&sim);
    let r = run(
        &sim,
        &config,
        &create(
            "lab",
            "sim-opennebula",
            &["--kubernetes", "1.28.0", "--plan", "-o", "json"],
        ),
    )
    .await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(verdict(&json(&r), "version_pair"), "fail");
    let r = run(&sim, &config, &create("Lab", "sim-opennebula", &["--plan"])).await;
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("cluster name \"Lab\""), "{}", r.stderr);
    let missing = edited_config(
        &sim,
        "missing.yaml",
        "  sim-opennebula:\n",
        "  sim-opennebula:\n    templates: {controlplane: talos-missing, worker: talos-worker}\n",
    );
    let r = run(
        &sim,
        &missing,
        &create("lab", "sim-opennebula", &["--plan"]),
    )
    .await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("talos-missing"), "{}", r.stderr);
}

#[tokio::test]
async fn through_oneflow_the_plan_instantiates_the_service_template() {
    let sim = start(scenario("healthy")).await;
    let config = config(&sim);
    let r = run(
        &sim,
        &config,
        &create("lab", "sim-oneflow", &["--plan", "-o", "json"]),
    )
    .await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let plan = json(&r);
    assert_eq!(plan["source"]["kind"], "service");
    assert_eq!(plan["source"]["template"]["name"], "talos-healthy");
    assert_eq!(plan["source"]["service_name"], "lab");
    assert_eq!(plan["vms"].as_array().map(Vec::len), Some(0));
}

#[tokio::test]
async fn a_cluster_taloscope_did_not_create_is_deleted_only_with_adopt_and_the_ack() {
    let sim = start(scenario("healthy")).await;
    let config = config(&sim);
    let r = run(
        &sim,
        &config,
        &["delete", "--context", "healthy", "--plan", "-o", "json"],
    )
    .await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let plan = json(&r);
    assert_eq!(plan["known_by"], "unknown");
    assert_eq!(verdict(&plan, "known_vms"), "fail");
    assert_eq!(plan["talos_context"], "healthy");

    let adopt = [
        "delete",
        "--context",
        "healthy",
        "--adopt",
        "0,1",
        "--plan",
        "-o",
        "json",
    ];
    let r = run(&sim, &config, &adopt).await;
    assert_eq!(
        r.code, 1,
        "the ack is still needed: {}{}",
        r.stdout, r.stderr
    );
    let plan = json(&r);
    assert_eq!(plan["known_by"], "adopted");
    assert_eq!(plan["vms"].as_array().map(Vec::len), Some(2));
    assert_eq!(verdict(&plan, "destroys_data"), "warn");
    let mut acked = adopt.to_vec();
    acked.extend(["--ack", "this destroys the cluster and its data"]);
    let r = run(&sim, &config, &acked).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);

    let unknown = ["delete", "--context", "healthy", "--adopt", "999", "--plan"];
    let r = run(&sim, &config, &unknown).await;
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("--adopt 999"), "{}", r.stderr);
}

fn backups_of<'a>(stdout: &'a str, file: &str) -> Vec<&'a str> {
    stdout
        .split("backup ")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|b| b.contains(&format!("/{file}.taloscope-backup-")))
        .collect()
}

#[tokio::test]
async fn deleting_an_adopted_cluster_leaves_no_vm_no_context_and_backups_of_both_files() {
    let sim = start(scenario("healthy")).await;
    let config = config(&sim);
    let ids = live_vms(&sim).await;
    assert!(!ids.is_empty());
    let ids: Vec<String> = ids.iter().map(u64::to_string).collect();
    let adopt = ids.join(",");
    let args = [
        "delete",
        "--context",
        "healthy",
        "--adopt",
        &adopt,
        "--yes",
        "--confirm",
        "healthy",
        "--ack",
        "this destroys the cluster and its data",
    ];
    let r = run(&sim, &config, &args).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("every VM is gone"), "{}", r.stdout);
    assert!(live_vms(&sim).await.is_empty(), "{}", r.stdout);
    let backups: Vec<&str> = r
        .stdout
        .split("backup ")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .collect();
    // One removal per context name (healthy, admin@healthy): each backs up the one file it
    // changes (talosconfig, then kubeconfig), and no backup overwrites another.
    assert_eq!(backups.len(), 2, "{}", r.stdout);
    let distinct: std::collections::BTreeSet<&str> = backups.iter().copied().collect();
    assert_eq!(distinct.len(), 2, "{}", r.stdout);
    assert_eq!(backups_of(&r.stdout, "kubeconfig").len(), 1, "{}", r.stdout);
    for b in backups {
        assert!(Path::new(b).exists(), "backup {b}");
    }
    let first_talos = std::fs::read_to_string(
        backups_of(&r.stdout, "talosconfig")
            .first()
            .expect("a talosconfig backup"),
    )
    .expect("backup readable");
    assert!(
        first_talos.contains("healthy"),
        "the first backup holds the original"
    );
    let contexts = run(&sim, &config, &["contexts", "-o", "json"]).await;
    assert!(
        !contexts.stdout.contains("\"healthy\""),
        "{}",
        contexts.stdout
    );
    let audit = audit(&sim);
    assert!(
        audit.contains("action=\"delete cluster: terminate"),
        "{audit}"
    );
    assert!(audit.contains("outcome=\"succeeded\""), "{audit}");
}

#[tokio::test]
async fn a_second_run_of_the_same_create_makes_no_second_set_of_vms() {
    let sim = start(scenario("healthy")).await;
    let config = config(&sim);
    let before = live_vms(&sim).await.len();
    let run_args = create(
        "lab",
        "sim-opennebula",
        &[
            "--yes",
            "--confirm",
            "lab",
            "--ack",
            "pin the fingerprints shown",
            "--phase-timeout",
            "3",
            "--poll-ms",
            "100",
        ],
    );
    let first = run(&sim, &config, &run_args).await;
    assert!(
        first.stdout.contains("VMs: done: VM ids"),
        "{}{}",
        first.stdout,
        first.stderr
    );
    assert_eq!(live_vms(&sim).await.len(), before + 5, "{}", first.stdout);
    let journal = taloscope::cluster_lifecycle::CreateJournal::read(&state_dir(&sim), "lab")
        .expect("journal")
        .expect("written");
    assert_eq!(journal.vms.len(), 5);
    assert!(journal.holder.is_none(), "released when the run ended");
    let second = run(&sim, &config, &run_args).await;
    assert!(
        second.stdout.contains("VMs: done: done by an earlier run") || second.code == 1,
        "{}{}",
        second.stdout,
        second.stderr
    );
    assert_eq!(live_vms(&sim).await.len(), before + 5, "{}", second.stdout);
    let audit = audit(&sim);
    assert!(audit.contains("action=\"create cluster (3 control plane(s), 2 worker(s), Talos v1.11.3) through sim-opennebula\""), "{audit}");
}

/// A headless create asks nobody about the VMs' maintenance certificates: `--yes` without
/// `--fingerprint VM=SHA256` or the pinning acknowledgement is refused naming both and where
/// the fingerprint is read, before any VM exists; a mistyped acknowledgement or a
/// `--fingerprint` naming no planned VM is a usage error.
#[tokio::test]
async fn a_headless_create_pins_fingerprints_only_when_given_or_acknowledged() {
    let sim = start(scenario("healthy")).await;
    let config = config(&sim);
    let before = live_vms(&sim).await.len();
    let confirmed = ["--yes", "--confirm", "lab", "--poll-ms", "20"];
    let r = run(&sim, &config, &create("lab", "sim-opennebula", &confirmed)).await;
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    for text in [
        "maintenance fingerprints",
        "--fingerprint VM=SHA256",
        "--ack \"pin the fingerprints shown\"",
        "VNC console in Sunstone",
    ] {
        assert!(r.stderr.contains(text), "{text} in {}", r.stderr);
    }
    assert_eq!(live_vms(&sim).await.len(), before, "no VM made");

    // A mistyped acknowledgement is a usage error naming it beside the one asked for, as in
    // every guarded command.
    let mut typo = confirmed.to_vec();
    typo.extend(["--ack", "pin the fingerprint"]);
    let r = run(&sim, &config, &create("lab", "sim-opennebula", &typo)).await;
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(
            "--ack \"pin the fingerprint\" is not an acknowledgement this plan asks for (it asks for \"pin the fingerprints shown\")"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(live_vms(&sim).await.len(), before, "no VM made");

    let mut named = confirmed.to_vec();
    named.extend(["--fingerprint", "lab-worker-9=AAAA"]);
    let r = run(&sim, &config, &create("lab", "sim-opennebula", &named)).await;
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("lab-worker-9 is not a VM of this plan")
            && r.stderr.contains("lab-worker-2"),
        "{}",
        r.stderr
    );
    assert_eq!(live_vms(&sim).await.len(), before, "no VM made");
}
