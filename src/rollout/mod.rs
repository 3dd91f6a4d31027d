//! What the Talos OS and Kubernetes upgrades keep and tell as they run (`operation::upgrade`
//! runs them): the Kubernetes Lease so only one console rolls a cluster and what it says, the
//! journal they resume from, who may claim an unfinished one, each step's progress, the
//! operator's pause / resume / abort, and the events they report.
pub mod claim;
pub mod journal;
pub mod lease;
pub mod progress;

pub use journal::{JournalError, RolloutJournal};
pub use lease::{
    LeaseProgress, LeaseReading, LockProgress, ROLLOUT_LEASE_NAME, RenewFailure, RolloutInProgress,
    RolloutLeaseInfo, RolloutLock, RolloutStatus,
};
pub use progress::{
    RolloutControl, RolloutEvent, RolloutHandle, RolloutKind, RolloutOutcome, RolloutSummary,
    StepPhase, StepProgress, StepReport, StepUpdate,
};
