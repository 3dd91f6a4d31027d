//! The flags every mutating command shares, flattened into each one's arguments: the files
//! it reads, and one spelling and one meaning of `--plan`, `--yes`, `--confirm`, `--ack` and
//! `--output`.
use clap::Args;

use super::{OutputFormat, SourceArgs};

/// How a mutating command is gated: plan only, or run with the typed confirmation and the
/// acknowledgements its guards ask for; and the files it reads, as every command takes them.
#[derive(Args, Debug, Clone, Default)]
pub struct GateArgs {
    #[command(flatten)]
    pub sources: SourceArgs,
    /// Print the plan and every guard's verdict; change nothing.
    #[arg(long, conflicts_with = "yes")]
    pub plan: bool,
    /// Run it (with --confirm).
    #[arg(long)]
    pub yes: bool,
    /// The name the console would ask you to type (the cluster's, or the node's for an action
    /// on one node), typed in full.
    #[arg(long, value_name = "NAME")]
    pub confirm: Option<String>,
    /// A guard's acknowledgement, exactly as the plan prints it after `needs --ack`
    /// (repeat for several).
    #[arg(long, value_name = "TEXT")]
    pub ack: Vec<String>,
    #[arg(long, short, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
}
