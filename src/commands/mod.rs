//! One file per subcommand: each sets up what it needs (logging, runtime,
//! discovery) and returns the process exit code.
use std::process::ExitCode;

use crate::cli::{
    CapiArgs, CapiVerb, Cli, Command, ConfigArgs, ConfigVerb, GateArgs, NodeAct, NodeArgs,
    NodeCommand, ServiceArgs, ServiceCommand,
};
use crate::node_actions::NodeOperation;

mod capi;
mod capi_doctor;
mod certs;
mod config;
mod config_patch;
mod console;
mod contexts;
mod create;
mod delete;
mod demo;
mod etcd;
mod exit;
mod forget;
mod gate;
mod health;
mod info;
mod logs;
mod node;
mod node_info;
mod plan_report;
mod progress;
mod provision;
mod scale;
mod session;
mod status;
mod top;
mod upgrade;

/// Parses the command line and runs the chosen subcommand.
pub fn main() -> ExitCode {
    crate::install_crypto_provider();
    run(Cli::try_parse_args(std::env::args_os()).unwrap_or_else(|e| e.exit()))
}

pub fn run(cli: Cli) -> ExitCode {
    let global = cli.global;
    // The console sets up its own log; a headless command logs to the same
    // file when asked to (`--log-level` or RUST_LOG), as `info` says.
    let asked = global.log_level.is_some() || std::env::var_os("RUST_LOG").is_some();
    let _log = (cli.command.is_some() && asked).then(|| {
        let dir = crate::paths::Paths::resolve(global.state_dir.as_deref()).log_dir();
        crate::logging::init(&dir, global.log_level.as_deref())
    });
    use exit::exit_code;
    let secs = std::time::Duration::from_secs;
    // One exit rule: a mutating command's stop is also a JSON line with `--output json`.
    let gated = |result, gate: &GateArgs| exit::exit_code_as(result, gate.output);
    match cli.command {
        None => console::run(&global),
        Some(Command::Contexts(read)) => contexts::run(&global, read.output),
        Some(Command::Info { .. }) => info::run(&global),
        Some(Command::Demo(_)) => demo::run(&global),
        Some(Command::Status { read, timeout }) => {
            let output = read.output;
            exit::exit_code_as(status::run(&global, output, secs(timeout)), output)
        }
        Some(Command::Certs(read)) => exit_code(certs::run(&global, read.output)),
        Some(Command::Health { read, timeout }) => {
            exit_code(health::run(&global, read.output, secs(timeout)))
        }
        Some(Command::Logs(args)) => exit_code(logs::run_logs(&global, &args)),
        Some(Command::Dmesg(args)) => exit_code(logs::run_dmesg(&global, &args)),
        Some(Command::Top(args)) => exit_code(top::run(&global, &args)),
        Some(Command::Config(ConfigArgs { verb })) => match verb {
            ConfigVerb::Show(args) => exit_code(config::run_show(&global, &args)),
            ConfigVerb::Drift(args) => exit_code(config::run_drift(&global, &args)),
            ConfigVerb::Patch(args) => gated(config_patch::run(&global, &args), &args.gate),
        },
        Some(Command::Capi(CapiArgs { verb })) => match verb {
            CapiVerb::Status(args) => {
                exit::exit_code_as(capi::run(&global, &args), args.read.output)
            }
            CapiVerb::Doctor(args) => gated(capi_doctor::run(&global, &args), &args.gate),
        },
        Some(Command::Node(NodeArgs { action })) => match action {
            NodeCommand::Act(NodeAct { operation, flags }) => {
                gated(node::run(&global, operation, &flags), &flags.gate)
            }
            NodeCommand::Forget(args) => gated(forget::run(&global, &args), &args.gate),
            NodeCommand::Info(args) => exit_code(node_info::run(&global, &args)),
        },
        Some(Command::Service(ServiceArgs {
            action: ServiceCommand::Restart { service, flags },
        })) => {
            let operation = NodeOperation::ServiceRestart(service);
            gated(node::run(&global, operation, &flags), &flags.gate)
        }
        Some(Command::Upgrade(args)) => gated(upgrade::run(&global, &args), &args.rollout.gate),
        Some(Command::UpgradeK8s(args)) => {
            let run = upgrade::rollout::run(&global, &args.to, &args.rollout, &args);
            gated(run, &args.rollout.gate)
        }
        Some(Command::Etcd(args)) => gated(etcd::run(&global, &args), &args.gate),
        Some(Command::Provision(args)) => gated(provision::run(&global, &args), &args.gate),
        Some(Command::Create(args)) => gated(create::run(&global, &args), &args.gate),
        Some(Command::Delete(args)) => gated(delete::run(&global, &args), &args.gate),
        Some(Command::Scale(args)) => gated(scale::run(&global, &args), &args.gate),
    }
}

/// The tokio runtime a command runs on (and the benchmarks, to measure what runs). Two
/// workers: these are 2-core machines and the console's IO is light.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// The [`runtime`], or the stop that says it could not start.
fn command_runtime() -> Result<tokio::runtime::Runtime, exit::Stop> {
    runtime().map_err(|e| {
        let why = format!("cannot start the async runtime: {e}");
        exit::Stop(exit::EXIT_BLOCKED, why)
    })
}
