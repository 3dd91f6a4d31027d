//! What the nodes pane's usage columns cost the nodes, counted by the sim: a 250-node cluster
//! (the first of the sim's `fleet` scenario) in a 200x50 console; the app names the rows that
//! can be on screen, the poller reads them, and after each refresh (driven by Refresh, the
//! intervals an hour) every visible node has served one usage call (`SystemStat`, `Memory`
//! or `Mounts`) per refresh so far and every other node none, while the columns keep each
//! figure between its reads.
mod talos_common;

use std::collections::HashMap;
use std::time::Duration;

use talos_common::{fast, scenario, start, within};
use taloscope::app::{Action, AppEvent, AppState, update, usage_request};
use taloscope::discovery::{Sources, discover};
use taloscope::fleet::{FleetEvent, PollerCommand, PollerOptions, spawn_poller};
use taloscope::node_resources::NodeUsage;
use tokio::sync::mpsc;

const CLUSTER: &str = "fleet-01";
const STAT: &str = "/machine.MachineService/SystemStat";
const MEMORY: &str = "/machine.MachineService/Memory";
const MOUNTS: &str = "/machine.MachineService/Mounts";

/// Each node's count of each usage method it served, by node name.
fn usage_calls(sim: &talos_common::Sim) -> HashMap<String, [u64; 3]> {
    let mut by_node: HashMap<String, [u64; 3]> = HashMap::new();
    for (call, count) in sim.fleet.state().served_calls() {
        let Some(i) = [STAT, MEMORY, MOUNTS]
            .iter()
            .position(|m| *m == call.method)
        else {
            continue;
        };
        if call.cluster == CLUSTER {
            by_node.entry(call.node).or_default()[i] += count;
        }
    }
    by_node
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_visible_node_serves_one_usage_call_per_refresh_and_the_others_none() {
    let mut fleet = scenario("fleet");
    fleet.clusters.truncate(1);
    let sim = start(fleet).await;
    let discovery = discover(&Sources {
        talosconfigs: vec![sim.fleet.talosconfig_path()],
        ..Default::default()
    });
    assert!(discovery.errors.is_empty(), "{:?}", discovery.errors);
    let clusters = discovery.clusters.clone();
    let mut app = AppState::new(discovery, false);
    update(&mut app, Action::Resize(200, 50));

    let hour = Duration::from_secs(3600);
    let options = PollerOptions {
        focused_interval: hour,
        background_interval: hour,
        client: fast(),
        max_concurrent_clusters: 1,
    };
    let (tx, mut rx) = mpsc::channel(4096);
    let poller = spawn_poller(clusters, None, options, tx);
    within(60, "the first round", async {
        loop {
            let event = rx.recv().await.expect("the poller is running");
            let finished = matches!(event, FleetEvent::PollFinished { .. });
            update(&mut app, Action::Event(AppEvent::Fleet(event)));
            if finished {
                break;
            }
        }
    })
    .await;
    assert_eq!(
        app.fleet.cluster(CLUSTER).map(|c| c.status.nodes.len()),
        Some(250)
    );

    update(&mut app, Action::OpenSelected);
    let Some(PollerCommand::ReadUsage { cluster, nodes }) = usage_request(&mut app) else {
        panic!("the nodes pane asks for the usage of its rows");
    };
    assert_eq!(cluster, CLUSTER);
    assert!(
        (20..=50).contains(&nodes.len()),
        "a screen of rows: {}",
        nodes.len()
    );
    let visible: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
    poller.send(PollerCommand::ReadUsage {
        cluster: cluster.clone(),
        nodes,
    });

    let mut reports: HashMap<String, usize> = HashMap::new();
    let mut last: HashMap<String, NodeUsage> = HashMap::new();
    for refresh in 1..=4usize {
        if refresh > 1 {
            poller.send(PollerCommand::Refresh(cluster.clone()));
        }
        within(
            60,
            &format!("refresh {refresh} of the visible nodes"),
            async {
                while !visible.iter().all(|n| reports.get(n) == Some(&refresh)) {
                    let event = rx.recv().await.expect("the poller is running");
                    if let FleetEvent::NodeUsage { usage, .. } = event {
                        assert!(
                            visible.contains(&usage.node),
                            "{} is off screen",
                            usage.node
                        );
                        *reports.entry(usage.node.clone()).or_default() += 1;
                        last.insert(usage.node.clone(), usage);
                    }
                }
            },
        )
        .await;
        let calls = usage_calls(&sim);
        for node in &visible {
            let [stat, memory, mounts] = calls.get(node).copied().unwrap_or_default();
            assert_eq!(
                stat + memory + mounts,
                refresh as u64,
                "{node} after refresh {refresh}: {stat} SystemStat, {memory} Memory, {mounts} Mounts"
            );
        }
        let off_screen: Vec<_> = calls.keys().filter(|n| !visible.contains(n)).collect();
        assert!(off_screen.is_empty(), "read off screen: {off_screen:?}");
    }
    // Two CPU samples, one memory and one disk reading each: every figure is shown.
    for node in &visible {
        assert_eq!(usage_calls(&sim)[node], [2, 1, 1], "{node}");
        let usage = &last[node];
        assert!(usage.error.is_none(), "{usage:?}");
        assert!(
            usage.cpu_percent.is_some()
                && usage.memory_percent.is_some()
                && usage.disk_percent.is_some(),
            "{usage:?}"
        );
    }
    within(5, "shutdown", poller.shutdown()).await;
    sim.fleet.shutdown().await;
}
