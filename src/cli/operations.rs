//! The command lines of the on-call operations: reading a node (logs, dmesg)
//! and the guarded node, service and etcd actions. Each takes its config files
//! after the subcommand, as every headless command does.
use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{ArgMatches, Args, FromArgMatches, Subcommand, ValueEnum};

use super::{GateArgs, NodeInfoArgs, OutputFormat, SourceArgs};
use crate::approval::NodeOperation;

/// `taloscope logs`: the flags of `dmesg`, and which log of the node.
#[derive(Args, Debug, Clone)]
pub struct LogsArgs {
    #[command(flatten)]
    pub stream: NodeLogArgs,
    /// The service (etcd, kubelet, apid, machined...), or with -k a Kubernetes container
    /// as namespace/pod:container.
    #[arg(value_name = "SERVICE")]
    pub service: String,
    /// Only the last N lines (default: the whole log).
    #[arg(long, value_name = "N")]
    pub tail: Option<u32>,
    /// SERVICE names a Kubernetes container (the CRI namespace), as `talosctl logs -k`.
    #[arg(long, short)]
    pub kubernetes: bool,
}

/// `taloscope dmesg`, and what `logs` shares with it: the node, whether to follow its log,
/// and how each line is printed.
#[derive(Args, Debug, Clone)]
pub struct NodeLogArgs {
    #[command(flatten)]
    pub sources: SourceArgs,
    /// The node: its name (as `taloscope status` lists it) or its address.
    #[arg(long, value_name = "NODE")]
    pub node: String,
    /// Keep printing new lines as the node writes them.
    #[arg(long, short)]
    pub follow: bool,
    /// Lines as text, or one JSON object per line (`{"node","line"}`).
    #[arg(long, short, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
}

/// `taloscope node ACTION`.
#[derive(Args, Debug, Clone)]
pub struct NodeArgs {
    #[command(subcommand)]
    pub action: NodeCommand,
}

/// What `taloscope node` does to the node.
#[derive(Subcommand, Debug, Clone)]
pub enum NodeCommand {
    // A guarded action: `reboot`, `shutdown`, `cordon`, `uncordon`, `drain`...
    #[command(flatten)]
    Act(NodeAct),
    /// Remove a node that is no longer a member from the talosconfig context (its nodes, and
    /// its endpoints when listed there), a backup of the file first.
    Forget(ForgetArgs),
    /// What runs inside the node and what it holds: CPU, memory, load, uptime, disks,
    /// volumes, network, processes, containers. Read-only (os:reader suffices).
    Info(NodeInfoArgs),
}

/// `taloscope node VERB`, one subcommand for each of `NodeOperation::ON_NODE`, named and
/// described by its facts.
#[derive(Debug, Clone)]
pub struct NodeAct {
    pub operation: NodeOperation,
    pub flags: NodeActionArgs,
}

impl FromArgMatches for NodeAct {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut matches.clone())
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        let Some((verb, mut flags)) = matches.remove_subcommand() else {
            return Err(clap::Error::new(ErrorKind::MissingSubcommand));
        };
        let Some(operation) = NodeOperation::ON_NODE
            .into_iter()
            .find(|op| op.facts().cli_verb == verb)
        else {
            return Err(clap::Error::new(ErrorKind::InvalidSubcommand));
        };
        let flags = NodeActionArgs::from_arg_matches_mut(&mut flags)?;
        Ok(NodeAct { operation, flags })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for NodeAct {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        NodeOperation::ON_NODE.iter().fold(cmd, |cmd, op| {
            let facts = op.facts();
            // After the flags, whose own doc would name the subcommand otherwise.
            let act = NodeActionArgs::augment_args(clap::Command::new(facts.cli_verb));
            cmd.subcommand(act.about(facts.about).long_about(None))
        })
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        (NodeOperation::ON_NODE.iter()).any(|op| op.facts().cli_verb == name)
    }
}

/// `taloscope node forget`.
#[derive(Args, Debug, Clone)]
pub struct ForgetArgs {
    /// The node's address (or name), as `taloscope status` lists it.
    #[arg(long, value_name = "ADDRESS")]
    pub node: String,
    #[command(flatten)]
    pub gate: GateArgs,
}

/// `taloscope service ACTION`.
#[derive(Args, Debug, Clone)]
pub struct ServiceArgs {
    #[command(subcommand)]
    pub action: ServiceCommand,
}

#[derive(Subcommand, Debug, Clone)]
pub enum ServiceCommand {
    /// Restart one Talos service of a node (Talos allows the kubelet and extensions).
    Restart {
        /// The service, as `talosctl services` names it (kubelet).
        service: String,
        #[command(flatten)]
        flags: NodeActionArgs,
    },
}

/// The flags of every node action.
#[derive(Args, Debug, Clone)]
pub struct NodeActionArgs {
    /// The node: its name or address, as `taloscope status` lists it.
    #[arg(long, value_name = "NODE")]
    pub node: String,
    #[command(flatten)]
    pub gate: GateArgs,
    /// Seconds the whole action may take, the node's return included.
    #[arg(long, value_name = "SECS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub node_timeout: u64,
    /// Seconds the drain's evictions may take (talosctl's --drain-timeout).
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub drain_timeout: u64,
    /// Milliseconds between status reads while following the node.
    #[arg(long, value_name = "MS", default_value_t = 2000, hide = true)]
    pub poll_ms: u64,
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
    /// Where `snapshot` writes the database: a new file, never a device, FIFO, socket or symlink.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Let `snapshot` replace an existing regular file at --out.
    #[arg(long)]
    pub overwrite: bool,
    #[command(flatten)]
    pub gate: GateArgs,
    /// Seconds a snapshot may take to stream.
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
}
