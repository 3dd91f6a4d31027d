//! Issue 18's "the generated configs load in the sim for each supported Talos version": the
//! console's `controlplane.yaml` and `worker.yaml` for the newest release of every Talos minor
//! it generates for go through the sim's own config loading (taloscope_sim shares no config code
//! with the console), and the sim refuses what that Talos would refuse: a v1.12 config (with its
//! HostnameConfig document) installed by v1.11. A full create of the oldest and newest minors
//! forms a one-node cluster whose status shows it Ready on that version.
mod create_common;
mod provision_common;
mod talos_common;

use create_common::{create_args, lab_status};
use provision_common::{Run, config_file};
use talos_common::{scenario, start};
use taloscope::cluster_config::{
    GenerateInput, MachineConfigs, NEWEST_GENERATED, OLDEST_GENERATED, SecretsBundle,
};
use taloscope::versions::{
    KubeVersion, Minor, TalosVersion, known_kubernetes_releases, kubernetes_supported,
    latest_talos_release,
};
use taloscope_sim::NodeRole;
use taloscope_sim::opennebula::load_machine_config;
use taloscope_sim::registry::{RegistrySim, RegistrySpec};

/// The first release of Talos 1.14, which the built-in table does not list (it was read when
/// 1.14 had only release candidates): a create learns it from the registry.
const V1_14: &str = "v1.14.0";

/// The newest release of every minor taloscope generates configs for: the built-in table's,
/// and v1.14.0 for 1.14.
fn generated_versions() -> Vec<TalosVersion> {
    (OLDEST_GENERATED.minor..=NEWEST_GENERATED.minor)
        .map(|m| {
            latest_talos_release(Minor::new(1, m))
                .or_else(|| (m == 14).then(|| TalosVersion::parse(V1_14).unwrap()))
                .expect("a known release")
        })
        .collect()
}

fn newest_kubernetes(talos: &TalosVersion) -> KubeVersion {
    known_kubernetes_releases()
        .into_iter()
        .rev()
        .find(|k| kubernetes_supported(talos, k))
        .expect("a Kubernetes release the Talos release runs")
}

fn configs(talos: &TalosVersion, bundle: &SecretsBundle) -> MachineConfigs {
    let kube = newest_kubernetes(talos);
    let input = GenerateInput::new(
        "lab",
        "https://127.0.0.1:6443",
        talos.clone(),
        kube,
        bundle.clone(),
    );
    MachineConfigs::generate(&input).unwrap_or_else(|e| panic!("{talos}: {e}"))
}

#[test]
fn every_generated_version_loads_in_the_sim_and_a_newer_config_is_refused_by_an_older_talos() {
    let versions = generated_versions();
    assert_eq!(versions.len(), 6, "v1.9 to v1.14: {versions:?}");
    // From v1.7 on every bundle is alike (RSA service-account key, secretbox): one serves all.
    let bundle = SecretsBundle::generate(&versions[0]).expect("bundle");
    for talos in &versions {
        let made = configs(talos, &bundle);
        let kube = newest_kubernetes(talos);
        for (role, text) in [
            (NodeRole::ControlPlane, &made.controlplane),
            (NodeRole::Worker, &made.worker),
        ] {
            let loaded = load_machine_config(text).unwrap_or_else(|e| panic!("{talos}: {e}"));
            assert_eq!(loaded.role, role, "{talos}");
            assert_eq!(loaded.cluster_name.as_deref(), Some("lab"), "{talos}");
            assert_eq!(
                loaded.endpoint.as_deref(),
                Some("https://127.0.0.1:6443"),
                "{talos}"
            );
            assert_eq!(
                loaded.talos_version,
                Some(talos.to_string()),
                "{talos} {role:?}"
            );
            assert_eq!(loaded.kubernetes_version, Some(kube.to_string()), "{talos}");
        }
    }
    let v12 = versions.iter().find(|v| v.minor_key() == Minor::new(1, 12));
    let v11 = versions.iter().find(|v| v.minor_key() == Minor::new(1, 11));
    let (v12, v11) = (v12.expect("v1.12"), v11.expect("v1.11"));
    let newer = configs(v12, &bundle).controlplane;
    assert!(newer.contains("kind: HostnameConfig"), "{newer}");
    let installed_by_v11 = newer.replace(&format!("installer:{v12}"), &format!("installer:{v11}"));
    assert_ne!(installed_by_v11, newer);
    let refused = load_machine_config(&installed_by_v11).expect_err("v1.11 has no HostnameConfig");
    assert_eq!(refused, "\"HostnameConfig\" \"v1alpha1\": not registered");
}

/// `taloscope create` of a one-node cluster on `talos`, then its status: Ready, on `talos`.
/// Releases the built-in table does not know come from a registry on loopback listing them.
async fn create_one_node(talos: &TalosVersion) {
    let sim = start(scenario("healthy")).await;
    let version = talos.to_string();
    let registry = RegistrySim::start(RegistrySpec::installer(&["v1.13.9", V1_14]))
        .await
        .expect("registry");
    let more = ["--deliver", "maintenance"];
    let args = create_args("sim-opennebula", 1, 0, &version, &more);
    let r = run_with_registry(&sim, &args, &registry.endpoint()).await;
    assert_eq!(r.code, 0, "{version}: {}{}", r.stdout, r.stderr);
    let (lab, shown) = lab_status(&sim).await;
    let [node] = lab.nodes.as_slice() else {
        panic!("one node: {shown}");
    };
    assert!(node.ready && node.k8s_ready == Some(true), "{node:?}");
    assert_eq!(
        node.talos_version.as_deref(),
        Some(version.as_str()),
        "{node:?}"
    );
    assert!(lab.etcd.leader().is_some(), "{shown}");
}

#[tokio::test]
async fn the_oldest_generated_version_forms_a_cluster() {
    create_one_node(&generated_versions()[0]).await;
}

#[tokio::test]
async fn the_newest_generated_version_forms_a_cluster() {
    let newest = generated_versions().last().expect("a version").clone();
    assert_eq!(newest.to_string(), V1_14);
    create_one_node(&newest).await;
}

/// `taloscope create` with `registry` as the releases registry.
async fn run_with_registry(sim: &talos_common::Sim, args: &[String], registry: &str) -> Run {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = provision_common::command(sim, &config_file(sim), &args);
    cmd.env("TALOSCOPE_RELEASES_REGISTRY", registry);
    provision_common::run_command(cmd).await
}

/// A release neither the built-in table nor a registry lists is refused at planning, and the
/// refusal (exit 2, a request error) says where the releases came from.
#[tokio::test]
async fn a_release_no_one_lists_is_refused_with_where_releases_came_from() {
    let sim = start(scenario("healthy")).await;
    let more = ["--deliver", "maintenance"];
    let off = run_with_registry(
        &sim,
        &create_args("sim-opennebula", 1, 0, V1_14, &more),
        "off",
    )
    .await;
    assert_eq!(off.code, 2, "{}{}", off.stdout, off.stderr);
    assert!(
        off.stderr.contains("Talos v1.14.0 is not a known release")
            && off.stderr.contains("releases from the built-in table"),
        "{}",
        off.stderr
    );
    let registry = RegistrySim::start(RegistrySpec::installer(&["v1.13.9", V1_14]))
        .await
        .expect("registry");
    let unlisted = create_args("sim-opennebula", 1, 0, "v1.14.7", &more);
    let r = run_with_registry(&sim, &unlisted, &registry.endpoint()).await;
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("Talos v1.14.7 is not a known release")
            && r.stderr.contains("releases listed by registry")
            && r.stderr.contains("such as v1.14.0"),
        "{}",
        r.stderr
    );
}
