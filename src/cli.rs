//! The command line: flags shared by every subcommand and the subcommands.
//! Parsing only; no IO happens here (`commands::main` runs what was parsed).
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::discovery::SourceOverrides;
use crate::tui::ColorMode;

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
    /// Where logs, journals and the audit log go; default the XDG state dir.
    #[arg(long, global = true, env = "TALOSCOPE_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

impl GlobalArgs {
    /// The files named by flags, for discovery.
    pub fn source_overrides(&self) -> SourceOverrides {
        SourceOverrides {
            config: self.config.clone(),
            kubeconfig: self.kubeconfig.clone(),
            talosconfig: self.talosconfig.clone(),
        }
    }

    /// The display flags (`--readonly`, `--theme`, `--color`, `--ascii`, `--refresh`,
    /// `--log-level`) as the command line spells them: what `demo` hands on to the console
    /// it opens, which gets its files from the demo instead.
    pub fn display_flags(&self) -> Vec<std::ffi::OsString> {
        let mut flags: Vec<std::ffi::OsString> = Vec::new();
        if self.readonly {
            flags.push("--readonly".into());
        }
        if let Some(theme) = &self.theme {
            flags.extend(["--theme".into(), theme.into()]);
        }
        if let Some(color) = self.color.to_possible_value() {
            flags.extend(["--color".into(), color.get_name().into()]);
        }
        if self.ascii {
            flags.push("--ascii".into());
        }
        if let Some(refresh) = self.refresh {
            flags.extend(["--refresh".into(), refresh.to_string().into()]);
        }
        if let Some(level) = &self.log_level {
            flags.extend(["--log-level".into(), level.into()]);
        }
        flags
    }
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
        /// Seconds the whole status may take; what has not answered by then is reported as such.
        #[arg(long, value_name = "SECS", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=3600))]
        timeout: u64,
    },
    /// Open the console on the built-in simulated demo fleet (runs `taloscope-sim demo`,
    /// found next to this executable).
    Demo,
    /// Guarded rolling Talos OS upgrade of one cluster (--context): --plan shows the plan and
    /// every guard; --yes --confirm NAME runs it. Exit 0 done / 1 blocked or failed / 2 usage.
    Upgrade(UpgradeArgs),
    /// Add nodes to a cluster (--context) as VMs from its OpenNebula provider,
    /// and follow each until it has joined.
    Provision(ProvisionArgs),
    /// Guarded Kubernetes upgrade of one cluster (--context), as `talosctl upgrade-k8s`:
    /// --plan shows the steps, removed-API counts and every guard; --yes --confirm NAME runs it.
    #[command(name = "upgrade-k8s")]
    UpgradeK8s(UpgradeK8sArgs),
    /// etcd maintenance of one cluster (--context): `alarms` lists them with every member's
    /// database against its quota; disarm, defrag, snapshot, forfeit and remove-member show
    /// their plan with --plan and run with --yes --confirm NAME. Exit 0 / 1 / 2 as `upgrade`.
    Etcd(EtcdArgs),
}

/// What `taloscope etcd` does.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum EtcdVerb {
    /// List the alarms and every member's database size against the quota (read-only).
    Alarms,
    /// Defragment the members over quota (followers first), then disarm every alarm.
    Disarm,
    /// Defragment one member (--node) or all, one at a time, the leader last.
    Defrag,
    /// Copy a member's database (--node, default the leader) to --out FILE.
    Snapshot,
    /// Hand the leadership of --node's member to another member.
    Forfeit,
    /// Remove --member (16-digit id or hostname) whose node is gone.
    RemoveMember,
}

/// `taloscope etcd`.
#[derive(Args, Debug, Clone)]
pub struct EtcdArgs {
    #[arg(value_enum)]
    pub verb: EtcdVerb,
    /// The node (name or address) whose member the action is about.
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,
    /// The member to remove: its 16-digit hex id or hostname.
    #[arg(long, value_name = "ID")]
    pub member: Option<String>,
    /// Where `snapshot` writes the database.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print the plan and every guard's verdict; change nothing.
    #[arg(long)]
    pub plan: bool,
    /// Run it (with --confirm).
    #[arg(long)]
    pub yes: bool,
    /// The cluster name typed in full, as the console asks.
    #[arg(long, value_name = "NAME")]
    pub confirm: Option<String>,
    #[arg(long, short, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    /// Seconds a snapshot may take to stream.
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
}

/// `taloscope upgrade`.
#[derive(Args, Debug, Clone)]
pub struct UpgradeArgs {
    /// Target Talos version, e.g. v1.12.0.
    #[arg(long, value_name = "VERSION")]
    pub to: String,
    /// Print the plan and every guard's verdict; change nothing.
    #[arg(long)]
    pub plan: bool,
    #[arg(long, short, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    /// Installer image (default ghcr.io/siderolabs/installer:<version>; custom or factory image).
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// Workers upgraded at once; control planes always go one at a time.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub max_parallel: usize,
    /// Stage the upgrade (legacy API only): reboot first, install early in the next boot.
    #[arg(long)]
    pub stage: bool,
    /// Keep EPHEMERAL (only nodes below Talos 1.8 need it).
    #[arg(long)]
    pub preserve: bool,
    /// Allow a target one minor below the running version.
    #[arg(long)]
    pub allow_downgrade: bool,
    /// A typed acknowledgement, e.g. "the Kubernetes API will be down" for a single control plane.
    #[arg(long, value_name = "TEXT")]
    pub ack: Vec<String>,
    /// Seconds one node may take before the rollout halts with it failed.
    #[arg(long, value_name = "SECS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub node_timeout: u64,
    /// Run the upgrade (with --confirm).
    #[arg(long)]
    pub yes: bool,
    /// The cluster name typed in full, as the console asks.
    #[arg(long, value_name = "NAME")]
    pub confirm: Option<String>,
    /// Don't cordon and drain each Kubernetes node before its reboot (Talos 1.13+ path; the
    /// legacy path's server drains by itself).
    #[arg(long)]
    pub no_drain: bool,
    /// Milliseconds between status reads while a node upgrades.
    #[arg(long, value_name = "MS", default_value_t = 2000, hide = true)]
    pub poll_ms: u64,
}

/// `taloscope upgrade-k8s`.
#[derive(Args, Debug, Clone)]
pub struct UpgradeK8sArgs {
    /// Target Kubernetes version, e.g. 1.35.0: a later patch or the next minor only.
    #[arg(long, value_name = "VERSION")]
    pub to: String,
    /// Print the steps, the removed-API counts and every guard's verdict; change nothing.
    #[arg(long)]
    pub plan: bool,
    #[arg(long, short, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    /// A typed acknowledgement, e.g. "objects in removed API versions become unreadable".
    #[arg(long, value_name = "TEXT")]
    pub ack: Vec<String>,
    /// Pull every new image on every node before the first step: the default, as talosctl's
    /// `--pre-pull-images` (accepted for scripts that pass it).
    #[arg(long, overrides_with = "no_pre_pull")]
    pub pre_pull: bool,
    /// Do not pull the new images before the first step.
    #[arg(long, overrides_with = "pre_pull")]
    pub no_pre_pull: bool,
    /// Seconds one step (one component on one node) may take before the rollout halts.
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub step_timeout: u64,
    /// Run the upgrade (with --confirm).
    #[arg(long)]
    pub yes: bool,
    /// The cluster name typed in full, as the console asks.
    #[arg(long, value_name = "NAME")]
    pub confirm: Option<String>,
    /// Milliseconds between status reads while a component restarts.
    #[arg(long, value_name = "MS", default_value_t = 2000, hide = true)]
    pub poll_ms: u64,
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
    /// A typed acknowledgement, e.g. "an even etcd member count" for a fourth control plane.
    #[arg(long, value_name = "TEXT")]
    pub ack: Vec<String>,
    /// Plan and progress as a table and lines, or as JSON.
    #[arg(long, short, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
}

fn parse_role(text: &str) -> Result<crate::config::MachineRole, String> {
    crate::config::MachineRole::parse(text)
        .ok_or_else(|| format!("{text:?} is not a role; use worker or controlplane"))
}
