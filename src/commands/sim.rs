use crate::cli::GlobalArgs;
use std::path::Path;
use std::process::ExitCode;
pub fn run(_global: &GlobalArgs, _scenario: &str, _state_dir: &Path, _time_scale: f64) -> ExitCode {
    eprintln!("sim: not built yet");
    ExitCode::from(2)
}
