//! The version-faithful upgrade and image surface: the `talos-1.NN` scenarios, the legacy
//! Upgrade that pulls under the caller's deadline before it acks, MachineService ImagePull on
//! every version, ImageService and LifecycleService from 1.13 only, and containerd instances.
mod sim_common;

use std::time::{Duration, Instant};

use sim_common::{
    channel, document_of, machine, scenario_from_yaml, start, start_builtin, with_meta,
};
use taloscope_proto::common::{ContainerDriver, ContainerdInstance, ContainerdNamespace};
use taloscope_proto::machine::image_service_client::ImageServiceClient;
use taloscope_proto::machine::lifecycle_service_client::LifecycleServiceClient;
use taloscope_proto::machine::reboot_request::Mode as RebootMode;
use taloscope_proto::machine::{
    EventsRequest, ImagePullRequest, ImageServicePullRequest, InstallArtifactsSource,
    LifecycleServiceUpgradeRequest, PhaseEvent, RebootRequest, UpgradeRequest, phase_event,
};
use taloscope_sim::Scenario;
use tonic::Code;

const CP1: &str = "127.10.0.1";
const W1: &str = "127.10.0.4";

fn system() -> Option<ContainerdInstance> {
    Some(ContainerdInstance {
        driver: ContainerDriver::Cri as i32,
        namespace: ContainerdNamespace::NsSystem as i32,
    })
}

/// One cluster like `healthy` at `talos`, whose pulls take `pull_ms` simulated milliseconds.
fn scenario(talos: &str, pull_ms: u64) -> Scenario {
    let text = format!(
        "clusters:\n  - name: c\n    talos_version: {talos}\n    image_pull_ms: {pull_ms}\n    nodes:\n      - name: cp-1\n        role: controlplane\n      - name: cp-2\n        role: controlplane\n      - name: cp-3\n        role: controlplane\n      - name: w-1\n        role: worker\n"
    );
    scenario_from_yaml("c", &text)
}

#[tokio::test]
async fn versioned_scenarios_run_their_talos_and_a_supported_kubernetes() {
    for (name, talos, kube) in [
        ("talos-1.10", "v1.10.7", "v1.33.5"),
        ("talos-1.11", "v1.11.3", "v1.34.1"),
        ("talos-1.12", "v1.12.0", "v1.35.0"),
        ("talos-1.13", "v1.13.0", "v1.35.0"),
    ] {
        let s = Scenario::builtin(name).expect(name);
        assert_eq!(s.clusters[0].nodes.len(), 5, "{name}");
        assert_eq!(s.clusters[0].etcd_members, vec![0, 1, 2], "{name}");
        for n in &s.clusters[0].nodes {
            assert_eq!(
                (n.talos_version.as_str(), n.kubernetes_version.as_str()),
                (talos, kube)
            );
        }
    }
    let sim = start_builtin("talos-1.13", 50.0).await;
    let ctx = sim.context("talos-1.13");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let v = client.version(()).await.expect("version").into_inner();
    assert_eq!(v.messages[0].version.as_ref().unwrap().tag, "v1.13.0");
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn legacy_upgrade_acks_only_after_the_pull_and_an_already_pulled_image_is_quick() {
    // 2 simulated seconds of pull at scale 1: the ack cannot come sooner.
    let sim = start(scenario("v1.12.0", 2_000), 1.0).await;
    let ctx = sim.context("c");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let image = "ghcr.io/siderolabs/installer:v1.12.1";
    let started = Instant::now();
    let mut req = with_meta(
        UpgradeRequest {
            image: image.into(),
            ..UpgradeRequest::default()
        },
        "node",
        W1,
    );
    req.set_timeout(Duration::from_secs(30));
    let ack = client.upgrade(req).await.expect("upgrade").into_inner();
    assert_eq!(ack.messages[0].ack, "Upgrade request received");
    assert!(started.elapsed() >= Duration::from_millis(1_900));
    assert_eq!(sim.fleet.state().upgrade_calls("c", "w-1"), 1);

    let again = Instant::now();
    client
        .image_pull(with_meta(
            ImagePullRequest {
                namespace: ContainerdNamespace::NsSystem as i32,
                reference: image.into(),
            },
            "node",
            W1,
        ))
        .await
        .expect("already pulled");
    assert!(again.elapsed() < Duration::from_millis(1_500));
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn a_caller_deadline_shorter_than_the_pull_gets_deadline_exceeded_and_no_upgrade() {
    let sim = start(scenario("v1.12.0", 10_000), 1.0).await;
    let ctx = sim.context("c");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let mut req = with_meta(
        UpgradeRequest {
            image: "ghcr.io/siderolabs/installer:v1.12.1".into(),
            ..UpgradeRequest::default()
        },
        "node",
        CP1,
    );
    // The deadline travels as `grpc-timeout`; the server gives up the pull when it lapses.
    req.set_timeout(Duration::from_millis(300));
    let err = tokio::time::timeout(Duration::from_secs(5), client.upgrade(req))
        .await
        .expect("answered at the deadline, not after the pull")
        .expect_err("deadline lapses");
    // tonic enforces the same deadline on the client side, so whichever side notices first
    // answers: the server's DeadlineExceeded or the client's own Cancelled("Timeout expired").
    assert!(
        matches!(err.code(), Code::DeadlineExceeded | Code::Cancelled),
        "{err:?}"
    );
    assert_eq!(sim.fleet.state().upgrade_calls("c", "cp-1"), 0);
    assert!(sim.fleet.state().upgrade_record().is_empty());
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn legacy_upgrade_is_still_served_on_1_13() {
    let sim = start(scenario("v1.13.0", 100), 50.0).await;
    let ctx = sim.context("c");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let ack = client
        .upgrade(with_meta(
            UpgradeRequest {
                image: "ghcr.io/siderolabs/installer:v1.13.1".into(),
                ..UpgradeRequest::default()
            },
            "node",
            W1,
        ))
        .await
        .expect("deprecated, not removed before v1.18")
        .into_inner();
    assert_eq!(ack.messages[0].ack, "Upgrade request received");
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn image_pull_is_served_on_every_version_and_image_service_from_1_13() {
    for (talos, image_service) in [("v1.10.7", false), ("v1.12.0", false), ("v1.13.0", true)] {
        let sim = start(scenario(talos, 100), 50.0).await;
        let ctx = sim.context("c");
        let mut client = machine(&ctx, &ctx.endpoints[0]).await;
        client
            .image_pull(ImagePullRequest {
                namespace: ContainerdNamespace::NsCri as i32,
                reference: "registry.k8s.io/pause:3.10".into(),
            })
            .await
            .unwrap_or_else(|e| panic!("ImagePull on {talos}: {e:?}"));
        let unknown = client
            .image_pull(ImagePullRequest {
                namespace: ContainerdNamespace::NsUnknown as i32,
                reference: "registry.k8s.io/pause:3.10".into(),
            })
            .await
            .expect_err("no namespace");
        assert_eq!(unknown.code(), Code::InvalidArgument);
        let mut images = ImageServiceClient::new(channel(&ctx, &ctx.endpoints[0]).await.unwrap());
        let pulled = images
            .pull(ImageServicePullRequest {
                containerd: system(),
                image_ref: "ghcr.io/siderolabs/installer:v1.13.1".into(),
            })
            .await;
        match (image_service, pulled) {
            (true, Ok(_)) => {}
            (false, Err(e)) => assert_eq!(e.code(), Code::Unimplemented),
            (_, other) => panic!("ImageService on {talos}: {other:?}"),
        }
        sim.fleet.shutdown().await;
    }
}

#[tokio::test]
async fn containerd_driver_with_the_cri_namespace_is_refused() {
    let sim = start(scenario("v1.13.0", 100), 50.0).await;
    let ctx = sim.context("c");
    let mut images = ImageServiceClient::new(channel(&ctx, &ctx.endpoints[0]).await.unwrap());
    let err = images
        .pull(ImageServicePullRequest {
            containerd: Some(ContainerdInstance {
                driver: ContainerDriver::Containerd as i32,
                namespace: ContainerdNamespace::NsCri as i32,
            }),
            image_ref: "ghcr.io/siderolabs/installer:v1.13.1".into(),
        })
        .await
        .expect_err("refused");
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "cannot use CRI namespace with containerd driver"
    );
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn streams_open_with_their_first_message_and_lifecycle_needs_a_pulled_image() {
    let sim = start(scenario("v1.13.0", 6_000), 1.0).await;
    let ctx = sim.context("c");
    let ch = channel(&ctx, &ctx.endpoints[0]).await.unwrap();
    let mut images = ImageServiceClient::new(ch.clone());
    let mut lifecycle = LifecycleServiceClient::new(ch);
    let image = "ghcr.io/siderolabs/installer:v1.13.1";
    let upgrade_request = || LifecycleServiceUpgradeRequest {
        containerd: system(),
        source: Some(InstallArtifactsSource {
            image_name: image.into(),
        }),
    };
    let missing = lifecycle
        .upgrade(upgrade_request())
        .await
        .expect_err("not pulled yet");
    assert_eq!(missing.code(), Code::Internal);
    assert!(missing.message().contains("not found in containerd store"));

    // The first progress message comes a sixth of the pull (1 s) in: a 200 ms bound on opening
    // the stream lapses before the headers arrive.
    let opening = tokio::time::timeout(
        Duration::from_millis(200),
        images.pull(ImageServicePullRequest {
            containerd: system(),
            image_ref: image.into(),
        }),
    )
    .await;
    assert!(opening.is_err(), "stream opened before its first message");
    assert_eq!(sim.fleet.state().upgrade_calls("c", "cp-1"), 0);
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn machine_config_is_a_mapping_up_to_1_11_and_a_string_from_1_12() {
    use taloscope_proto::cosi::resource::GetRequest;
    use taloscope_proto::cosi::resource::state_client::StateClient;
    for (talos, as_string) in [("v1.11.3", false), ("v1.12.0", true)] {
        let sim = start(scenario(talos, 100), 50.0).await;
        let ctx = sim.context("c");
        let mut state = StateClient::new(channel(&ctx, &ctx.endpoints[0]).await.unwrap());
        let get = |ns: &str| GetRequest {
            namespace: ns.into(),
            r#type: "MachineConfigs.config.talos.dev".into(),
            id: "v1alpha1".into(),
            options: None,
        };
        let r = state
            .get(get("config"))
            .await
            .expect("config")
            .into_inner()
            .resource
            .expect("resource");
        let spec = r.spec.expect("spec");
        let annotated = r
            .metadata
            .expect("metadata")
            .annotations
            .contains_key("talos.dev/yaml-spec");
        assert_eq!(annotated, as_string, "{talos}");
        let document = document_of(&spec.proto_spec);
        assert!(document.contains("machine:"), "{talos}: {document}");
        if as_string {
            let text: String = serde_saphyr::from_str(&spec.yaml_spec).expect("a YAML string");
            assert_eq!(text, document);
        } else {
            assert_eq!(
                spec.yaml_spec, document,
                "{talos}: the spec is the document"
            );
        }
        let elsewhere = state.get(get("runtime")).await.expect_err("not there");
        assert_eq!(elsewhere.code(), Code::NotFound, "{talos}");
        let unknown = state
            .get(get("nowhere"))
            .await
            .expect_err("no such namespace");
        assert_eq!(unknown.code(), Code::PermissionDenied, "{talos}");
        assert_eq!(unknown.message(), "namespace \"nowhere\" is not supported");
        sim.fleet.shutdown().await;
    }
}

/// The phases a reboot with `mode` runs on a `talos` node, read from its Events stream.
async fn reboot_phases(talos: &str, mode: RebootMode) -> Vec<String> {
    use prost::Message;
    use tokio_stream::StreamExt;
    let sim = start(scenario(talos, 100), 50.0).await;
    let ctx = sim.context("c");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let mut events = client
        .events(with_meta(EventsRequest::default(), "node", W1))
        .await
        .expect("events")
        .into_inner();
    // The stream's first event is an empty hello.
    let _ = events.next().await;
    client
        .reboot(with_meta(RebootRequest { mode: mode as i32 }, "node", W1))
        .await
        .expect("reboot");
    let mut phases = Vec::new();
    // machined stops before the reboot: the stream ends.
    while let Some(Ok(e)) = tokio::time::timeout(Duration::from_secs(20), events.next())
        .await
        .expect("stream ends in time")
    {
        let Some(data) = e.data else { continue };
        if data.type_url.ends_with("machine.PhaseEvent")
            && let Ok(p) = PhaseEvent::decode(data.value.as_slice())
            && p.action == phase_event::Action::Start as i32
        {
            phases.push(p.phase);
        }
    }
    sim.fleet.shutdown().await;
    phases
}

#[tokio::test]
async fn force_reboot_skips_the_stop_phases_from_1_12_only() {
    assert_eq!(
        reboot_phases("v1.12.0", RebootMode::Force).await,
        ["reboot"]
    );
    let before = reboot_phases("v1.11.3", RebootMode::Force).await;
    assert!(
        before.len() > 1 && before.contains(&"stopServices".to_string()),
        "v1.11 knows no FORCE: {before:?}"
    );
}
