//! `taloscope demo`: starts the built-in `demo` scenario in-process, in a
//! temporary state dir, and opens the console on it. The console is pointed at
//! the sim's own talosconfig, kubeconfig and taloscope config (its OpenNebula
//! and OneFlow providers), and keeps journals and the audit log in that temporary
//! dir too, so the user's configs and rollouts are neither read nor touched.
use std::io::IsTerminal;
use std::process::ExitCode;

use crate::cli::GlobalArgs;
use crate::sim::{Scenario, SimFleet, SimOptions};

/// Simulated seconds per real second in the demo: a reboot takes seconds.
const DEMO_TIME_SCALE: f64 = 4.0;

pub fn run(global: &GlobalArgs) -> ExitCode {
    if !std::io::stdout().is_terminal() {
        eprintln!("taloscope: stdout is not a terminal; the demo opens the console and needs one");
        return ExitCode::from(2);
    }
    let Some(scenario) = Scenario::builtin("demo") else {
        eprintln!("taloscope: the built-in demo scenario is missing");
        return ExitCode::FAILURE;
    };
    let dir = match tempfile::Builder::new().prefix("taloscope-demo-").tempdir() {
        Ok(dir) => dir,
        Err(err) => {
            eprintln!("taloscope: cannot make a temporary state dir for the demo: {err}");
            return ExitCode::FAILURE;
        }
    };
    // The sim gets a runtime of its own, whose workers serve it while the
    // console's runtime runs on this thread.
    let sim_runtime = match crate::commands::runtime() {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("taloscope: cannot start the async runtime: {err}");
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
            eprintln!("taloscope: the demo fleet did not start: {err}");
            return ExitCode::FAILURE;
        }
    };
    let config = match fleet.opennebula() {
        Some(one) => one.config_file(),
        None => {
            let empty = dir.path().join("taloscope.yaml");
            if let Err(err) = std::fs::write(&empty, "") {
                eprintln!("taloscope: cannot write {}: {err}", empty.display());
                return ExitCode::FAILURE;
            }
            empty
        }
    };
    let mut demo = global.clone();
    demo.talosconfig = Some(fleet.talosconfig_path());
    demo.kubeconfig = Some(fleet.kubeconfig_path());
    demo.config = Some(config);
    // Journals and the audit log stay inside the demo's dir.
    demo.state_dir = Some(dir.path().join("state"));
    let code = crate::commands::console::run(&demo);
    sim_runtime.block_on(fleet.shutdown());
    drop(sim_runtime);
    code
}
