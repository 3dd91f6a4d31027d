//! The command line: flags shared by every subcommand and the subcommands.
//! Parsing only; no IO happens here (`commands::main` runs what was parsed).
use std::path::PathBuf;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use crate::config::MachineRole;
use crate::discovery::SourceOverrides;
use crate::tui::ColorMode;

mod gate;
pub use gate::GateArgs;
mod operations;
pub use operations::*;
mod lifecycle;
pub use lifecycle::{CreateArgs, DeleteArgs};
mod capi;
pub use capi::*;
mod config;
pub use config::*;
mod node_resources;
pub use node_resources::{NodeInfoArgs, TopArgs};

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

/// Every flag a subcommand run reads, as clap parses it: the flags every subcommand
/// understands, then the console's files, look and console-only flags ([`Cli::try_parse_args`]
/// puts those a subcommand took after its name in place).
#[derive(Args, Debug, Clone, Default)]
pub struct GlobalArgs {
    /// taloscope's own config file (pairings, providers); default in the XDG config dir.
    #[arg(long, global = true, env = "TALOSCOPE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Cluster (or context) to work on.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// Refuse every mutating action.
    #[arg(long, global = true)]
    pub readonly: bool,
    /// When to use colour.
    #[arg(long, global = true, value_enum, default_value_t = ColorMode::Auto)]
    pub color: ColorMode,
    /// Log level or filter (also RUST_LOG); logs go to a file, never the terminal.
    #[arg(long, global = true, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// Where logs, journals and the audit log go; default the XDG state dir.
    #[arg(long, global = true, env = "TALOSCOPE_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// The console's files (a subcommand that reads them takes them too).
    #[command(flatten)]
    pub sources: SourceArgs,
    /// The console's look.
    #[command(flatten)]
    pub look: LookArgs,
    #[command(flatten)]
    pub console: ConsoleArgs,
}

/// The kubeconfig and talosconfig files: on the console and the subcommands that read them
/// (not `demo`, which brings its own).
#[derive(Args, Debug, Clone, Default)]
pub struct SourceArgs {
    /// kubeconfig file; default: $KUBECONFIG (a ':'-separated list), else ~/.kube/config.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// talosconfig file; default: $TALOSCONFIG (a ':'-separated list), else $TALOS_HOME/config or ~/.talos/config.
    #[arg(long, value_name = "FILE")]
    pub talosconfig: Option<PathBuf>,
}

/// What every read that prints a report takes: the files it reads, and its report as a table
/// or as its JSON contract.
#[derive(Args, Debug, Clone, Default)]
pub struct ReadArgs {
    #[command(flatten)]
    pub sources: SourceArgs,
    #[arg(long, short, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
}

/// How the console looks: on the console, `demo`, and `info` (which reports them).
#[derive(Args, Debug, Clone, Default)]
pub struct LookArgs {
    /// Theme name: default, light, high-contrast, mono, or a user theme.
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,
    /// ASCII borders and glyphs, whatever the locale says.
    #[arg(long)]
    pub ascii: bool,
}

/// What only the interactive console (and `demo`, which opens it) reads.
#[derive(Args, Debug, Clone, Default)]
pub struct ConsoleArgs {
    /// Seconds between polls of the cluster on screen in the console (default 5;
    /// the other clusters every 30).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub refresh: Option<u64>,
    /// Set by `taloscope-demo`: the fleet runs in this process and stops when the
    /// console quits, so quitting mid-rollout says so.
    #[arg(long, hide = true)]
    pub demo_fleet: bool,
}

/// `taloscope demo`: the flags it hands on to the console it opens.
#[derive(Args, Debug, Clone, Default)]
pub struct DemoArgs {
    #[command(flatten)]
    pub look: LookArgs,
    #[command(flatten)]
    pub console: ConsoleArgs,
}

impl Cli {
    /// Parses a command line as clap does, then puts the files and look a subcommand took
    /// after its name in place of those given before it, so [`Cli::global`] holds them
    /// whatever the subcommand (a new one needs no line here).
    pub fn try_parse_args<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let matches = <Cli as CommandFactory>::command().try_get_matches_from(args)?;
        let mut cli = <Cli as FromArgMatches>::from_arg_matches(&matches)
            .map_err(|e| e.format(&mut <Cli as CommandFactory>::command()))?;
        let mut m = &matches;
        while let Some((_, sub)) = m.subcommand() {
            m = sub;
            let global = &mut cli.global;
            let (sources, look) = (&mut global.sources, &mut global.look);
            sources.kubeconfig = given(m, "kubeconfig").or(sources.kubeconfig.take());
            sources.talosconfig = given(m, "talosconfig").or(sources.talosconfig.take());
            look.theme = given(m, "theme").or(look.theme.take());
            look.ascii |= given(m, "ascii").unwrap_or(false);
            global.console.refresh = given(m, "refresh").or(global.console.refresh);
        }
        Ok(cli)
    }
}

/// The value of flag `id` a subcommand's matches hold; a flag the subcommand does not take is
/// no error, only not given.
fn given<T: Clone + Send + Sync + 'static>(m: &ArgMatches, id: &str) -> Option<T> {
    m.try_get_one::<T>(id).ok().flatten().cloned()
}

impl GlobalArgs {
    /// The files named by flags, for discovery.
    pub fn source_overrides(&self) -> SourceOverrides {
        SourceOverrides {
            config: self.config.clone(),
            kubeconfig: self.sources.kubeconfig.clone(),
            talosconfig: self.sources.talosconfig.clone(),
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
        if let Some(theme) = &self.look.theme {
            flags.extend(["--theme".into(), theme.into()]);
        }
        if let Some(color) = self.color.to_possible_value() {
            flags.extend(["--color".into(), color.get_name().into()]);
        }
        if self.look.ascii {
            flags.push("--ascii".into());
        }
        if let Some(refresh) = self.console.refresh {
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
    Contexts(ReadArgs),
    /// Print resolved config files, directories, theme, log file and terminal capabilities.
    Info {
        #[command(flatten)]
        sources: SourceArgs,
        #[command(flatten)]
        look: LookArgs,
    },
    /// One-shot status of one cluster (--context) or all of them.
    Status {
        #[command(flatten)]
        read: ReadArgs,
        /// Seconds the whole status may take; what has not answered by then is reported as such.
        #[arg(long, value_name = "SECS", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=3600))]
        timeout: u64,
    },
    /// Open the console on the built-in simulated demo fleet (runs `taloscope-demo`, found
    /// next to this executable).
    Demo(DemoArgs),
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
    /// Guarded action on one node (--context, --node): reboot, drain... (`node --help` lists
    /// them). --plan shows every guard; --yes --confirm NODE runs it. Exit 0 / 1 / 2.
    Node(NodeArgs),
    /// Guarded service action on one node: `service restart --node N SERVICE`.
    Service(ServiceArgs),
    /// Print a service's log of one node (--context, --node), as `talosctl logs`; --follow
    /// keeps printing new lines. Read-only (the os:reader role suffices).
    Logs(LogsArgs),
    /// Print the kernel log of one node (--context, --node), as `talosctl dmesg`.
    Dmesg(NodeLogArgs),
    /// Run the cluster's health checks (--context) as `talosctl health` does, on a control
    /// plane node: a checklist that fills in. Exit 0 healthy / 1 not / 2 usage.
    Health {
        #[command(flatten)]
        read: ReadArgs,
        /// Seconds the checks may take to pass before the failing one is reported.
        #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
        timeout: u64,
    },
    /// When the certificates of the contexts end (one cluster with --context, else all): the
    /// Talos CA and client certificate, the Kubernetes client certificate. WARN within 30
    /// days, FAIL within 7. Exit 0 / 1 a failure / 2 usage.
    Certs(ReadArgs),
    /// etcd maintenance of one cluster (--context): `alarms` lists them with every member's
    /// database against its quota; disarm, defrag, snapshot, forfeit and remove-member show
    /// their plan with --plan and run with --yes --confirm NAME. Exit 0 / 1 / 2 as `upgrade`.
    Etcd(EtcdArgs),
    /// Create a whole Talos cluster on a provider: VMs, machine configs, bootstrap, contexts.
    /// --plan shows the plan and every guard; --yes --confirm NAME runs it (resumes a killed
    /// run). Exit 0 done / 1 blocked or failed / 2 usage.
    Create(CreateArgs),
    /// Delete a cluster (--context) taloscope created (or whose VMs --adopt names): terminate
    /// its VMs, remove its contexts (backups kept). --plan, or --yes --confirm NAME with
    /// --ack "this destroys the cluster and its data".
    Delete(DeleteArgs),
    /// Cluster API: `capi status --context MGMT` prints the workload clusters a management
    /// cluster owns, as `clusterctl describe cluster` does.
    Capi(CapiArgs),
    /// Scale a Cluster API workload cluster (--context) the CAPI way: spec.replicas of its
    /// TalosControlPlane (--role controlplane) or MachineDeployment (--role worker), guarded,
    /// then followed until the Machines are Ready or deleted. --plan, or --yes --confirm NAME.
    Scale(ScaleArgs),
    /// The machine configuration the nodes run: `config show --node N` prints one node's,
    /// secrets redacted unless --reveal; `config drift` compares the nodes of each role.
    Config(ConfigArgs),
    /// What runs on a cluster's nodes (--context), busiest first: each node's CPU, memory and
    /// fullest volume, or with --node that node's processes. Read-only (os:reader suffices).
    Top(TopArgs),
}

/// `taloscope upgrade`.
#[derive(Args, Debug, Clone)]
pub struct UpgradeArgs {
    #[command(flatten)]
    pub rollout: RolloutArgs,
    /// Target Talos version, e.g. v1.12.0; without it, --plan lists the offered targets.
    #[arg(
        long,
        value_name = "VERSION",
        default_value = "",
        hide_default_value = true
    )]
    pub to: String,
    /// Offer and accept pre-releases (alpha, beta, rc) the registry lists, not only stable ones.
    #[arg(long)]
    pub pre_release: bool,
    /// Installer image (default ghcr.io/siderolabs/installer:<version>; custom or factory image).
    #[arg(long, value_name = "IMAGE", value_parser = parse_image)]
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
    /// Seconds one node may take before the rollout halts with it failed.
    #[arg(long, value_name = "SECS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub node_timeout: u64,
    /// Don't cordon and drain each Kubernetes node before its reboot (Talos 1.13+ path; the
    /// legacy path's server drains by itself).
    #[arg(long)]
    pub no_drain: bool,
}

/// The flags both upgrade commands take before their own: the files, the gate's flags and
/// those of the rollout.
#[derive(Args, Debug, Clone)]
pub struct RolloutArgs {
    #[command(flatten)]
    pub gate: GateArgs,
    /// Milliseconds between status reads while a step runs.
    #[arg(long, value_name = "MS", default_value_t = 2000, hide = true)]
    pub poll_ms: u64,
    /// Take over a rollout whose run is still alive: its holder typed in full, exactly as the
    /// refusal names it (user@host/pid-start); needs --yes --confirm too.
    #[arg(long, value_name = "HOLDER", requires = "yes")]
    pub take_over: Option<String>,
    /// Upgrade in place even when a Cluster API management cluster owns the cluster: refused
    /// there (its guard names the CAPI way), which is otherwise taken by itself.
    #[arg(long)]
    pub in_place: bool,
}

/// `taloscope upgrade-k8s`.
#[derive(Args, Debug, Clone)]
pub struct UpgradeK8sArgs {
    #[command(flatten)]
    pub rollout: RolloutArgs,
    /// Target Kubernetes version, e.g. 1.35.0: a later patch or the next minor only.
    #[arg(long, value_name = "VERSION")]
    pub to: String,
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
}

/// `taloscope provision`: plan with --plan; run with --yes --confirm CLUSTER.
#[derive(Args, Debug, Clone)]
pub struct ProvisionArgs {
    #[command(flatten)]
    pub gate: GateArgs,
    /// Role of the new nodes.
    #[arg(long, value_parser = parse_role(MachineRole::Controlplane, MachineRole::Worker), required_unless_present = "terminate")]
    pub role: Option<MachineRole>,
    /// How many new nodes.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=crate::provision::MAX_COUNT as u64))]
    pub count: u64,
    /// Provider from taloscope's config (default: the cluster's own).
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// VM name pattern: the placeholders cluster, role and n in braces
    /// (default: cluster-role-n, numbered past names already in use).
    #[arg(long, value_name = "PATTERN")]
    pub name_pattern: Option<String>,
    /// Terminate this VM (one a provision started) instead of provisioning.
    #[arg(long, value_name = "VM_ID", conflicts_with = "role")]
    pub terminate: Option<u64>,
    /// Give up on nodes that have not joined after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 1200)]
    pub timeout: u64,
}

/// The one parser of `--role` (`provision`, `scale`, `config patch`): `controlplane` (or
/// `control-plane`, as Kubernetes labels it) or `worker`, as the role type the command takes,
/// given by its two values.
fn parse_role<R: Copy + Send + Sync + 'static>(
    controlplane: R,
    worker: R,
) -> impl Fn(&str) -> Result<R, String> + Clone + Send + Sync + 'static {
    move |text: &str| match text {
        "controlplane" | "control-plane" => Ok(controlplane),
        "worker" => Ok(worker),
        _ => Err(format!(
            "{text:?} is not a role; use controlplane or worker"
        )),
    }
}

/// An installer image, refused here unless it is an image reference at all.
fn parse_image(text: &str) -> Result<String, String> {
    let image = text.trim();
    crate::upgrade::check_image_reference(image).map_err(|why| {
        format!(
            "{:?} is not an image reference: {why} (expected [registry/]repository[:tag][@digest], e.g. ghcr.io/siderolabs/installer:v1.12.0)",
            crate::printable::line(image)
        )
    })?;
    Ok(image.to_string())
}

#[cfg(test)]
mod tests;
