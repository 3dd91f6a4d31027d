//! `taloscope-sim`: the simulated fleet as a program. `sim` serves a scenario in the
//! foreground (the console on the demo fleet is the `taloscope-demo` program).
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod serve;

#[derive(Parser, Debug)]
#[command(
    name = "taloscope-sim",
    version,
    about = "A simulated Talos fleet on loopback, for taloscope's tests"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a simulated fleet on loopback (Talos apid over mutual TLS) in the foreground.
    Sim {
        /// Built-in scenario name or a scenario YAML file.
        #[arg(long, default_value = "healthy")]
        scenario: String,
        /// Where to write certificates and the talosconfig.
        #[arg(long, value_name = "DIR")]
        state_dir: PathBuf,
        /// Simulated seconds per real second (reboots, upgrades); larger is faster.
        #[arg(long, default_value_t = 1.0)]
        time_scale: f64,
    },
}

fn main() -> ExitCode {
    let _ = rustls::crypto::ring::default_provider().install_default();
    match Cli::parse().command {
        Command::Sim {
            scenario,
            state_dir,
            time_scale,
        } => serve::run(&scenario, &state_dir, time_scale),
    }
}
