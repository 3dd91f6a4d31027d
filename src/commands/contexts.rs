use crate::cli::{GlobalArgs, OutputFormat};
use std::process::ExitCode;
pub fn run(_global: &GlobalArgs, _output: OutputFormat) -> ExitCode {
    eprintln!("contexts: not built yet");
    ExitCode::from(2)
}
