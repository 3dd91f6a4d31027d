//! Node lifecycle at a high time scale: a reboot takes apid away and brings it back with a new
//! boot; the Events stream (hello event first, `talos/runtime/machine.*` payloads) ends on the
//! reboot and a reconnect with tail_events=-1 replays the new boot; legacy and ≥1.13 upgrades.
mod sim_common;

use std::time::Duration;

use prost::Message;
use sim_common::{machine, scenario_from_yaml, start, start_builtin, wait_for, with_meta};
use taloscope_proto::common::{ContainerDriver, ContainerdInstance, ContainerdNamespace};
use taloscope_proto::machine::image_service_client::ImageServiceClient;
use taloscope_proto::machine::lifecycle_service_client::LifecycleServiceClient;
use taloscope_proto::machine::{
    Event, EventsRequest, ImageServicePullRequest, InstallArtifactsSource,
    LifecycleServiceUpgradeRequest, RebootRequest, SequenceEvent, UpgradeRequest,
    image_service_pull_response, lifecycle_service_install_progress,
};
use tokio_stream::StreamExt;
use tonic::Code;
use tonic::transport::Channel;

const LIMIT: Duration = Duration::from_secs(20);

async fn version_of(
    client: &mut taloscope_proto::machine::machine_service_client::MachineServiceClient<Channel>,
    node: &str,
) -> Result<String, tonic::Status> {
    let v = client
        .version(with_meta((), "node", node))
        .await?
        .into_inner();
    Ok(v.messages[0]
        .version
        .as_ref()
        .map(|v| v.tag.clone())
        .unwrap_or_default())
}

async fn collect_until_end(stream: &mut tonic::Streaming<Event>) -> Vec<Event> {
    let mut out = Vec::new();
    loop {
        match tokio::time::timeout(LIMIT, stream.next()).await {
            Err(_) => panic!("events stream did not end within {LIMIT:?}"),
            Ok(None) => return out,
            Ok(Some(Ok(e))) => out.push(e),
            Ok(Some(Err(status))) => panic!("stream failed instead of EOF: {status:?}"),
        }
    }
}

fn all_events() -> EventsRequest {
    EventsRequest {
        tail_events: -1,
        ..EventsRequest::default()
    }
}

#[tokio::test]
async fn reboot_takes_the_node_away_and_the_event_stream_resumes_on_the_new_boot() {
    let sim = start_builtin("healthy", 50.0).await;
    let ctx = sim.context("healthy");
    let w1 = "127.10.0.4";
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let state = sim.fleet.state();
    let node = state.clusters()[0].node("w-1").expect("w-1").clone();
    let first_boot = node.status().boot_id;

    let mut events = client
        .events(with_meta(EventsRequest::default(), "node", w1))
        .await
        .expect("events")
        .into_inner();
    let hello = tokio::time::timeout(LIMIT, events.next())
        .await
        .expect("hello in time")
        .expect("open")
        .expect("ok");
    assert!(
        hello.data.is_none() && hello.id.is_empty(),
        "first event is empty"
    );

    let reboot = client
        .reboot(with_meta(RebootRequest::default(), "node", w1))
        .await
        .expect("reboot")
        .into_inner();
    let actor = reboot.messages[0].actor_id.clone();
    assert!(!actor.is_empty());

    let seen = collect_until_end(&mut events).await;
    assert!(!seen.is_empty());
    assert!(seen.iter().all(|e| e.actor_id == actor));
    for e in &seen {
        let data = e.data.as_ref().expect("payload");
        assert!(
            data.type_url.starts_with("talos/runtime/machine."),
            "{}",
            data.type_url
        );
    }
    let ids: Vec<_> = seen.iter().map(|e| e.id.clone()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "event ids sort by time");
    let first = SequenceEvent::decode(seen[0].data.as_ref().expect("data").value.as_slice())
        .expect("sequence event");
    assert_eq!(first.sequence, "reboot");

    wait_for("w-1 unreachable", LIMIT, || {
        let mut c = client.clone();
        async move {
            match version_of(&mut c, w1).await {
                Err(s) if s.code() == Code::Unavailable => Some(()),
                _ => None,
            }
        }
    })
    .await;
    wait_for("w-1 back", LIMIT, || {
        let mut c = client.clone();
        async move { version_of(&mut c, w1).await.ok() }
    })
    .await;
    assert_ne!(node.status().boot_id, first_boot);

    let mut replay = client
        .events(with_meta(all_events(), "node", w1))
        .await
        .expect("events after reboot")
        .into_inner();
    let hello = replay.next().await.expect("hello").expect("ok");
    assert!(hello.data.is_none());
    let boot = replay.next().await.expect("first event").expect("ok");
    let seq = SequenceEvent::decode(boot.data.as_ref().expect("data").value.as_slice())
        .expect("sequence");
    assert_eq!(
        seq.sequence, "boot",
        "the new boot's buffer starts with its boot sequence"
    );
    assert!(
        boot.id > *ids.last().expect("ids"),
        "ids keep increasing across boots"
    );
    wait_for("w-1 ready", LIMIT, || {
        let ready = node.status().ready;
        async move { ready.then_some(()) }
    })
    .await;
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn legacy_upgrade_brings_the_node_back_on_the_new_version() {
    let sim = start_builtin("healthy", 50.0).await;
    let ctx = sim.context("healthy");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let cp3 = "127.10.0.3";
    let ack = client
        .upgrade(with_meta(
            UpgradeRequest {
                image: "ghcr.io/siderolabs/installer:v1.11.5".into(),
                ..UpgradeRequest::default()
            },
            "node",
            cp3,
        ))
        .await
        .expect("healthy etcd: upgrade accepted")
        .into_inner();
    assert_eq!(ack.messages[0].ack, "Upgrade request received");
    wait_for("cp-3 on v1.11.5", LIMIT, || {
        let mut c = client.clone();
        async move { (version_of(&mut c, cp3).await.ok()? == "v1.11.5").then_some(()) }
    })
    .await;
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn lifecycle_upgrade_stages_and_a_reboot_applies_it() {
    let text = "clusters:\n  - name: new\n    talos_version: v1.13.0\n    nodes:\n      - name: cp-1\n        role: controlplane\n      - name: w-1\n        role: worker\n      - name: w-2\n        role: worker\n        talos_version: v1.12.4\n";
    let sim = start(scenario_from_yaml("new", text), 50.0).await;
    let ctx = sim.context("new");
    let channel = sim_common::channel(&ctx, &ctx.endpoints[0])
        .await
        .expect("channel");
    let mut images = ImageServiceClient::new(channel.clone());
    let mut lifecycle = LifecycleServiceClient::new(channel.clone());
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let image = "ghcr.io/siderolabs/installer:v1.13.1";
    let w1 = "127.10.0.2";

    let mut pull = images
        .pull(with_meta(
            ImageServicePullRequest {
                containerd: Some(ContainerdInstance {
                    driver: ContainerDriver::Cri as i32,
                    namespace: ContainerdNamespace::NsSystem as i32,
                }),
                image_ref: image.into(),
            },
            "node",
            w1,
        ))
        .await
        .expect("pull")
        .into_inner();
    let mut progress = 0;
    let mut name = None;
    while let Some(msg) = tokio::time::timeout(LIMIT, pull.next())
        .await
        .expect("bounded")
    {
        match msg.expect("ok").response {
            Some(image_service_pull_response::Response::PullProgress(_)) => progress += 1,
            Some(image_service_pull_response::Response::Name(n)) => name = Some(n),
            None => {}
        }
    }
    assert!(progress > 0);
    assert_eq!(name.as_deref(), Some(image));

    let mut upgrade = lifecycle
        .upgrade(with_meta(
            LifecycleServiceUpgradeRequest {
                containerd: Some(ContainerdInstance {
                    driver: ContainerDriver::Cri as i32,
                    namespace: ContainerdNamespace::NsSystem as i32,
                }),
                source: Some(InstallArtifactsSource {
                    image_name: image.into(),
                }),
            },
            "node",
            w1,
        ))
        .await
        .expect("lifecycle upgrade")
        .into_inner();
    let mut messages = 0;
    let mut exit = None;
    while let Some(msg) = tokio::time::timeout(LIMIT, upgrade.next())
        .await
        .expect("bounded")
    {
        match msg.expect("ok").progress.and_then(|p| p.response) {
            Some(lifecycle_service_install_progress::Response::Message(_)) => messages += 1,
            Some(lifecycle_service_install_progress::Response::ExitCode(c)) => exit = Some(c),
            None => {}
        }
    }
    assert!(messages > 0);
    assert_eq!(exit, Some(0));
    assert_eq!(
        version_of(&mut client, w1).await.expect("still up"),
        "v1.13.0"
    );

    client
        .reboot(with_meta(RebootRequest::default(), "node", w1))
        .await
        .expect("reboot");
    wait_for("w-1 on v1.13.1", LIMIT, || {
        let mut c = client.clone();
        async move { (version_of(&mut c, w1).await.ok()? == "v1.13.1").then_some(()) }
    })
    .await;

    let old = images
        .pull(with_meta(
            ImageServicePullRequest {
                containerd: Some(ContainerdInstance {
                    driver: ContainerDriver::Cri as i32,
                    namespace: ContainerdNamespace::NsSystem as i32,
                }),
                image_ref: image.into(),
            },
            "node",
            "127.10.0.3",
        ))
        .await
        .expect_err("w-2 is below 1.13");
    assert_eq!(old.code(), Code::Unimplemented);
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn a_node_that_never_returns_stays_down() {
    let text = "clusters:\n  - name: gone\n    nodes:\n      - name: cp-1\n        role: controlplane\n      - name: w-1\n        role: worker\n        faults:\n          never_returns_after_reboot: true\n";
    let sim = start(scenario_from_yaml("gone", text), 100.0).await;
    let ctx = sim.context("gone");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    client
        .reboot(with_meta(RebootRequest::default(), "node", "127.10.0.2"))
        .await
        .expect("reboot");
    let state = sim.fleet.state();
    let node = state.clusters()[0].node("w-1").expect("w-1").clone();
    let mut status = node.subscribe();
    tokio::time::timeout(LIMIT, status.wait_for(|s| !s.up))
        .await
        .expect("goes down in time")
        .expect("watch open");
    // Three times the reboot's down time (20 simulated s at 100x = 200 ms).
    tokio::time::sleep(sim.fleet.clock().real(60.0)).await;
    let err = version_of(&mut client, "127.10.0.2")
        .await
        .expect_err("still down");
    assert_eq!(err.code(), Code::Unavailable);
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn a_rebooted_endpoint_comes_back_on_the_same_port() {
    let sim = start_builtin("single-cp", 50.0).await;
    let ctx = sim.context("single-cp");
    let endpoint = ctx.endpoints[0].clone();
    let mut client = machine(&ctx, &endpoint).await;
    let state = sim.fleet.state();
    let cp1 = state.clusters()[0].node("cp-1").expect("cp-1").clone();
    let first = cp1.status();
    client
        .reboot(RebootRequest::default())
        .await
        .expect("reboot the endpoint itself");
    let mut status = cp1.subscribe();
    tokio::time::timeout(LIMIT, status.wait_for(|s| !s.up))
        .await
        .expect("goes down in time")
        .expect("watch open");
    assert!(
        sim_common::channel(&ctx, &endpoint).await.is_err(),
        "refused while down"
    );
    tokio::time::timeout(LIMIT, status.wait_for(|s| s.ready && s.boot > first.boot))
        .await
        .expect("back in time")
        .expect("watch open");
    assert_eq!(cp1.status().port, first.port);
    assert_eq!(cp1.endpoint(), endpoint);
    // The same channel reconnects on its own.
    wait_for("the old channel answers again", LIMIT, || {
        let mut c = client.clone();
        async move { c.hostname(()).await.ok() }
    })
    .await;
    sim.fleet.shutdown().await;
}
