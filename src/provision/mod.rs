//! Provisioning Talos nodes as VMs: plans from taloscope's config, machine
//! config checks, the runner that creates VMs and follows each until its node
//! has joined (reporting on a channel), the journal of the VMs it started (and the
//! unfinished ones of a killed run followed again), and the cluster's rollout Lease the run
//! holds meanwhile.
pub mod cluster;
pub mod follow;
pub mod guards;
pub mod journal;
pub mod lease;
pub mod machine_config;
pub mod plan;
pub mod progress;
pub mod provider;
pub mod room;
pub mod runner;

/// The most VMs one provision asks for: `provision --count` takes 1..=100, and the console's
/// wizard counts within it.
pub const MAX_COUNT: usize = 100;

pub use cluster::GuardInputs;
pub use guards::provision_guards;
pub use journal::{JournalEntry, ProviderAt, ProvisionJournal};
pub use machine_config::{MachineConfig, MachineConfigError};
pub use plan::{PlanSource, ProvisionPlan};
pub use progress::{ProvisionEvent, ProvisionStage, ProvisionSummary, VmProgress};
pub use provider::{PlanRequest, Provider, ProviderClients, SourceChoice, connect, plan};
pub use runner::{JoinChecks, ProvisionRunner, RunnerOptions, terminate_vm};

use crate::opennebula::OneError;

#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    /// The config lacks something a provision needs.
    #[error("{file}: {message}")]
    Config { file: String, message: String },
    #[error(transparent)]
    MachineConfig(#[from] MachineConfigError),
    #[error(transparent)]
    One(#[from] OneError),
    #[error(transparent)]
    Journal(#[from] journal::JournalError),
    /// A guard blocks the next VM.
    #[error("{0}")]
    Refused(String),
    /// The runner was handed an approval for something else.
    #[error("{0}")]
    NotApproved(String),
}
