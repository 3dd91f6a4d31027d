//! The sim's side of the Kubernetes upgrade, over its real sockets: the machine config as the
//! COSI resource upstream reads (admins only), a no-reboot apply with a new image restarting that
//! one component onto the new version (its pod, found by host IP, catching up with the new
//! component config version), and the `removed-api` scenario's stored objects as
//! `KubeClient::removed_api_objects` counts them.
mod upgrade_common;

use std::time::Duration;

use taloscope::talos::{ApplyMode, TalosError};
use taloscope::upgrade::kubernetes::Component;
use taloscope::upgrade::kubernetes::config_patch::patch_image;
use taloscope::versions::Version;
use upgrade_common::{Fixture, builtin};

const MACHINE_CONFIG: &str = "MachineConfigs.config.talos.dev";

async fn start(name: &str) -> Fixture {
    upgrade_common::start(builtin(name)).await
}

#[tokio::test]
async fn apply_with_a_new_image_restarts_only_that_component() {
    // At time scale 10 the 6 simulated seconds of the restart last 0.6 s, long enough for the
    // polling below to see the not-ready window even when the machine is busy.
    let f = upgrade_common::start_scaled(builtin("healthy-112"), 10.0).await;
    let talos = f.talos("healthy-112");
    let kube = f.kube("healthy-112").await;
    let cp1 = "127.10.0.1";
    let config = talos
        .cosi_get::<String>(cp1, "config", MACHINE_CONFIG, "v1alpha1")
        .await
        .expect("machine config");
    assert!(
        config
            .spec
            .contains("image: registry.k8s.io/kube-apiserver:v1.34.1"),
        "{}",
        config.spec
    );
    assert!(config.spec.contains("ghcr.io/siderolabs/kubelet:v1.34.1"));
    // The pod is found by its host IP and carries its component config's version.
    let version_before = talos
        .component_config_version(cp1, "kube-apiserver")
        .await
        .expect("APIServerConfigs version");
    let components = kube.control_plane_components().await.expect("components");
    let api = components
        .iter()
        .find(|c| c.host_ip == cp1 && c.name == "kube-apiserver")
        .expect("the apiserver pod on cp-1's host IP");
    assert_eq!(api.config_version.as_deref(), Some(version_before.as_str()));
    let target = Version::parse("1.35.0").expect("version");
    let patched =
        patch_image("cp-1", &config.spec, Component::KubeApiserver, &target).expect("patch");
    let text = patched.text.expect("changed");
    talos
        .apply_configuration(cp1, text.as_bytes(), ApplyMode::NoReboot, false, None)
        .await
        .expect("apply");
    let version_after = talos
        .component_config_version(cp1, "kube-apiserver")
        .await
        .expect("APIServerConfigs version");
    assert_ne!(
        version_after, version_before,
        "the apply rewrote the config"
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut saw_not_ready = false;
    loop {
        let components = kube.control_plane_components().await.expect("components");
        let api = components
            .iter()
            .find(|c| c.node == "cp-1" && c.name == "kube-apiserver")
            .expect("cp-1 apiserver");
        saw_not_ready |= !api.ready;
        if api.version == "v1.35.0" && api.ready {
            assert_eq!(api.config_version.as_deref(), Some(version_after.as_str()));
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "cp-1 kube-apiserver never ran v1.35.0: {api:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        saw_not_ready,
        "the apiserver restarted (not ready for a while)"
    );
    let components = kube.control_plane_components().await.expect("components");
    let others: Vec<_> = components
        .iter()
        .filter(|c| !(c.node == "cp-1" && c.name == "kube-apiserver"))
        .collect();
    assert!(others.iter().all(|c| c.version == "v1.34.1" && c.ready));
    // The resource now holds the applied config, with a new version.
    let again = talos
        .cosi_get::<String>(cp1, "config", MACHINE_CONFIG, "v1alpha1")
        .await
        .expect("machine config");
    assert!(again.spec.contains("kube-apiserver:v1.35.0"));
    assert_ne!(again.version, config.version);
    // The kubelet: the node goes NotReady and comes back on the new version.
    let w1 = "127.10.0.4";
    let config = talos
        .cosi_get::<String>(w1, "config", MACHINE_CONFIG, "v1alpha1")
        .await
        .expect("worker config");
    let patched = patch_image("w-1", &config.spec, Component::Kubelet, &target).expect("patch");
    talos
        .apply_configuration(
            w1,
            patched.text.expect("changed").as_bytes(),
            ApplyMode::NoReboot,
            false,
            None,
        )
        .await
        .expect("apply");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let nodes = kube.nodes().await.expect("nodes");
        let node = nodes.iter().find(|n| n.name == "w-1").expect("w-1");
        if node.kubelet_version == "v1.35.0" && node.ready {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{node:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    f.sim.shutdown().await;
}

#[tokio::test]
async fn machine_config_is_for_admins_and_bad_yaml_is_refused() {
    let f = start("healthy").await;
    let reader = f.talos("healthy-reader");
    let err = reader
        .cosi_get::<String>("127.10.0.1", "config", MACHINE_CONFIG, "v1alpha1")
        .await
        .expect_err("reader refused");
    assert!(
        matches!(err, TalosError::PermissionDenied { .. }),
        "{err:?}"
    );
    let admin = f.talos("healthy");
    let err = admin
        .apply_configuration(
            "127.10.0.1",
            b"machine: [",
            ApplyMode::NoReboot,
            false,
            None,
        )
        .await
        .expect_err("bad yaml");
    assert!(err.to_string().contains("decode error"), "{err}");
    f.sim.shutdown().await;
}

#[tokio::test]
async fn removed_api_scenario_stores_objects_the_next_minor_removes() {
    let f = start("removed-api").await;
    let kube = f.kube("removed-api").await;
    let counts = kube
        .removed_api_objects("v1.31.4", "v1.32.0")
        .await
        .expect("counts");
    let count = |api: &str| counts.iter().find(|c| c.api == api).map(|c| c.count);
    assert_eq!(
        count("flowschemas.v1beta3.flowcontrol.apiserver.k8s.io"),
        Some(2)
    );
    assert_eq!(
        count("prioritylevelconfigurations.v1beta3.flowcontrol.apiserver.k8s.io"),
        Some(1)
    );
    assert_eq!(
        count("podschedulingcontexts.v1alpha3.resource.k8s.io"),
        Some(0)
    );
    let components = kube.control_plane_components().await.expect("components");
    assert!(components.iter().all(|c| c.version == "v1.31.4"));
    f.sim.shutdown().await;
}
