//! Benchmark (not a timed test) of the nodes pane's usage columns with 250 nodes: the first
//! cluster of the sim's `fleet` scenario, in process, polled by the live poller into the app
//! at 200x50 as the console does. Prints, for RUNS runs without usage reads and RUNS with them
//! (the rows on screen asked for as soon as the pane shows them, `app::usage_request`): the time
//! until the pane's first frame with all 250 nodes, and that frame's cost (prepare and draw);
//! then the machine API calls the usage reads cost the nodes per refresh, from the sim's record
//! of served calls. Run: `cargo bench --bench usage_columns` (release).
mod support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use taloscope::app::prepared::prepare;
use taloscope::app::{Action, AppEvent, AppState, update, usage_request};
use taloscope::discovery::{Cluster, Sources, discover};
use taloscope::fleet::{FleetEvent, PollerCommand, PollerHandle, PollerOptions, spawn_poller};
use taloscope::views;
use taloscope_sim::{Scenario, SimFleet};
use tokio::sync::mpsc;

const RUNS: usize = 5;
const REFRESHES: u64 = 8;
const NODES: usize = 250;
const BOUND: Duration = Duration::from_secs(120);
const USAGE_METHODS: [&str; 3] = [
    "/machine.MachineService/SystemStat",
    "/machine.MachineService/Memory",
    "/machine.MachineService/Mounts",
];

fn main() {
    support::run("usage_columns", bench());
}

/// The usage calls each node of `cluster` served so far, by node.
fn usage_calls(fleet: &SimFleet, cluster: &str) -> HashMap<String, u64> {
    let mut by_node = HashMap::new();
    for (call, count) in fleet.state().served_calls() {
        if call.cluster == cluster && USAGE_METHODS.contains(&call.method.as_str()) {
            *by_node.entry(call.node).or_default() += count;
        }
    }
    by_node
}

/// A run's first frame: how long it took, the app then, its poller and its events, and how
/// many rows' usage was last asked for.
struct FirstFrame {
    took: Duration,
    app: AppState,
    poller: PollerHandle,
    rx: mpsc::Receiver<FleetEvent>,
    /// The names of the rows whose usage was last asked for.
    asked: Vec<String>,
    /// How many usage reports each node sent so far.
    seen: HashMap<String, u64>,
}

/// One run: a fresh poller and app, until the pane has all the nodes; with `usage`, the rows
/// on screen are asked for as the console asks (after every update that changes them).
async fn first_frame(
    clusters: &[Cluster],
    discovery: &taloscope::discovery::Discovery,
    usage: bool,
) -> Result<FirstFrame, String> {
    let mut app = AppState::new(discovery.clone(), false);
    update(&mut app, Action::Resize(200, 50));
    update(&mut app, Action::OpenSelected);
    let options = PollerOptions {
        focused_interval: Duration::from_secs(3600),
        background_interval: Duration::from_secs(3600),
        ..PollerOptions::default()
    };
    let (tx, mut rx) = mpsc::channel(4096);
    let started = Instant::now();
    let poller = spawn_poller(clusters.to_vec(), None, options, tx);
    let cluster = clusters[0].name.clone();
    let all_shown = |app: &AppState| {
        app.fleet.cluster(&cluster).is_some_and(|c| {
            c.status.nodes.len() == NODES && c.status.nodes.iter().all(|n| n.error.is_none())
        })
    };
    let mut asked = Vec::new();
    let mut seen: HashMap<String, u64> = HashMap::new();
    let mut fold = |app: &mut AppState, event: FleetEvent| {
        if let FleetEvent::NodeUsage { usage, .. } = &event {
            *seen.entry(usage.node.clone()).or_default() += 1;
        }
        update(app, Action::Event(AppEvent::Fleet(event)));
    };
    tokio::time::timeout(BOUND, async {
        while !all_shown(&app) {
            // As the console's loop: what has arrived is folded in, then a frame is prepared
            // and the rows it shows asked for.
            let event = rx.recv().await.ok_or("the poller stopped")?;
            fold(&mut app, event);
            while let Ok(event) = rx.try_recv() {
                fold(&mut app, event);
            }
            prepare(&mut app);
            if usage
                && let Some(PollerCommand::ReadUsage { cluster, nodes }) = usage_request(&mut app)
            {
                asked = nodes.iter().map(|n| n.name.clone()).collect();
                poller.send(PollerCommand::ReadUsage { cluster, nodes });
            }
        }
        Ok::<_, String>(())
    })
    .await
    .map_err(|_| format!("{NODES} nodes not shown within {BOUND:?}"))??;
    Ok(FirstFrame {
        took: started.elapsed(),
        app,
        poller,
        rx,
        asked,
        seen,
    })
}

/// Counts usage reports by node in `seen` until `done` says so.
async fn reported(
    rx: &mut mpsc::Receiver<FleetEvent>,
    seen: &mut HashMap<String, u64>,
    done: impl Fn(&HashMap<String, u64>) -> bool,
) -> Result<(), String> {
    while !done(seen) {
        match rx.recv().await {
            Some(FleetEvent::NodeUsage { usage, .. }) => *seen.entry(usage.node).or_default() += 1,
            Some(_) => {}
            None => return Err("the poller stopped".to_string()),
        }
    }
    Ok(())
}

/// The median time to prepare and draw the pane's frame from `app`.
fn frame_cost(app: &mut AppState) -> Duration {
    let look = support::look();
    let area = Rect::new(0, 0, 200, 50);
    let mut buf = Buffer::empty(area);
    let mut times: Vec<Duration> = (0..101)
        .map(|_| {
            let t = Instant::now();
            app.generation += 1;
            prepare(app);
            buf.reset();
            views::render(area, &mut buf, app, &look);
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

async fn bench() -> Result<(), String> {
    let mut scenario = Scenario::builtin("fleet").ok_or("no built-in `fleet` scenario")?;
    scenario.clusters.truncate(1);
    let name = scenario.clusters[0].name.clone();
    let (fleet, _dir) = support::start_sim(scenario, 100.0).await?;
    let discovery = discover(&Sources {
        talosconfigs: vec![fleet.talosconfig_path()],
        ..Default::default()
    });
    let clusters: Vec<Cluster> = (discovery.clusters.iter())
        .filter(|c| c.name == name)
        .cloned()
        .collect();

    let mut times: [Vec<Duration>; 2] = Default::default();
    let mut costs: [Vec<Duration>; 2] = Default::default();
    let mut last = None;
    for run in 0..2 * RUNS {
        let usage = run % 2 == 1;
        let mut frame = first_frame(&clusters, &discovery, usage).await?;
        times[usize::from(usage)].push(frame.took);
        costs[usize::from(usage)].push(frame_cost(&mut frame.app));
        match usage {
            true => last = Some(frame),
            false => frame.poller.shutdown().await,
        }
    }
    for (usage, label) in [
        (false, "without usage reads"),
        (true, "with usage reads   "),
    ] {
        let t = &times[usize::from(usage)];
        println!(
            "first frame with all {NODES} nodes, 200x50, {label}: median {} (min {}, max {}); its frame {}",
            ms(median(t.clone())),
            ms(*t.iter().min().unwrap_or(&Duration::ZERO)),
            ms(*t.iter().max().unwrap_or(&Duration::ZERO)),
            ms(median(costs[usize::from(usage)].clone())),
        );
    }

    // The calls: the last run's rows on screen, refreshed REFRESHES times once each has been
    // read (the reads asked for while the pane filled have ended then).
    let FirstFrame {
        poller,
        mut rx,
        asked: visible,
        mut seen,
        ..
    } = last.ok_or("no run with usage reads")?;
    let read_once = |seen: &HashMap<String, u64>| visible.iter().all(|n| seen.contains_key(n));
    tokio::time::timeout(BOUND, reported(&mut rx, &mut seen, read_once))
        .await
        .map_err(|_| "the first usage read did not end")??;
    let base: HashMap<String, u64> = visible.iter().map(|n| (n.clone(), seen[n])).collect();
    let before = usage_calls(&fleet, &name);
    let started = Instant::now();
    for refresh in 1..=REFRESHES {
        poller.send(PollerCommand::Refresh(name.clone()));
        let read_again = |seen: &HashMap<String, u64>| {
            (visible.iter()).all(|n| seen.get(n).copied().unwrap_or(0) >= base[n] + refresh)
        };
        let nodes_done = reported(&mut rx, &mut seen, read_again);
        tokio::time::timeout(BOUND, nodes_done)
            .await
            .map_err(|_| "a refresh's usage read did not end")??;
    }
    let took = started.elapsed();
    let after = usage_calls(&fleet, &name);
    let spent = |node: &String| {
        after.get(node).copied().unwrap_or(0) - before.get(node).copied().unwrap_or(0)
    };
    let on_screen: u64 = visible.iter().map(spent).sum();
    let off_screen: u64 = after
        .keys()
        .filter(|n| !visible.contains(n))
        .map(spent)
        .sum();
    println!(
        "usage calls per refresh: {:.1} for the {} nodes on screen of {NODES}, at most {} per node over {REFRESHES} refreshes, {off_screen} for the nodes off screen; a refresh's read took {}",
        on_screen as f64 / REFRESHES as f64,
        visible.len(),
        visible.iter().map(spent).max().unwrap_or(0),
        ms(took / REFRESHES as u32),
    );
    poller.shutdown().await;
    fleet.shutdown().await;
    Ok(())
}
