//! The Cluster API command lines: `capi status` (and, with scale, `scale`). Each takes its
//! config files after the subcommand, as every headless command does.
use clap::{Args, Subcommand};

use super::{OutputFormat, SourceArgs};

/// `taloscope capi`: the Cluster API side of a management cluster.
#[derive(Args, Debug, Clone)]
pub struct CapiArgs {
    #[command(subcommand)]
    pub verb: CapiVerb,
}

#[derive(Subcommand, Debug, Clone)]
pub enum CapiVerb {
    /// The workload clusters of one management cluster (--context) as `clusterctl describe
    /// cluster` shows them: Cluster, TalosControlPlane and its Machines, MachineDeployments,
    /// MachineSets and theirs, with replicas / ready / up-to-date / available and the
    /// conditions that need attention. Exit 0 / 1 not a management cluster or unreachable / 2.
    Status(CapiStatusArgs),
}

#[derive(Args, Debug, Clone)]
pub struct CapiStatusArgs {
    #[command(flatten)]
    pub sources: SourceArgs,
    /// Only this workload cluster: NAMESPACE/NAME, or NAME when one namespace has it.
    #[arg(long, value_name = "NS/NAME")]
    pub cluster: Option<String>,
    #[arg(long, short, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
}
