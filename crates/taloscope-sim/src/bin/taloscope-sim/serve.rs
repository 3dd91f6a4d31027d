//! `taloscope-sim sim`: runs a simulated fleet in the foreground, prints
//! `ready talosconfig=DIR/talosconfig` once every listener is up (then the OpenNebula sim's
//! endpoints and `DIR/taloscope.yaml`), and stops on SIGINT/SIGTERM. Exit 2 when the
//! scenario does not load or the fleet does not start.
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use taloscope_sim::{Scenario, SimFleet, SimOptions, ready_line};

pub fn run(scenario: &str, state_dir: &Path, time_scale: f64) -> ExitCode {
    let scenario = match Scenario::load(scenario) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("taloscope-sim sim: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match taloscope_sim::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("taloscope-sim sim: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(async {
        let opts = SimOptions {
            state_dir: state_dir.to_path_buf(),
            time_scale,
        };
        let fleet = match SimFleet::start(scenario, opts).await {
            Ok(f) => f,
            Err(e) => {
                eprintln!("taloscope-sim sim: {e}");
                return ExitCode::from(2);
            }
        };
        let mut stdout = std::io::stdout();
        let _ = writeln!(stdout, "{}", ready_line(&fleet.talosconfig_path()));
        if let Some(one) = fleet.opennebula() {
            let _ = writeln!(
                stdout,
                "opennebula xmlrpc={} oneflow={} config={}",
                one.xmlrpc_url(),
                one.oneflow_url(),
                one.config_file().display()
            );
        }
        let _ = stdout.flush();
        wait_for_signal().await;
        fleet.shutdown().await;
        ExitCode::SUCCESS
    })
}

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
