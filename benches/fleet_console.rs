//! The console against the `fleet` sim (served in-process; 20 clusters of 250
//! nodes, each with an admin and a reader context, grouped into one fleet row
//! per cluster), in a 200x60 pseudo-terminal: time from process start until every fleet row
//! shows all 250 nodes answered, and the console's RSS then. Target: <= 3 s,
//! <= 80 MB (release). Run: `cargo bench --bench fleet_console`.
#[path = "../tests/pty_support/mod.rs"]
mod pty_support;

use std::time::{Duration, Instant};

use pty_support::{BackgroundSim, PtySession};

const RUNS: usize = 3;
const BOUND: Duration = Duration::from_secs(120);
const CLUSTERS: usize = 20;

fn main() {
    let sim = BackgroundSim::start("fleet", BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let env = [
        ("TALOSCONFIG", sim.talosconfig()),
        ("KUBECONFIG", sim.kubeconfig()),
        ("LANG", "C.UTF-8".to_string()),
    ];
    for run in 1..=RUNS {
        let started = Instant::now();
        let mut console = PtySession::start(60, 200, home.path(), &[], &env);
        console.wait_for("the first cluster populated", BOUND, |s| {
            s.contains("250/250")
        });
        let first = started.elapsed();
        console.wait_for("every cluster populated", BOUND, |s| {
            s.matches("250/250").count() >= CLUSTERS
        });
        let all = started.elapsed();
        println!(
            "run {run}: first cluster populated after {:.0} ms, all {CLUSTERS} after {:.0} ms; RSS {:.1} MB (peak {:.1} MB)",
            first.as_secs_f64() * 1000.0,
            all.as_secs_f64() * 1000.0,
            console.rss_kib().unwrap_or(0) as f64 / 1024.0,
            console.peak_rss_kib().unwrap_or(0) as f64 / 1024.0,
        );
        console.quit(BOUND);
    }
}
