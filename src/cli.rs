//! The command line: flags shared by every subcommand, the subcommands, and the
//! hand-over to `commands`. Parsing only; no IO happens here.
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "taloscope",
    version,
    about = "Terminal operations console for Talos Linux Kubernetes clusters"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags every subcommand understands.
#[derive(Args, Debug, Clone, Default)]
pub struct GlobalArgs {
    /// taloscope's own config file (pairings, providers); default in the XDG config dir.
    #[arg(long, global = true, env = "TALOSCOPE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// kubeconfig file; default: $KUBECONFIG (a ':'-separated list), else ~/.kube/config.
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// talosconfig file; default: $TALOSCONFIG (a ':'-separated list), else $TALOS_HOME/config or ~/.talos/config.
    #[arg(long, global = true, value_name = "FILE")]
    pub talosconfig: Option<PathBuf>,
    /// Cluster (or context) to work on.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// Refuse every mutating action.
    #[arg(long, global = true)]
    pub readonly: bool,
    /// Theme name: default, light, high-contrast, mono, or a user theme.
    #[arg(long, global = true, value_name = "NAME")]
    pub theme: Option<String>,
    /// When to use colour.
    #[arg(long, global = true, value_enum, default_value_t = ColorMode::Auto)]
    pub color: ColorMode,
    /// ASCII borders and glyphs, whatever the locale says.
    #[arg(long, global = true)]
    pub ascii: bool,
    /// Seconds between polls of the cluster on screen in the console (default 5;
    /// the other clusters every 30).
    #[arg(long, global = true, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub refresh: Option<u64>,
    /// Log level or filter (also RUST_LOG); logs go to a file, never the terminal.
    #[arg(long, global = true, value_name = "LEVEL")]
    pub log_level: Option<String>,
}

#[derive(ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ColorMode {
    #[default]
    Auto,
    Always,
    Never,
}

#[derive(ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutputFormat {
    #[default]
    Table,
    Json,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List the clusters found in kubeconfig and talosconfig contexts, and any config errors.
    Contexts {
        #[arg(long, short, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
    /// Print resolved config files, directories, theme, log file and terminal capabilities.
    Info,
    /// One-shot status of one cluster (--context) or all of them.
    Status {
        #[arg(long, short, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
    /// Run a simulated fleet on loopback (Talos apid over mutual TLS) in the foreground.
    Sim {
        /// Built-in scenario name or a scenario YAML file.
        #[arg(long, default_value = "healthy")]
        scenario: String,
        /// Where to write certificates and the talosconfig.
        #[arg(long, value_name = "DIR")]
        state_dir: PathBuf,
        /// Simulated seconds per real second (reboots, upgrades); larger is faster.
        #[arg(long, default_value_t = 1.0)]
        time_scale: f64,
    },
    /// Start the built-in demo fleet in-process and open the console on it.
    Demo,
    /// Add nodes to a cluster (--context) as VMs from its OpenNebula provider,
    /// and follow each until it has joined.
    Provision(ProvisionArgs),
}

/// `taloscope provision`: plan with --plan; run with --yes --confirm CLUSTER.
#[derive(Args, Debug, Clone)]
pub struct ProvisionArgs {
    /// Role of the new nodes.
    #[arg(long, value_parser = parse_role, required_unless_present = "terminate")]
    pub role: Option<crate::config::MachineRole>,
    /// How many new nodes.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub count: u64,
    /// Provider from taloscope's config (default: the cluster's own).
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// VM name pattern: the placeholders cluster, role and n in braces
    /// (default: cluster-role-n, numbered past names already in use).
    #[arg(long, value_name = "PATTERN")]
    pub name_pattern: Option<String>,
    /// Print the plan and change nothing.
    #[arg(long, conflicts_with = "yes")]
    pub plan: bool,
    /// Carry out the plan (with --confirm).
    #[arg(long, requires = "confirm")]
    pub yes: bool,
    /// The cluster's name, typed in full, to confirm.
    #[arg(long, value_name = "CLUSTER")]
    pub confirm: Option<String>,
    /// Terminate this VM (one a provision started) instead of provisioning.
    #[arg(long, value_name = "VM_ID", conflicts_with = "role")]
    pub terminate: Option<u64>,
    /// Give up on nodes that have not joined after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 1200)]
    pub timeout: u64,
    /// Plan and progress as a table and lines, or as JSON.
    #[arg(long, short, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
}

fn parse_role(text: &str) -> Result<crate::config::MachineRole, String> {
    crate::config::MachineRole::parse(text)
        .ok_or_else(|| format!("{text:?} is not a role; use worker or controlplane"))
}

/// Parses the command line and runs the chosen subcommand.
pub fn main() -> ExitCode {
    crate::install_crypto_provider();
    let cli = Cli::parse();
    crate::commands::run(cli)
}
