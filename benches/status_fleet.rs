//! Benchmark (not a timed test): `collect` for one simulated 250-node cluster
//! (the first cluster of the `fleet` scenario), on the same 2-worker runtime
//! `taloscope status` uses. Prints min and median of a few runs; target ≤ 1 s.
//! Run in debug with `cargo test --bench status_fleet` (release builds are
//! slow on this machine); `cargo bench --bench status_fleet` works too.
mod support;

use std::time::{Duration, Instant};

use taloscope::discovery::{Sources, discover};
use taloscope::fleet::{CollectOptions, collect_context};
use taloscope_sim::Scenario;

const RUNS: usize = 5;

fn main() {
    support::run("status_fleet", bench());
}

async fn bench() -> Result<(), String> {
    let mut scenario = Scenario::builtin("fleet").ok_or("no built-in `fleet` scenario")?;
    scenario.clusters.truncate(1);
    let name = scenario.clusters[0].name.clone();
    let nodes = scenario.node_count();
    let (fleet, _dir) = support::start_sim(scenario, 100.0).await?;
    let discovery = discover(&Sources {
        talosconfigs: vec![fleet.talosconfig_path()],
        ..Default::default()
    });
    let ctx = discovery
        .clusters
        .iter()
        .filter_map(|c| c.talos.as_ref())
        .find(|t| t.name == name)
        .ok_or_else(|| format!("context {name} missing from the sim's talosconfig"))?
        .clone();
    // An optional first argument sets the fan-out width: `-- 64`.
    let mut options = CollectOptions::default();
    if let Some(n) = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
    {
        options.client.concurrency = n.max(1);
    }
    let mut times = Vec::new();
    for run in 0..=RUNS {
        let started = Instant::now();
        let status = collect_context(&name, &ctx, &options).await;
        let took = started.elapsed();
        let answered = status.nodes.iter().filter(|n| n.error.is_none()).count();
        if answered != nodes {
            return Err(format!("only {answered} of {nodes} nodes answered"));
        }
        // run 0 is a warm-up (first TLS handshakes, allocator)
        if run > 0 {
            times.push(took);
        }
    }
    fleet.shutdown().await;
    times.sort();
    let median = times[times.len() / 2];
    let min = times[0];
    println!(
        "status_fleet: one cluster of {nodes} nodes, concurrency {}: min {} ms, median {} ms over {RUNS} runs (target <= 1000 ms){}",
        options.client.concurrency,
        ms(min),
        ms(median),
        if cfg!(debug_assertions) {
            ", debug build"
        } else {
            ""
        }
    );
    Ok(())
}

fn ms(d: Duration) -> u128 {
    d.as_millis()
}
