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

/// The newest release of every minor taloscope generates configs for.
fn generated_versions() -> Vec<TalosVersion> {
    (OLDEST_GENERATED.minor..=NEWEST_GENERATED.minor)
        .map(|m| latest_talos_release(Minor::new(1, m)).expect("a known release"))
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
    assert_eq!(versions.len(), 5, "v1.9 to v1.13: {versions:?}");
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
async fn create_one_node(talos: &TalosVersion) {
    let sim = start(scenario("healthy")).await;
    let version = talos.to_string();
    let more = ["--deliver", "maintenance"];
    let args = create_args("sim-opennebula", 1, 0, &version, &more);
    let r = create_common::run(&sim, &args).await;
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
    create_one_node(generated_versions().last().expect("a version")).await;
}
