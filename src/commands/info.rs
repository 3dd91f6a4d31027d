use crate::cli::GlobalArgs;
use std::process::ExitCode;
pub fn run(_global: &GlobalArgs) -> ExitCode {
    eprintln!("info: not built yet");
    ExitCode::from(2)
}
