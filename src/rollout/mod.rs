//! The rollout engine shared by the Talos OS upgrade and the Kubernetes upgrade: one step at a
//! time with guards re-checked before each, a Kubernetes Lease so only one console rolls a
//! cluster, a journal for resuming, pause / resume / abort, and progress reported as events.
pub mod claim;
pub mod engine;
pub mod journal;
pub mod lease;
pub mod progress;

pub use engine::{
    EngineSetup, LockProgress, RenewFailure, RolloutHandle, RolloutLock, StepExecutor, StepReport,
    StepUpdate, spawn_rollout,
};
pub use journal::{JournalError, RolloutJournal};
pub use lease::{
    LeaseProgress, LeaseReading, ROLLOUT_LEASE_NAME, RolloutInProgress, RolloutLeaseInfo,
    RolloutStatus,
};
pub use progress::{
    RolloutControl, RolloutEvent, RolloutKind, RolloutOutcome, RolloutSummary, StepPhase,
    StepProgress,
};
