//! The Cluster API command lines: `capi status`, `capi doctor` (and, with scale, `scale`). Each takes its
//! config files after the subcommand, as every headless command does.
use clap::{Args, Subcommand};

use super::{GateArgs, ReadArgs, parse_role};
use crate::capi::MachineRole;
use crate::capi_doctor::FOLLOW_BOUNDS;
use crate::capi_scale::ScaleOptions;

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
    /// The Talos control-plane provider's stuck states of one workload cluster (--context:
    /// the workload cluster, or its management cluster with --cluster): a rollout waiting for
    /// etcd forever, an orphaned etcd member, a stopped single member; each explained with
    /// its fix. `--fix ID --plan` shows a fix's plan and guards, `--fix ID --yes --confirm
    /// NAME` applies it and follows until the state clears. Exit 0 healthy or fixed / 1 stuck,
    /// refused or not cleared / 2 usage.
    Doctor(CapiDoctorArgs),
}

#[derive(Args, Debug, Clone)]
pub struct CapiDoctorArgs {
    #[command(flatten)]
    pub gate: GateArgs,
    /// The workload cluster, when --context names its management cluster: NAMESPACE/NAME,
    /// or NAME when one namespace has it.
    #[arg(long, value_name = "NS/NAME")]
    pub cluster: Option<String>,
    /// The finding to fix, by its id (`stuck-rollout/MACHINE`, `orphaned-member/MEMBER`,
    /// `etcd-stopped/MACHINE`: a reboot, confirmed by the node's name).
    #[arg(long, value_name = "FINDING-ID")]
    pub fix: Option<String>,
    /// Seconds to follow the cluster after a fix until the stuck state clears.
    #[arg(long, value_name = "SECS", default_value_t = FOLLOW_BOUNDS.0.as_secs(), value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub wait: u64,
    /// Milliseconds between reads while following.
    #[arg(long, value_name = "MS", default_value_t = FOLLOW_BOUNDS.1.as_millis() as u64, hide = true)]
    pub poll_ms: u64,
}

#[derive(Args, Debug, Clone)]
pub struct CapiStatusArgs {
    #[command(flatten)]
    pub read: ReadArgs,
    /// Only this workload cluster: NAMESPACE/NAME, or NAME when one namespace has it.
    #[arg(long, value_name = "NS/NAME")]
    pub cluster: Option<String>,
}

/// `taloscope scale`: plan with --plan; run with --yes --confirm NAME.
#[derive(Args, Debug, Clone)]
pub struct ScaleArgs {
    #[command(flatten)]
    pub gate: GateArgs,
    /// Which Machines: the TalosControlPlane's (controlplane) or a MachineDeployment's (worker).
    #[arg(long, value_parser = parse_role(MachineRole::Controlplane, MachineRole::Worker))]
    pub role: MachineRole,
    /// The new spec.replicas.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub replicas: u32,
    /// The MachineDeployment, when the cluster has several (--role worker).
    #[arg(long, value_name = "NAME")]
    pub deployment: Option<String>,
    /// Seconds the Machines may take to be created and Ready (or deleted).
    #[arg(long, value_name = "SECS", default_value_t = ScaleOptions::DEFAULT.timeout.as_secs(), value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
    /// Milliseconds between looks at the Machines and etcd.
    #[arg(long, value_name = "MS", default_value_t = ScaleOptions::DEFAULT.poll.as_millis() as u64, hide = true)]
    pub poll_ms: u64,
}
