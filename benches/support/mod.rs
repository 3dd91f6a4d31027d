//! What the in-process benches share: a runtime to run one on, the simulated fleet started in
//! a temporary state dir, and the look the console draws with on a 16-colour terminal.
#![allow(dead_code)]
use std::future::Future;

use taloscope::tui::{Caps, ColorDepth, Theme};
use taloscope::views::Look;
use taloscope_sim::{Scenario, SimFleet, SimOptions};

/// Runs `bench` on the runtime the commands use; a failure is printed and ends the process.
pub fn run(name: &str, bench: impl Future<Output = Result<(), String>>) {
    taloscope::install_crypto_provider();
    let runtime = match taloscope::commands::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{name}: cannot start a runtime: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = runtime.block_on(bench) {
        eprintln!("{name}: {e}");
        std::process::exit(1);
    }
}

/// The simulated fleet of `scenario` at `time_scale`, its state in a temporary directory
/// that lives as long as the returned guard.
pub async fn start_sim(
    scenario: Scenario,
    time_scale: f64,
) -> Result<(SimFleet, tempfile::TempDir), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let options = SimOptions {
        state_dir: dir.path().to_path_buf(),
        time_scale,
    };
    let fleet = SimFleet::start(scenario, options)
        .await
        .map_err(|e| e.to_string())?;
    Ok((fleet, dir))
}

/// The default theme in 16 colours with UTF-8.
pub fn look() -> Look {
    Look::new(
        &Theme::default_theme(),
        &Caps {
            color: ColorDepth::Ansi16,
            no_color_env: false,
            utf8: true,
        },
    )
}
