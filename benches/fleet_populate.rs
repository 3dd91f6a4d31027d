//! Benchmark (not a timed test): the live-data poller against the `fleet`
//! scenario (20 clusters × 250 nodes) in-process. Prints the time until every
//! cluster finished its first round with every node reported, and the process
//! RSS before and after spawning the poller (the sim runs in this process too).
//! Run in debug with `cargo test --bench fleet_populate`; target ≤ 3 s (release).
//! Arguments after `--`: CLUSTERS [NODES] (clusters polled at once, per-cluster
//! node fan-out) and `--all-contexts` (also the `-reader` contexts).
mod support;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use taloscope::discovery::{Sources, discover};
use taloscope::fleet::{FleetEvent, PollerOptions, spawn_poller};
use taloscope_sim::Scenario;

fn main() {
    support::run("fleet_populate", bench());
}

/// Resident set size of this process in KiB (`VmRSS`, or `VmHWM` for the peak).
fn rss_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// CPU time this process has used (user + system), sim included.
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(|| "?".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
}

async fn bench() -> Result<(), String> {
    let scenario = Scenario::builtin("fleet").ok_or("no built-in `fleet` scenario")?;
    let scenario_names: HashSet<String> =
        scenario.clusters.iter().map(|c| c.name.clone()).collect();
    let (fleet, _dir) = support::start_sim(scenario, 100.0).await?;
    let discovery = discover(&Sources {
        talosconfigs: vec![fleet.talosconfig_path()],
        ..Default::default()
    });
    // The admin context of each cluster; `--all-contexts` adds the `-reader`
    // contexts discovery also lists (same nodes, so twice the work).
    let all_contexts = std::env::args().any(|a| a == "--all-contexts");
    let clusters: Vec<_> = discovery
        .clusters
        .into_iter()
        .filter(|c| all_contexts || scenario_names.contains(&c.name))
        .collect();
    let expected: HashMap<String, usize> = clusters
        .iter()
        .map(|c| (c.name.clone(), c.nodes().len()))
        .collect();
    let names: HashSet<String> = expected.keys().cloned().collect();
    let total_nodes: usize = clusters.iter().map(|c| c.nodes().len()).sum();
    if clusters.len() < 20 {
        return Err(format!(
            "only {} clusters in the sim's talosconfig",
            clusters.len()
        ));
    }

    let before = rss_kib("VmRSS");
    let (tx, mut rx) = tokio::sync::mpsc::channel(4096);
    let started = Instant::now();
    let cpu_before = cpu_time();
    // Optional arguments: `-- CLUSTERS [NODES]`, the clusters polled at once
    // and the per-cluster node fan-out.
    let mut options = PollerOptions::default();
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if let Some(n) = numbers.first() {
        options.max_concurrent_clusters = (*n).max(1);
    }
    if let Some(n) = numbers.get(1) {
        options.client.concurrency = (*n).max(1);
    }
    println!(
        "fleet_populate: {} clusters at once, {} nodes at once per cluster",
        options.max_concurrent_clusters, options.client.concurrency
    );
    let poller = spawn_poller(clusters, None, options, tx);

    let mut answered: HashMap<String, HashSet<String>> = HashMap::new();
    let mut finished: HashSet<String> = HashSet::new();
    let (mut first_node, mut all_nodes) = (None, None);
    let mut events = 0usize;
    let populated = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(ev) = rx.recv().await {
            events += 1;
            match ev {
                FleetEvent::Node { cluster, node, .. } if node.error.is_none() => {
                    first_node.get_or_insert_with(|| started.elapsed());
                    answered.entry(cluster).or_default().insert(node.address);
                    let done = answered.values().map(HashSet::len).sum::<usize>();
                    if done == total_nodes {
                        all_nodes.get_or_insert_with(|| started.elapsed());
                    }
                }
                FleetEvent::Node { cluster, node, .. } => {
                    eprintln!(
                        "fleet_populate: {cluster} {}: {:?}",
                        node.address, node.error
                    );
                }
                FleetEvent::PollFinished { cluster, .. } => {
                    finished.insert(cluster);
                }
                _ => {}
            }
            let complete = finished.len() == names.len()
                && names
                    .iter()
                    .all(|n| answered.get(n).is_some_and(|a| a.len() == expected[n]));
            if complete {
                return true;
            }
        }
        false
    })
    .await;
    let took = started.elapsed();
    let cpu = cpu_time().saturating_sub(cpu_before);
    let after = rss_kib("VmRSS");
    let peak = rss_kib("VmHWM");
    poller.shutdown().await;
    fleet.shutdown().await;
    match populated {
        Ok(true) => {}
        Ok(false) => return Err("the poller stopped before the fleet was populated".into()),
        Err(_) => {
            let done = answered.values().map(HashSet::len).sum::<usize>();
            return Err(format!(
                "not populated after 120 s: {} of {} clusters finished, {done} of {total_nodes} nodes",
                finished.len(),
                names.len()
            ));
        }
    }
    let fmt = |d: Option<Duration>| d.map_or_else(|| "?".into(), |d| format!("{d:.2?}"));
    println!(
        "fleet_populate: {} clusters, {total_nodes} nodes, {events} events",
        names.len()
    );
    println!("  first node answered      {}", fmt(first_node));
    println!("  every node answered      {}", fmt(all_nodes));
    println!("  every cluster finished   {took:.2?}  (target <= 3 s, release)");
    println!("  CPU used meanwhile       {cpu:.2?}  (poller and sim together)");
    println!(
        "  RSS before the poller    {}  (sim in-process)",
        mib(before)
    );
    println!("  RSS after populating     {}", mib(after));
    let diff = before.zip(after).map(|(b, a)| a.saturating_sub(b));
    println!("  difference (poller)      {}", mib(diff));
    println!("  peak RSS (VmHWM)         {}", mib(peak));
    Ok(())
}
