//! The other built-in scenarios (`demo`, `mixed`), the Events stream fanned out with `nodes`,
//! and a COSI MachineStatus watch following a reboot.
mod sim_common;

use std::time::Duration;

use sim_common::{machine, start_builtin, with_meta};
use taloscope_proto::cosi::resource::WatchRequest;
use taloscope_proto::cosi::resource::state_client::StateClient;
use taloscope_proto::machine::{EventsRequest, RebootRequest};
use tokio_stream::StreamExt;

const LIMIT: Duration = Duration::from_secs(20);

#[tokio::test]
async fn demo_has_three_clusters_of_different_health() {
    let sim = start_builtin("demo", 100.0).await;
    let names: Vec<_> = sim.config.contexts.keys().cloned().collect();
    assert_eq!(
        names,
        [
            "edge",
            "edge-reader",
            "prod",
            "prod-reader",
            "staging",
            "staging-reader"
        ]
    );
    let state = sim.fleet.state();
    let staging = state.cluster("staging").expect("staging");
    assert!(!staging.node("w-2").expect("w-2").status().up);
    let edge = sim.context("edge");
    assert_eq!(edge.nodes, ["127.10.2.1", "127.10.2.2"]);
    let mut client = machine(&edge, &edge.endpoints[0]).await;
    let alarms = client
        .etcd_alarm_list(())
        .await
        .expect("alarms")
        .into_inner();
    assert_eq!(alarms.messages[0].member_alarms.len(), 1);
    let prod = sim.context("prod");
    let mut client = machine(&prod, &prod.endpoints[2]).await;
    let all = client
        .version(with_meta((), "nodes", &prod.nodes.join(",")))
        .await
        .expect("versions")
        .into_inner();
    assert!(
        all.messages
            .iter()
            .all(|m| m.metadata.as_ref().is_some_and(|md| md.error.is_empty()))
    );
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn mixed_leaves_one_worker_on_an_older_minor() {
    let sim = start_builtin("mixed", 100.0).await;
    let ctx = sim.context("mixed");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let all = client
        .version(with_meta((), "nodes", &ctx.nodes.join(",")))
        .await
        .expect("versions")
        .into_inner();
    let tags: Vec<_> = all
        .messages
        .iter()
        .map(|m| m.version.as_ref().expect("version").tag.as_str())
        .collect();
    assert_eq!(
        tags,
        ["v1.11.3", "v1.11.3", "v1.11.3", "v1.11.3", "v1.10.7"]
    );
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn events_fan_out_with_nodes_and_report_the_down_node() {
    let sim = start_builtin("cp2-down", 100.0).await;
    let ctx = sim.context("cp2-down-reader");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let mut stream = client
        .events(with_meta(
            EventsRequest {
                tail_events: 1,
                ..EventsRequest::default()
            },
            "nodes",
            "127.10.0.1,127.10.0.2,127.10.0.4",
        ))
        .await
        .expect("events")
        .into_inner();
    let mut hellos = Vec::new();
    let mut errors = Vec::new();
    let mut tails = Vec::new();
    while hellos.len() + errors.len() + tails.len() < 5 {
        let e = tokio::time::timeout(LIMIT, stream.next())
            .await
            .expect("events in time")
            .expect("open")
            .expect("ok");
        let md = e.metadata.clone().expect("metadata on fanned-out events");
        if !md.error.is_empty() {
            errors.push(md.hostname);
        } else if e.data.is_none() {
            hellos.push(md.hostname);
        } else {
            assert!(
                e.data
                    .as_ref()
                    .expect("data")
                    .type_url
                    .starts_with("talos/runtime/machine.")
            );
            tails.push(md.hostname);
        }
    }
    hellos.sort();
    tails.sort();
    assert_eq!(hellos, ["127.10.0.1", "127.10.0.4"]);
    assert_eq!(
        tails,
        ["127.10.0.1", "127.10.0.4"],
        "tail_events=1 replays one event each"
    );
    assert_eq!(errors, ["127.10.0.2"]);
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn machine_status_watch_follows_a_reboot_until_the_node_goes_away() {
    let sim = start_builtin("healthy", 50.0).await;
    let ctx = sim.context("healthy");
    let channel = sim_common::channel(&ctx, &ctx.endpoints[0])
        .await
        .expect("channel");
    let mut state = StateClient::new(channel);
    let mut watch = state
        .watch(with_meta(
            WatchRequest {
                namespace: "runtime".into(),
                r#type: "MachineStatuses.runtime.talos.dev".into(),
                id: Some("machine".into()),
                options: None,
                api_version: 1,
            },
            "node",
            "127.10.0.5",
        ))
        .await
        .expect("watch")
        .into_inner();
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    client
        .reboot(with_meta(RebootRequest::default(), "node", "127.10.0.5"))
        .await
        .expect("reboot");
    let mut specs = Vec::new();
    loop {
        match tokio::time::timeout(LIMIT, watch.next())
            .await
            .expect("bounded")
        {
            None => break,
            Some(Err(status)) => panic!("watch failed instead of ending: {status:?}"),
            Some(Ok(resp)) => {
                for e in resp.event {
                    if let Some(spec) = e.resource.and_then(|r| r.spec) {
                        specs.push(spec.yaml_spec);
                    }
                }
            }
        }
    }
    assert!(specs[0].starts_with("stage: running"), "{specs:?}");
    assert!(
        specs
            .iter()
            .any(|s| s.starts_with("stage: rebooting") && s.contains("ready: false")),
        "{specs:?}"
    );
    sim.fleet.shutdown().await;
}
