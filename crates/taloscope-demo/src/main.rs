//! `taloscope-demo`: starts the built-in `demo` scenario in-process, in a temporary dir, and
//! opens the taloscope console in-process on it. This crate links both libraries, so neither
//! the simulator's nor the console's has to know the other. The console gets its own command
//! line: the sim's talosconfig, kubeconfig and taloscope config (its OpenNebula and OneFlow
//! providers) and a state dir inside the temporary dir, so the user's configs, journals and
//! audit log are neither read nor touched; the display flags pass through.
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use taloscope::cli::{Cli, ConsoleArgs, GlobalArgs, LookArgs};
use taloscope::tui::ColorMode;
use taloscope_sim::{Scenario, SimFleet, SimOptions};

/// Simulated seconds per real second in the demo: a reboot takes seconds.
const DEMO_TIME_SCALE: f64 = 4.0;

/// The console flags the demo passes through (the rest it sets itself).
#[derive(Parser, Debug)]
#[command(
    name = "taloscope-demo",
    version,
    about = "The taloscope console on the built-in simulated demo fleet (loopback only)"
)]
struct DemoArgs {
    /// Refuse every mutating action.
    #[arg(long)]
    readonly: bool,
    /// Theme name: default, light, high-contrast, mono, or a user theme.
    #[arg(long, value_name = "NAME")]
    theme: Option<String>,
    /// When to use colour.
    #[arg(long, value_enum)]
    color: Option<ColorMode>,
    /// ASCII borders and glyphs, whatever the locale says.
    #[arg(long)]
    ascii: bool,
    /// Seconds between polls of the cluster on screen.
    #[arg(long, value_name = "SECONDS")]
    refresh: Option<u64>,
    /// Log level or filter; logs go to a file in the demo's state dir.
    #[arg(long, value_name = "LEVEL")]
    log_level: Option<String>,
}

impl DemoArgs {
    /// The flags as the console's command line spells them.
    fn console_flags(&self) -> Vec<OsString> {
        GlobalArgs {
            readonly: self.readonly,
            color: self.color.unwrap_or_default(),
            log_level: self.log_level.clone(),
            look: LookArgs {
                theme: self.theme.clone(),
                ascii: self.ascii,
            },
            console: ConsoleArgs {
                refresh: self.refresh,
                demo_fleet: false,
            },
            ..GlobalArgs::default()
        }
        .display_flags()
    }
}

fn main() -> ExitCode {
    let _ = rustls::crypto::ring::default_provider().install_default();
    run(&DemoArgs::parse())
}

fn run(args: &DemoArgs) -> ExitCode {
    if !std::io::stdout().is_terminal() {
        eprintln!(
            "taloscope-demo: stdout is not a terminal; the demo opens the console and needs one"
        );
        return ExitCode::from(2);
    }
    let Some(scenario) = Scenario::builtin("demo") else {
        eprintln!("taloscope-demo: the built-in demo scenario is missing");
        return ExitCode::FAILURE;
    };
    let dir = match tempfile::Builder::new().prefix("taloscope-demo-").tempdir() {
        Ok(dir) => dir,
        Err(err) => {
            eprintln!("taloscope-demo: cannot make a temporary dir for the demo: {err}");
            return ExitCode::FAILURE;
        }
    };
    // The sim gets a runtime of its own, whose workers serve it while the console's
    // runtime runs on this thread.
    let sim_runtime = match taloscope_sim::runtime() {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("taloscope-demo: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let options = SimOptions {
        state_dir: dir.path().to_path_buf(),
        time_scale: DEMO_TIME_SCALE,
    };
    let fleet = match sim_runtime.block_on(SimFleet::start(scenario, options)) {
        Ok(fleet) => fleet,
        Err(err) => {
            eprintln!("taloscope-demo: the demo fleet did not start: {err}");
            return ExitCode::FAILURE;
        }
    };
    let code = match console_command_line(&fleet, dir.path(), args) {
        Ok(argv) => match Cli::try_parse_args(argv) {
            Ok(cli) => taloscope::commands::run(cli),
            Err(err) => {
                let _ = err.print();
                ExitCode::from(2)
            }
        },
        Err(err) => {
            eprintln!("taloscope-demo: {err}");
            ExitCode::FAILURE
        }
    };
    sim_runtime.block_on(fleet.shutdown());
    drop(sim_runtime);
    code
}

/// `taloscope --talosconfig … --kubeconfig … --config … --state-dir DIR/state FLAGS…`.
fn console_command_line(
    fleet: &SimFleet,
    dir: &Path,
    args: &DemoArgs,
) -> Result<Vec<OsString>, String> {
    let config = match fleet.opennebula() {
        Some(one) => one.config_file(),
        None => {
            let empty = dir.join("taloscope.yaml");
            std::fs::write(&empty, "")
                .map_err(|err| format!("cannot write {}: {err}", empty.display()))?;
            empty
        }
    };
    let mut argv: Vec<OsString> = vec![
        "taloscope".into(),
        "--talosconfig".into(),
        fleet.talosconfig_path().into(),
        "--kubeconfig".into(),
        fleet.kubeconfig_path().into(),
        "--config".into(),
        config.into(),
        "--state-dir".into(),
        dir.join("state").into(),
        // The fleet stops when the console quits: it asks first while a rollout runs.
        "--demo-fleet".into(),
    ];
    argv.extend(args.console_flags());
    Ok(argv)
}
