//! Benchmark (not a timed test): `taloscope create` of a 3 control plane + 2 worker cluster on
//! the sim's OpenNebula at time scale 1 (realistic boot, install and reboot timings), from the
//! command to every node Ready and the contexts written. Prints the wall time of each run and
//! their median; the figure issue 18 asks for is at most 4 minutes. Arguments: the delivery
//! (`user-data` or `maintenance`, default maintenance) and the provider (`opennebula`, the
//! XML-RPC templates, default; or `oneflow`, the OneFlow service template), e.g.
//! `cargo bench --bench create_cluster -- maintenance oneflow` (release).
mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use taloscope_sim::Scenario;

const RUNS: usize = 3;

fn main() {
    let deliver = std::env::args()
        .skip(1)
        .find(|a| a == "user-data" || a == "maintenance")
        .unwrap_or_else(|| "maintenance".into());
    let provider = if std::env::args().skip(1).any(|a| a == "oneflow") {
        "sim-oneflow"
    } else {
        "sim-opennebula"
    };
    support::run("create_cluster", runs(deliver, provider));
}

/// RUNS creates one after the other, each timed, and their median.
async fn runs(deliver: String, provider: &str) -> Result<(), String> {
    let mut times = Vec::new();
    for run in 1..=RUNS {
        let t = (create_once(&deliver, provider).await).map_err(|e| format!("run {run}: {e}"))?;
        println!(
            "create_cluster: run {run} ({deliver}, {provider}): {:.1} s",
            t.as_secs_f64()
        );
        times.push(t);
    }
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "create_cluster: 3+2 nodes, {deliver}, {provider}, time scale 1: median {:.1} s (target <= 240 s)",
        median.as_secs_f64()
    );
    Ok(())
}

/// One create in a fresh sim, from the new-cluster templates (or service template) its config
/// names.
async fn create_once(deliver: &str, provider: &str) -> Result<Duration, String> {
    let scenario = Scenario::builtin("healthy").ok_or("no built-in `healthy` scenario")?;
    let (fleet, dir) = support::start_sim(scenario, 1.0).await?;
    let one = fleet.opennebula().ok_or("the sim runs no OpenNebula")?;
    // The sim's own config: its providers offer the new-cluster templates (talos-controlplane,
    // talos-worker) whose VMs boot into Talos; the first VM leases `.1` of the network.
    let config = one.config_file();
    let o = one.new_clusters().network.octets();
    let endpoint = format!("{}.{}.{}.1", o[0], o[1], o[2]);
    let mut args = vec![
        "create",
        "--name",
        "lab",
        "--provider",
        provider,
        "--controlplanes",
        "3",
        "--workers",
        "2",
        "--talos",
        "v1.11.3",
        "--deliver",
        deliver,
        "--yes",
        "--confirm",
        "lab",
    ];
    if deliver == "user-data" {
        args.extend(["--endpoint", &endpoint]);
    }
    let started = Instant::now();
    let binary = env!("CARGO_BIN_EXE_taloscope");
    let mut cmd = Command::new(binary);
    cmd.args(&args)
        .arg("--config")
        .arg(&config)
        .env("HOME", dir.path())
        .env("TALOSCOPE_STATE_DIR", dir.path().join("state"))
        .env("TALOSCONFIG", fleet.talosconfig_path())
        .env("KUBECONFIG", fleet.kubeconfig_path())
        .env_remove("TALOSCOPE_CONFIG");
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("{binary}: {e}"))?;
    let took = started.elapsed();
    if !out.status.success() {
        return Err(format!(
            "create failed after {:.1} s:\n{}{}",
            took.as_secs_f64(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(took)
}
