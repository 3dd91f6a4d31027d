//! Every typed Talos call against the simulated `healthy` cluster over
//! loopback mutual TLS, plus the role checks: a reader may read, not act.
mod talos_common;

use futures::StreamExt;
use talos_common::{scenario, start, within};
use taloscope::talos::{
    AppliedMode, ApplyMode, ImageNamespace, ImagePullProgress, LegacyUpgrade, MachineStage,
    RebootMode, ResourceEventKind, Role, TalosError, UpgradeProgress,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_answer_with_typed_values() {
    let sim = start(scenario("healthy")).await;
    let client = sim.client("healthy");
    let cp1 = sim.address("healthy", 0);
    let w1 = sim.address("healthy", 3);
    assert!(client.roles().contains(&Role::Admin));

    within(20, "reads", async {
        let v = client.version(&cp1).await.expect("version");
        assert_eq!(v.tag, "v1.11.3");
        assert_eq!(client.hostname(&cp1).await.expect("hostname"), "cp-1");
        assert_eq!(client.hostname(&w1).await.expect("hostname"), "w-1");

        let services = client.service_list(&cp1).await.expect("services");
        let etcd = services
            .iter()
            .find(|s| s.id == "etcd")
            .expect("etcd service");
        assert_eq!(etcd.state, "Running");

        let members = client.etcd_member_list(&cp1).await.expect("members");
        assert_eq!(members.len(), 3);
        let cp1_member = members
            .iter()
            .find(|m| m.hostname == "cp-1")
            .expect("cp-1 member");
        assert!(!cp1_member.is_learner);

        let status = client.etcd_status(&cp1).await.expect("etcd status");
        assert_eq!(status.member_id, cp1_member.id);
        assert_eq!(status.leader, cp1_member.id, "cp-1 leads in `healthy`");
        assert!(status.errors.is_empty());
        assert!(
            client
                .etcd_alarm_list(&cp1)
                .await
                .expect("alarms")
                .is_empty()
        );

        // workers have no etcd: an answer, not an outage
        match client.etcd_status(&w1).await {
            Err(TalosError::Rpc { node, .. }) => assert_eq!(node, w1),
            other => panic!("worker etcd status: {other:?}"),
        }

        let m = client.machine_status(&w1).await.expect("machine status");
        assert_eq!(m.stage, MachineStage::Running);
        assert!(m.ready, "{m:?}");

        let cluster = client.cluster_members(&cp1).await.expect("cluster members");
        assert_eq!(cluster.len(), 5);
        let w1_member = cluster.iter().find(|m| m.hostname == "w-1").expect("w-1");
        assert_eq!(w1_member.machine_type, "worker");
        assert!(w1_member.addresses.contains(&w1));
        assert_eq!(
            client
                .talos_version_resource(&w1)
                .await
                .expect("version resource"),
            "v1.11.3"
        );

        // a kind watch sends what exists, then the bootstrapped marker
        let mut kind = client
            .cosi_watch::<serde_json::Value>(&cp1, "cluster", "Members.cluster.talos.dev", None)
            .await
            .expect("kind watch");
        let mut existing = 0;
        loop {
            let ev = kind.next().await.expect("watch item").expect("watch event");
            match ev.kind {
                ResourceEventKind::Created => existing += 1,
                ResourceEventKind::Bootstrapped => break,
                other => panic!("unexpected {other:?} before bootstrap"),
            }
        }
        assert_eq!(existing, 5);

        let mut watch = client.watch_machine_status(&cp1).await.expect("watch");
        let first = watch.next().await.expect("first item").expect("status");
        assert_eq!(first.stage, MachineStage::Running);
    })
    .await;
    sim.fleet.shutdown().await;
}

/// Pulls the v1.13.1 installer on `node` with ImageService.Pull (`opened`: what the stream's
/// opening is expected to show) and returns the name the pull ends with.
async fn pulled_installer(
    client: &taloscope::talos::TalosClient,
    node: &str,
    opened: &str,
) -> Option<String> {
    let mut pull = client
        .image_pull(
            node,
            "ghcr.io/siderolabs/installer:v1.13.1",
            ImageNamespace::System,
        )
        .await
        .expect(opened);
    let mut pulled = None;
    while let Some(item) = pull.next().await {
        if let ImagePullProgress::Pulled { image_name } = item.expect("pull progress") {
            pulled = Some(image_name);
        }
    }
    pulled
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_actions_answer() {
    let mut s = scenario("healthy");
    // w-2 runs a Talos that has the lifecycle API
    s.clusters[0].nodes[4].talos_version = "v1.13.0".into();
    let sim = start(s).await;
    let client = sim.client("healthy");
    let cp1 = sim.address("healthy", 0);
    let w1 = sim.address("healthy", 3);
    let w2 = sim.address("healthy", 4);

    within(30, "actions", async {
        let before = client.etcd_status(&cp1).await.expect("status").leader;
        client
            .etcd_forfeit_leadership(&cp1)
            .await
            .expect("forfeit leadership");
        let after = client.etcd_status(&cp1).await.expect("status").leader;
        assert_ne!(before, after, "leadership moved away from cp-1");

        let running = client.machine_config(&w1).await.expect("machine config");
        let applied = client
            .apply_configuration(
                &w1,
                running.spec.as_bytes(),
                ApplyMode::NoReboot,
                true,
                None,
            )
            .await
            .expect("apply configuration");
        assert_eq!(applied.mode, AppliedMode::NoReboot);

        let image = pulled_installer(&client, &w2, "image pull")
            .await
            .expect("pull names the image");
        let mut upgrade = client
            .lifecycle_upgrade(&w2, &image, ImageNamespace::System)
            .await
            .expect("lifecycle upgrade");
        let mut exit = None;
        while let Some(item) = upgrade.next().await {
            if let UpgradeProgress::Exited(code) = item.expect("upgrade progress") {
                exit = Some(code);
            }
        }
        assert_eq!(exit, Some(0));

        let reboot = client
            .reboot(&w2, RebootMode::Default)
            .await
            .expect("reboot");
        assert!(!reboot.actor_id.is_empty());

        let legacy = client
            .upgrade(
                &w1,
                &LegacyUpgrade {
                    image: "ghcr.io/siderolabs/installer:v1.11.5".into(),
                    ..Default::default()
                },
            )
            .await
            .expect("legacy upgrade");
        assert!(!legacy.actor_id.is_empty());
    })
    .await;
    sim.fleet.shutdown().await;
}

/// AUTO, the mode taloscope asks for instead of the deprecated REBOOT: a 1.13 node answers
/// the mode it chose (NO_REBOOT for a change it can take at once), a 1.14 node answers NO_REBOOT
/// for every change (v1alpha1_server.go at v1.13.9 and v1.14.0-rc.1: `AUTO` sets `in.Mode` to
/// `NO_REBOOT`). The node's own running config, applied again as a dry run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_is_answered_as_each_version_applies_it() {
    for (name, answered) in [
        ("talos-1.13", AppliedMode::NoReboot),
        ("talos-1.14", AppliedMode::NoReboot),
    ] {
        let sim = start(scenario(name)).await;
        let client = sim.client(name);
        let w1 = sim.address(name, 3);
        let applied = within(20, "apply", async {
            let running = client.machine_config(&w1).await.expect("machine config");
            client
                .apply_configuration(&w1, running.spec.as_bytes(), ApplyMode::Auto, true, None)
                .await
                .expect("apply configuration")
        })
        .await;
        assert_eq!(applied.mode, answered, "{name}");
        assert!(
            applied.mode_details.contains("without a reboot"),
            "{name}: {}",
            applied.mode_details
        );
        sim.fleet.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reader_reads_but_may_not_act() {
    let sim = start(scenario("healthy")).await;
    let reader = sim.client("healthy-reader");
    let w1 = sim.address("healthy-reader", 3);
    assert_eq!(reader.roles().0, vec![Role::Reader]);
    assert!(!reader.roles().may_reboot() && !reader.roles().may_upgrade());

    within(20, "reader calls", async {
        assert_eq!(reader.version(&w1).await.expect("read").tag, "v1.11.3");
        for result in [
            reader.reboot(&w1, RebootMode::Default).await.map(|_| ()),
            reader
                .upgrade(&w1, &LegacyUpgrade::default())
                .await
                .map(|_| ()),
            reader
                .apply_configuration(&w1, b"", ApplyMode::Auto, false, None)
                .await
                .map(|_| ()),
        ] {
            match result {
                Err(e @ TalosError::PermissionDenied { .. }) => {
                    assert!(e.to_string().contains(&w1), "{e}");
                }
                other => panic!("reader was not refused: {other:?}"),
            }
        }
    })
    .await;
    sim.fleet.shutdown().await;
}

/// A client of `healthy` whose unary call timeout (1 ns) is far too short for any round trip
/// (tokio's timer rounds it up to about a millisecond).
fn impatient_client(sim: &talos_common::Sim) -> taloscope::talos::TalosClient {
    let options = taloscope::talos::ClientOptions {
        call_timeout: std::time::Duration::from_nanos(1),
        ..talos_common::fast()
    };
    taloscope::talos::TalosClient::new(&sim.context("healthy"), options).expect("client")
}

/// The legacy Upgrade is bound by its own long bound, not the unary call timeout: real Talos
/// pulls the installer before it answers. Under a call timeout far too short for a round trip
/// (tokio's timer rounds it up to about a millisecond) it still answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_upgrade_is_not_bound_by_the_unary_call_timeout() {
    let sim = start(scenario("healthy")).await;
    let client = impatient_client(&sim);
    let w1 = sim.address("healthy", 3);
    within(20, "legacy upgrade", async {
        let legacy = client
            .upgrade(
                &w1,
                &LegacyUpgrade {
                    image: "ghcr.io/siderolabs/installer:v1.11.5".into(),
                    ..Default::default()
                },
            )
            .await
            .expect("legacy upgrade under its own bound");
        assert!(!legacy.actor_id.is_empty());
    })
    .await;
    sim.fleet.shutdown().await;
}

/// Streams are opened under their own bound, not the unary call timeout: Talos sends a
/// stream's headers only with its first message (ImageService.Pull, here on a 1.13 node).
/// `MachineService.ImagePull` answers once the image is pulled, under the bound its caller
/// gives. Both work under a call timeout far too short for any round trip.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_pulls_are_not_bound_by_the_unary_call_timeout() {
    let mut s = scenario("healthy");
    s.clusters[0].nodes[4].talos_version = "v1.13.0".into();
    let sim = start(s).await;
    let client = impatient_client(&sim);
    let w1 = sim.address("healthy", 3);
    let w2 = sim.address("healthy", 4);
    within(20, "image pulls", async {
        client
            .machine_image_pull(
                &w1,
                "registry.k8s.io/kube-proxy:v1.34.2",
                ImageNamespace::Cri,
                std::time::Duration::from_secs(10),
            )
            .await
            .expect("MachineService.ImagePull under its own bound");
        let pulled = pulled_installer(
            &client,
            &w2,
            "the stream opens under the stream-opening bound",
        )
        .await;
        assert!(pulled.is_some(), "the pull names the image");
    })
    .await;
    sim.fleet.shutdown().await;
}
