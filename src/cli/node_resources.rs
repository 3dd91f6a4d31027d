//! The command lines of the reads of what runs inside a node: `node info` and `top`. Each
//! takes its config files after the subcommand, as every headless command does.
use clap::Args;

use super::ReadArgs;
use crate::node_resources::SortKey;

/// `taloscope node info`.
#[derive(Args, Debug, Clone)]
pub struct NodeInfoArgs {
    #[command(flatten)]
    pub read: ReadArgs,
    /// The node: its name or address, as `taloscope status` lists it.
    #[arg(long, value_name = "NODE")]
    pub node: String,
    /// Milliseconds between the two samples CPU use is measured over.
    #[arg(long, value_name = "MS", default_value_t = 1000, hide = true, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub sample_ms: u64,
}

/// `taloscope top`.
#[derive(Args, Debug, Clone)]
pub struct TopArgs {
    #[command(flatten)]
    pub read: ReadArgs,
    /// One node's processes (its name or address); without it, the cluster's nodes.
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,
    #[arg(long, value_enum, default_value_t = SortKey::Cpu)]
    pub sort: SortKey,
    /// Milliseconds between the two samples CPU use is measured over.
    #[arg(long, value_name = "MS", default_value_t = 1000, hide = true, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub sample_ms: u64,
}
