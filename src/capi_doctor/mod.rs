//! The CAPI stuck-rollout doctor: the Talos control-plane provider's known deadlocks (a
//! rollout waiting for etcd forever, an orphaned etcd member, a stopped single member, a
//! Machine whose member left, a surge Machine that never got a node) found by comparing etcd
//! over the Talos API with the Machines, explained, and fixed when safe.
mod diagnose;
mod fix;
mod locate;
mod run;

pub use diagnose::{
    Finding, FindingKind, Fix, cleared, control_plane_settled, diagnose, findings_of, is_member_of,
    recovery_steps,
};
pub use fix::{FixPlan, MachineDeletion, evaluate_fix, fix_guards};
pub use locate::{LocateError, Located, locate, read_tree};
pub use run::{FOLLOW_BOUNDS, delete_machine, follow, progress_line, read_now};

#[cfg(test)]
mod diagnose_tests;
