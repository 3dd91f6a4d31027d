//! `taloscope demo`: the demo fleet is a simulator, which is not part of this binary. It runs
//! `taloscope-demo` from the directory this executable is in, passing the display flags
//! through and its exit code back; without one there, it says how to get one and exits 2.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cli::GlobalArgs;

const SIM_BINARY: &str = "taloscope-demo";

pub fn run(global: &GlobalArgs) -> ExitCode {
    let Some(sim) = sibling_sim() else {
        eprintln!(
            "taloscope: the demo needs {SIM_BINARY} next to this executable, and there is none.\n\
             In the source tree run `cargo run -p {SIM_BINARY}`, or install it with\n\
             `cargo install --path crates/{SIM_BINARY}` (it installs beside taloscope)."
        );
        return ExitCode::from(super::exit::EXIT_USAGE);
    };
    let status = std::process::Command::new(&sim)
        .args(global.display_flags())
        .status();
    match status {
        Ok(status) => match status.code() {
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            // Ended by a signal: the shell convention, 128 + the signal.
            None => {
                use std::os::unix::process::ExitStatusExt as _;
                let signal = status.signal().unwrap_or(0);
                ExitCode::from(u8::try_from(128 + signal).unwrap_or(1))
            }
        },
        Err(err) => {
            eprintln!("taloscope: cannot run {}: {err}", sim.display());
            ExitCode::FAILURE
        }
    }
}

/// `taloscope-demo` in the running executable's directory, if it is there.
fn sibling_sim() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    sim_beside(&exe)
}

fn sim_beside(exe: &Path) -> Option<PathBuf> {
    let sim = exe.parent()?.join(SIM_BINARY);
    sim.is_file().then_some(sim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{ConsoleArgs, LookArgs, SourceArgs};

    #[test]
    fn display_flags_pass_through_and_files_do_not() {
        let global = GlobalArgs {
            readonly: true,
            look: LookArgs {
                theme: Some("mono".into()),
                ascii: true,
            },
            console: ConsoleArgs {
                refresh: Some(2),
                demo_fleet: false,
            },
            log_level: Some("debug".into()),
            config: Some("/etc/taloscope.yaml".into()),
            sources: SourceArgs {
                kubeconfig: Some("/k".into()),
                talosconfig: None,
            },
            ..GlobalArgs::default()
        };
        let flags: Vec<String> = global
            .display_flags()
            .into_iter()
            .map(|f| f.into_string().expect("utf-8"))
            .collect();
        assert_eq!(
            flags,
            [
                "--readonly",
                "--theme",
                "mono",
                "--color",
                "auto",
                "--ascii",
                "--refresh",
                "2",
                "--log-level",
                "debug"
            ]
        );
    }

    #[test]
    fn no_sim_beside_a_lone_executable() {
        let dir = tempfile::tempdir().expect("dir");
        let exe = dir.path().join("taloscope");
        std::fs::write(&exe, "").expect("write");
        assert_eq!(sim_beside(&exe), None);
        std::fs::write(dir.path().join(SIM_BINARY), "").expect("write");
        assert_eq!(sim_beside(&exe), Some(dir.path().join(SIM_BINARY)));
    }
}
