//! The live-data poller against the in-process sim: a round streams every
//! node, etcd and PollFinished; a slow or dead node does not hold the others
//! back; a cluster whose endpoint accepts TCP and never answers does not hold
//! the other clusters back; Focus and Refresh start rounds at once; WatchNode
//! follows services and machine events across a reboot; UseContext switches
//! the context from the next round; ReadConfigDrift marks each node's configuration
//! against its role's once the cluster is on screen, and nothing through a reader;
//! Shutdown ends every task.
mod talos_common;

use std::collections::HashMap;
use std::time::Duration;

use talos_common::{Sim, fast, scenario, start, within};
use taloscope::discovery::{Cluster, KubeContext, Sources, discover};
use taloscope::fleet::{FleetEvent, PollerCommand, PollerHandle, PollerOptions, spawn_poller};
use taloscope::talos::{ClientOptions, MachineStage, RebootMode};
use tokio::sync::mpsc;

fn clusters(sim: &Sim, names: &[&str]) -> Vec<Cluster> {
    let discovery = discover(&Sources {
        talosconfigs: vec![sim.fleet.talosconfig_path()],
        ..Default::default()
    });
    assert!(discovery.errors.is_empty(), "{:?}", discovery.errors);
    let found: Vec<Cluster> = discovery
        .clusters
        .into_iter()
        .filter(|c| names.contains(&c.name.as_str()))
        .collect();
    assert_eq!(found.len(), names.len(), "clusters {names:?} in the sim");
    found
}

fn options(focused_ms: u64, background_ms: u64, client: ClientOptions) -> PollerOptions {
    PollerOptions {
        focused_interval: Duration::from_millis(focused_ms),
        background_interval: Duration::from_millis(background_ms),
        client,
        max_concurrent_clusters: 4,
    }
}

fn spawn(
    clusters: Vec<Cluster>,
    options: PollerOptions,
) -> (PollerHandle, mpsc::Receiver<FleetEvent>) {
    let (tx, rx) = mpsc::channel(1024);
    (spawn_poller(clusters, None, options, tx), rx)
}

async fn next(rx: &mut mpsc::Receiver<FleetEvent>) -> FleetEvent {
    rx.recv().await.expect("the poller is still sending")
}

/// Every event of one round of `cluster`, up to and including its PollFinished.
async fn one_round(rx: &mut mpsc::Receiver<FleetEvent>, cluster: &str) -> Vec<FleetEvent> {
    let mut round = Vec::new();
    loop {
        let ev = next(rx).await;
        if ev.cluster() != cluster {
            continue;
        }
        let finished = matches!(ev, FleetEvent::PollFinished { .. });
        round.push(ev);
        if finished {
            return round;
        }
    }
}

fn node_events(round: &[FleetEvent]) -> HashMap<String, taloscope::fleet::NodeStatus> {
    round
        .iter()
        .filter_map(|e| match e {
            FleetEvent::Node { node, .. } => Some((node.name.clone(), node.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_streams_every_node_then_etcd_and_finishes() {
    let sim = start(scenario("healthy")).await;
    let (poller, mut rx) = spawn(clusters(&sim, &["healthy"]), options(300, 60_000, fast()));
    let round = within(20, "the first round", one_round(&mut rx, "healthy")).await;

    assert!(
        matches!(round[0], FleetEvent::PollStarted { .. }),
        "{round:?}"
    );
    let info = round.iter().find_map(|e| match e {
        FleetEvent::ClusterInfo { role, error, .. } => Some((role.clone(), error.clone())),
        _ => None,
    });
    assert_eq!(info, Some(("os:admin".to_string(), None)));
    let nodes = node_events(&round);
    let mut names: Vec<&str> = nodes.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(names, ["cp-1", "cp-2", "cp-3", "w-1", "w-2"]);
    for n in nodes.values() {
        assert!(n.error.is_none() && n.ready, "{n:?}");
        assert_eq!(n.talos_version.as_deref(), Some("v1.11.3"));
    }
    let etcd = round
        .iter()
        .find_map(|e| match e {
            FleetEvent::Etcd { etcd, .. } => Some(etcd.clone()),
            _ => None,
        })
        .expect("an etcd report in the round");
    assert_eq!(etcd.members.len(), 3);
    assert!(etcd.members.iter().all(|m| m.healthy), "{etcd:?}");
    assert_eq!((etcd.quorum.healthy, etcd.quorum.tolerates), (3, 1));
    // No kube context: no Kubernetes report.
    assert!(
        !round
            .iter()
            .any(|e| matches!(e, FleetEvent::Kubernetes { .. }))
    );
    within(5, "shutdown", poller.shutdown()).await;
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_down_node_reports_an_error_and_a_slow_one_holds_nobody_back() {
    // cp-2 is down (refused at once); w-2 answers only after 10 s, far beyond
    // the 1 s call timeout.
    let mut s = scenario("cp2-down");
    s.clusters[0].nodes[4].faults.slow_ms = 10_000;
    let sim = start(s).await;
    let client = ClientOptions {
        call_timeout: Duration::from_secs(1),
        ..fast()
    };
    let (poller, mut rx) = spawn(clusters(&sim, &["cp2-down"]), options(300, 60_000, client));
    let started = tokio::time::Instant::now();
    let mut nodes = HashMap::new();
    within(20, "four answering nodes and cp-2's error", async {
        while nodes.len() < 4 {
            if let FleetEvent::Node { node, .. } = next(&mut rx).await
                && node.name != "w-2"
            {
                nodes.insert(node.name.clone(), node);
            }
        }
    })
    .await;
    let cp2 = &nodes["cp-2"];
    assert!(cp2.error.is_some(), "{cp2:?}");
    for name in ["cp-1", "cp-3", "w-1"] {
        assert!(nodes[name].error.is_none(), "{:?}", nodes[name]);
    }
    let rest = one_round(&mut rx, "cp2-down");
    let rest = within(20, "the end of the round", rest).await;
    let took = started.elapsed();
    let w2 = rest
        .iter()
        .find_map(|e| match e {
            FleetEvent::Node { node, .. } if node.address == sim.address("cp2-down", 4) => {
                Some(node.clone())
            }
            _ => None,
        })
        .expect("w-2 reported in the round");
    assert!(w2.error.is_some(), "w-2 timed out: {w2:?}");
    // The round is bounded by the call timeout (a few calls deep), not by w-2's 10 s.
    assert!(took < Duration::from_secs(8), "round took {took:?}");
    let etcd = rest.iter().find_map(|e| match e {
        FleetEvent::Etcd { etcd, .. } => Some(etcd.clone()),
        _ => None,
    });
    let etcd = etcd.expect("an etcd report in the round");
    assert_eq!((etcd.quorum.members, etcd.quorum.healthy), (3, 2));
    within(5, "shutdown", poller.shutdown()).await;
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn focus_polls_at_once_and_then_at_the_focused_interval() {
    let sim = start(scenario("healthy")).await;
    let (poller, mut rx) = spawn(clusters(&sim, &["healthy"]), options(400, 600_000, fast()));
    within(20, "the first round", one_round(&mut rx, "healthy")).await;

    poller.send(PollerCommand::Focus(Some("healthy".into())));
    let started = within(2, "a round right after Focus", async {
        loop {
            if let FleetEvent::PollStarted { at, .. } = next(&mut rx).await {
                return at;
            }
        }
    })
    .await;
    within(20, "the focused round", one_round(&mut rx, "healthy")).await;
    let again = within(5, "the next focused round", async {
        loop {
            if let FleetEvent::PollStarted { at, .. } = next(&mut rx).await {
                return at;
            }
        }
    })
    .await;
    assert!(again > started);

    // Unfocused, it falls back to the (here very long) background interval.
    poller.send(PollerCommand::Focus(None));
    within(20, "the round under way", one_round(&mut rx, "healthy")).await;
    let quiet = tokio::time::timeout(Duration::from_millis(1200), async {
        loop {
            if let FleetEvent::PollStarted { .. } = next(&mut rx).await {
                return;
            }
        }
    })
    .await;
    assert!(
        quiet.is_err(),
        "no round started in the background interval"
    );
    within(5, "shutdown", poller.shutdown()).await;
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_starts_a_round() {
    let sim = start(scenario("healthy")).await;
    let (poller, mut rx) = spawn(clusters(&sim, &["healthy"]), options(400, 600_000, fast()));
    within(20, "the first round", one_round(&mut rx, "healthy")).await;
    poller.send(PollerCommand::Refresh("healthy".into()));
    let round = within(5, "a refreshed round", one_round(&mut rx, "healthy")).await;
    assert!(matches!(round[0], FleetEvent::PollStarted { .. }));
    assert_eq!(node_events(&round).len(), 5);
    poller.send(PollerCommand::RefreshAll);
    within(5, "a round after RefreshAll", one_round(&mut rx, "healthy")).await;
    within(5, "shutdown", poller.shutdown()).await;
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watching_a_node_follows_services_and_events_across_a_reboot() {
    let sim = start(scenario("healthy")).await;
    let w1 = sim.address("healthy", 3);
    let (poller, mut rx) = spawn(clusters(&sim, &["healthy"]), options(300, 600_000, fast()));
    // Background only, with a long interval: after this round every Node
    // event comes from the watch.
    within(20, "the first round", one_round(&mut rx, "healthy")).await;
    poller.send(PollerCommand::WatchNode {
        cluster: "healthy".into(),
        node: w1.clone(),
    });
    let (mut services, mut lines) = (None, Vec::new());
    within(10, "services and the buffered events", async {
        while services.is_none() || lines.is_empty() {
            match next(&mut rx).await {
                FleetEvent::NodeServices {
                    node, services: s, ..
                } if node == w1 => services = Some(s),
                FleetEvent::NodeEvent { node, summary, .. } if node == w1 => lines.push(summary),
                _ => {}
            }
        }
    })
    .await;
    let services = services.expect("services").expect("w-1 lists its services");
    assert!(services.iter().any(|s| s.id == "kubelet"), "{services:?}");

    within(
        10,
        "reboot",
        sim.client("healthy").reboot(&w1, RebootMode::Default),
    )
    .await
    .expect("reboot accepted");
    let mut seen = Vec::new();
    within(
        30,
        "the reboot, the new boot's events and a fresh probe",
        async {
            loop {
                match next(&mut rx).await {
                    FleetEvent::NodeEvent { node, summary, .. } if node == w1 => seen.push(summary),
                    // Stage changes re-probe the watched node at once.
                    FleetEvent::Node { node, .. } if node.address == w1 => {
                        let after_resume =
                            seen.iter().any(|l| l.starts_with("event stream resumed"));
                        if after_resume && node.stage == Some(MachineStage::Running) && node.ready {
                            return;
                        }
                    }
                    _ => {}
                }
            }
        },
    )
    .await;
    assert!(
        seen.iter().any(|l| l == "stage running ready=true"),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|l| l == "sequence reboot START"),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|l| l.starts_with("event stream lost")),
        "{seen:?}"
    );
    // Services read fine again after the reboot.
    within(10, "services after the reboot", async {
        loop {
            if let FleetEvent::NodeServices {
                node,
                services: Ok(s),
                ..
            } = next(&mut rx).await
                && node == w1
                && !s.is_empty()
            {
                return;
            }
        }
    })
    .await;

    poller.send(PollerCommand::UnwatchNode);
    within(5, "shutdown", poller.shutdown()).await;
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_every_task() {
    let sim = start(scenario("healthy")).await;
    let (poller, mut rx) = spawn(clusters(&sim, &["healthy"]), options(50, 50, fast()));
    poller.send(PollerCommand::WatchNode {
        cluster: "healthy".into(),
        node: sim.address("healthy", 0),
    });
    within(20, "a round", one_round(&mut rx, "healthy")).await;
    within(5, "shutdown", poller.shutdown()).await;
    // Every task held a sender: the channel closes once they have all ended.
    within(5, "the event channel to close", async {
        while rx.recv().await.is_some() {}
    })
    .await;
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kubernetes_only_cluster_without_a_kubeconfig_says_why() {
    let cluster = Cluster {
        name: "kube-only".into(),
        talos: None,
        kube: Some(KubeContext {
            name: "kube-only".into(),
            file: "/nonexistent/kubeconfig".into(),
            cluster: "kube-only".into(),
            user: "admin".into(),
            server: Some("https://127.0.0.1:1".into()),
        }),
        paired_by: None,
        ..Default::default()
    };
    let (poller, mut rx) = spawn(vec![cluster], options(300, 60_000, fast()));
    let round = within(10, "a round", one_round(&mut rx, "kube-only")).await;
    let error = round.iter().find_map(|e| match e {
        FleetEvent::ClusterInfo { error: Some(e), .. } => Some(e.clone()),
        _ => None,
    });
    assert!(error.is_some_and(|e| e.contains("kubeconfig")), "{round:?}");
    let kube_error = round.iter().find_map(|e| match e {
        FleetEvent::Kubernetes { facts, .. } => facts.report.error.clone(),
        _ => None,
    });
    assert!(kube_error.is_some(), "{round:?}");
    assert!(!round.iter().any(|e| matches!(e, FleetEvent::Node { .. })));
    within(5, "shutdown", poller.shutdown()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_poller_stops_when_nobody_listens() {
    let sim = start(scenario("healthy")).await;
    let (poller, rx) = spawn(clusters(&sim, &["healthy"]), options(50, 50, fast()));
    drop(rx);
    // The supervisor notices the closed channel and ends on its own.
    within(5, "the poller to stop by itself", async {
        while !poller.is_finished() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    within(5, "shutdown", poller.shutdown()).await;
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_round_is_not_started_twice() {
    // w-2 answers after 600 ms, so each round lasts at least that long.
    let mut s = scenario("healthy");
    s.clusters[0].nodes[4].faults.slow_ms = 600;
    let sim = start(s).await;
    let (poller, mut rx) = spawn(clusters(&sim, &["healthy"]), options(300, 600_000, fast()));
    let started = within(10, "the first round to start", async {
        loop {
            if let FleetEvent::PollStarted { .. } = next(&mut rx).await {
                return;
            }
        }
    });
    started.await;
    for _ in 0..3 {
        poller.send(PollerCommand::Refresh("healthy".into()));
        poller.send(PollerCommand::RefreshAll);
        poller.send(PollerCommand::Focus(Some("healthy".into())));
        poller.send(PollerCommand::Focus(None));
    }
    let round = within(20, "the first round", one_round(&mut rx, "healthy")).await;
    assert!(
        !round
            .iter()
            .any(|e| matches!(e, FleetEvent::PollStarted { .. })),
        "a second round started inside the first: {round:?}"
    );
    assert_eq!(node_events(&round).len(), 5);
    within(5, "shutdown", poller.shutdown()).await;
    sim.fleet.shutdown().await;
}

fn role_of(round: &[FleetEvent]) -> Option<String> {
    round.iter().find_map(|e| match e {
        FleetEvent::ClusterInfo { role, .. } => Some(role.clone()),
        _ => None,
    })
}

/// `:ctx healthy-reader` in the console: the running poller's next round (started at once, the
/// intervals being an hour) asks through the reader context, whose certificate says
/// `os:reader`, and still sees every node; naming the admin context switches back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn use_context_switches_the_running_poller_from_its_next_round() {
    let sim = start(scenario("healthy")).await;
    let found = clusters(&sim, &["healthy"]);
    assert_eq!(found[0].talos_context(), Some("healthy"));
    assert_eq!(
        found[0].alternate_contexts(),
        ["healthy-expiring", "healthy-reader"]
    );
    let (poller, mut rx) = spawn(found, options(3_600_000, 3_600_000, fast()));
    let first = within(20, "the first round", one_round(&mut rx, "healthy")).await;
    assert_eq!(role_of(&first).as_deref(), Some("os:admin"));

    let use_context = |context: &str| PollerCommand::UseContext {
        cluster: "healthy".into(),
        context: context.into(),
    };
    poller.send(use_context("healthy-reader"));
    let round = within(20, "the reader's round", one_round(&mut rx, "healthy")).await;
    assert_eq!(role_of(&round).as_deref(), Some("os:reader"), "{round:?}");
    assert_eq!(node_events(&round).len(), 5, "{round:?}");

    poller.send(use_context("healthy"));
    let round = within(20, "the admin's round again", one_round(&mut rx, "healthy")).await;
    assert_eq!(role_of(&round).as_deref(), Some("os:admin"), "{round:?}");
    within(5, "shutdown", poller.shutdown()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_cluster_does_not_freeze_the_others() {
    let sim = start(scenario("healthy")).await;
    let mut found = clusters(&sim, &["healthy"]);
    // Accepts TCP (the kernel completes the handshake) and never answers a byte.
    let blackhole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = blackhole.local_addr().unwrap().to_string();
    let mut hanging = found[0].clone();
    hanging.name = "hanging".into();
    if let Some(ctx) = hanging.talos.as_mut() {
        ctx.name = "hanging".into();
        ctx.endpoints = vec![address];
        ctx.nodes = vec!["127.0.0.1".into()];
    }
    found.push(hanging);
    // Timeouts far longer than the test: only the poller's own isolation keeps healthy going.
    let patient = ClientOptions {
        connect_timeout: Duration::from_secs(120),
        call_timeout: Duration::from_secs(120),
        stream_open_timeout: Duration::from_secs(120),
        concurrency: 32,
    };
    let (poller, mut rx) = spawn(found, options(200, 200, patient));
    let mut hanging_started = false;
    let mut healthy_rounds = 0;
    within(
        30,
        "three rounds of healthy beside the hanging cluster",
        async {
            while healthy_rounds < 3 || !hanging_started {
                match next(&mut rx).await {
                    FleetEvent::PollStarted { cluster, .. } if cluster == "hanging" => {
                        hanging_started = true;
                    }
                    FleetEvent::PollFinished { cluster, .. } if cluster == "hanging" => {
                        panic!("the hanging cluster's round ended: it did not hang");
                    }
                    FleetEvent::PollFinished { cluster, .. } if cluster == "healthy" => {
                        healthy_rounds += 1;
                    }
                    _ => {}
                }
            }
        },
    )
    .await;
    let round = within(10, "a fourth healthy round", one_round(&mut rx, "healthy")).await;
    let nodes = node_events(&round);
    assert_eq!(nodes.len(), 5);
    assert!(nodes.values().all(|n| n.error.is_none()), "{nodes:?}");
    within(5, "shutdown, the hanging call too", poller.shutdown()).await;
    drop(blackhole);
    sim.fleet.shutdown().await;
}

/// The nodes' configuration marks of the next `ConfigDrift` report of `cluster`, by address.
async fn next_drift(
    rx: &mut mpsc::Receiver<FleetEvent>,
    cluster: &str,
) -> Vec<(String, taloscope::machine_config::DriftMark)> {
    loop {
        if let FleetEvent::ConfigDrift {
            cluster: c, marks, ..
        } = next(rx).await
            && c == cluster
        {
            return marks;
        }
    }
}

/// On `config-drift` (w-2 alone carries a registry mirror) the nodes named by
/// `ReadConfigDrift` are read once the cluster is on screen: w-2 is marked with the
/// section, every other node is as its role's; through the reader context, nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_drift_marks_the_worker_with_the_extra_mirror_and_nothing_for_a_reader() {
    use taloscope::machine_config::{DriftMark, DriftTarget};
    let sim = start(scenario("config-drift")).await;
    let found = clusters(&sim, &["config-drift"]);
    let (poller, mut rx) = spawn(found, options(3_600_000, 3_600_000, fast()));
    let first = within(20, "the first round", one_round(&mut rx, "config-drift")).await;
    let nodes: Vec<DriftTarget> = node_events(&first)
        .into_values()
        .map(|n| DriftTarget {
            name: n.name.clone(),
            address: n.address.clone(),
            role: n.role.as_str().to_string(),
        })
        .collect();
    assert_eq!(nodes.len(), 5);
    poller.send(PollerCommand::ReadConfigDrift {
        cluster: "config-drift".into(),
        nodes: nodes.clone(),
    });
    poller.send(PollerCommand::Focus(Some("config-drift".into())));
    let marks = within(20, "the drift read", next_drift(&mut rx, "config-drift")).await;
    assert_eq!(marks.len(), 5, "{marks:?}");
    for (address, mark) in &marks {
        let name = &nodes
            .iter()
            .find(|n| &n.address == address)
            .expect("a node")
            .name;
        let want = match name.as_str() {
            "w-2" => DriftMark::Differs("machine.registries".into()),
            _ => DriftMark::Same,
        };
        assert_eq!(mark, &want, "{name}");
    }
    poller.send(PollerCommand::UseContext {
        cluster: "config-drift".into(),
        context: "config-drift-reader".into(),
    });
    let marks = within(20, "the reader's read", next_drift(&mut rx, "config-drift")).await;
    assert_eq!(marks, [], "a reader marks nothing");
    within(5, "shutdown", poller.shutdown()).await;
}
