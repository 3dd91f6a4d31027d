//! One file per subcommand: each sets up what it needs (logging, runtime,
//! discovery) and returns the process exit code.
use std::process::ExitCode;

use crate::cli::{Cli, Command};

pub mod capi;
pub mod capi_doctor;
pub mod certs;
pub mod config;
pub mod config_patch;
pub mod console;
pub mod contexts;
pub mod create;
pub mod delete;
pub mod demo;
pub mod etcd;
mod exit;
pub mod forget;
mod gate;
pub mod health;
pub mod info;
pub mod logs;
pub mod node;
pub mod node_info;
mod plan_report;
mod progress;
pub mod provision;
pub mod scale;
mod session;
pub mod status;
pub mod top;
pub mod upgrade;

/// Parses the command line and runs the chosen subcommand.
pub fn main() -> ExitCode {
    crate::install_crypto_provider();
    run(<Cli as clap::Parser>::parse())
}

pub fn run(cli: Cli) -> ExitCode {
    let global = cli.global();
    // The console sets up its own log; a headless command logs to the same
    // file when asked to (`--log-level` or RUST_LOG), as `info` says.
    let asked = global.log_level.is_some() || std::env::var_os("RUST_LOG").is_some();
    let _log = (cli.command.is_some() && asked).then(|| {
        let dir = crate::paths::Paths::resolve(global.state_dir.as_deref()).log_dir();
        crate::logging::init(&dir, global.log_level.as_deref())
    });
    match cli.command {
        None => console::run(&global),
        Some(Command::Contexts { output, .. }) => contexts::run(&global, output),
        Some(Command::Info { .. }) => info::run(&global),
        Some(Command::Status {
            output, timeout, ..
        }) => status::run(&global, output, std::time::Duration::from_secs(timeout)),
        Some(Command::Demo(_)) => demo::run(&global),
        Some(Command::Upgrade(args)) => upgrade::run(&global, &args),
        Some(Command::Provision(args)) => provision::run(&global, &args),
        Some(Command::UpgradeK8s(args)) => upgrade::kubernetes::run(&global, &args),
        Some(Command::Node(args)) => node::run_node(&global, args),
        Some(Command::Service(args)) => node::run_service(&global, args),
        Some(Command::Logs(args)) => logs::run_logs(&global, &args),
        Some(Command::Dmesg(args)) => logs::run_dmesg(&global, &args),
        Some(Command::Certs { output, .. }) => certs::run(&global, output),
        Some(Command::Health {
            output, timeout, ..
        }) => health::run(&global, output, std::time::Duration::from_secs(timeout)),
        Some(Command::Etcd(args)) => etcd::run(&global, &args),
        Some(Command::Create(args)) => create::run(&global, &args),
        Some(Command::Delete(args)) => delete::run(&global, &args),
        Some(Command::Capi(args)) => capi::run(&global, &args),
        Some(Command::Scale(args)) => scale::run(&global, &args),
        Some(Command::Config(args)) => config::run(&global, &args),
        Some(Command::Top(args)) => top::run(&global, &args),
    }
}

/// A tokio runtime for a subcommand. Two workers: these are 2-core machines and
/// the console's IO is light.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// The [`runtime`] a command runs on, or the stop that says it could not start.
fn command_runtime() -> Result<tokio::runtime::Runtime, exit::Stop> {
    runtime().map_err(|e| {
        let why = format!("cannot start the async runtime: {e}");
        exit::Stop(exit::EXIT_BLOCKED, why)
    })
}
