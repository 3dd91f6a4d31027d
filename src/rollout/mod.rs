//! The rollout engine shared by the Talos OS upgrade and the Kubernetes upgrade: one step at a
//! time with guards re-checked before each, a Kubernetes Lease so only one console rolls a
//! cluster, a journal for resuming, pause / resume / abort, and progress reported as events.
pub mod claim;
pub mod engine;
pub mod journal;
pub mod lease;
pub mod progress;

pub use engine::{EngineSetup, StepExecutor, spawn_rollout};
pub use journal::{JournalError, RolloutJournal};
pub use lease::{
    LeaseProgress, LeaseReading, LockProgress, ROLLOUT_LEASE_NAME, RenewFailure, RolloutInProgress,
    RolloutLeaseInfo, RolloutLock, RolloutStatus,
};
pub use progress::{
    RolloutControl, RolloutEvent, RolloutHandle, RolloutKind, RolloutOutcome, RolloutSummary,
    StepPhase, StepProgress, StepReport, StepUpdate,
};
