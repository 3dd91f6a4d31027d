use crate::cli::GlobalArgs;
use std::process::ExitCode;
pub fn run(_global: &GlobalArgs) -> ExitCode {
    eprintln!("console: not built yet");
    ExitCode::from(2)
}
