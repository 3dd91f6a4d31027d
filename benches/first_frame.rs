//! First frame: how long after the process starts the console shows all 5
//! nodes of the simulated `healthy` cluster with their versions, and its RSS
//! at that moment, in an 80x24 pseudo-terminal. Target: <= 150 ms, <= 10 MB
//! (release build). Run: `cargo bench --bench first_frame` (release) or
//! `cargo test --release --bench first_frame`. The RSS is VmRSS, all of it; its
//! anonymous part (heap, stacks, relocated data) and its file-backed part (the
//! binary's text and the libraries, shared with the page cache) are printed too.
#[path = "../tests/pty_support/mod.rs"]
mod pty_support;

use std::time::{Duration, Instant};

use pty_support::{BackgroundSim, PtySession};

const RUNS: usize = 9;
const BOUND: Duration = Duration::from_secs(60);

fn main() {
    let sim = BackgroundSim::start("healthy", BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let env = [
        ("TALOSCONFIG", sim.talosconfig()),
        ("KUBECONFIG", sim.kubeconfig()),
        ("LANG", "C.UTF-8".to_string()),
    ];
    let mut times = Vec::new();
    let mut rss = Vec::new();
    let mut anon = Vec::new();
    let mut file = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let mut console = PtySession::start(24, 80, home.path(), &["--context", "healthy"], &env);
        console.wait_for("all 5 nodes with versions", BOUND, |screen| {
            ["cp-1", "cp-2", "cp-3", "w-1", "w-2"]
                .iter()
                .all(|n| screen.contains(n))
                && screen.matches("v1.11.3").count() >= 5
        });
        times.push(started.elapsed());
        rss.push(console.rss_kib().unwrap_or(0));
        anon.push(console.status_kib("RssAnon:").unwrap_or(0));
        file.push(console.status_kib("RssFile:").unwrap_or(0));
        console.quit(BOUND);
    }
    times.sort();
    rss.sort();
    anon.sort();
    file.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "first frame with all 5 nodes (healthy, 80x24, {RUNS} runs): min {:.1} ms, median {:.1} ms, max {:.1} ms",
        ms(times[0]),
        ms(times[RUNS / 2]),
        ms(times[RUNS - 1])
    );
    println!(
        "RSS at that frame: min {:.1} MB, median {:.1} MB, max {:.1} MB",
        rss[0] as f64 / 1024.0,
        rss[RUNS / 2] as f64 / 1024.0,
        rss[RUNS - 1] as f64 / 1024.0
    );
    println!(
        "  of which anonymous: median {:.1} MB; file-backed (text, libraries): median {:.1} MB",
        anon[RUNS / 2] as f64 / 1024.0,
        file[RUNS / 2] as f64 / 1024.0
    );
}
