//! etcd maintenance, the guarded way: plans for disarm, defragment, snapshot, forfeit and
//! member removal built from the fleet's status model, their guards, and the runner that
//! makes the calls one member at a time for an approved plan (snapshots written atomically).
mod guards;
mod plan;
mod run;
mod snapshot_file;

pub use guards::plan_guards;
pub use plan::{
    EtcdCall, EtcdPlan, EtcdRequest, EtcdStep, MEMBER_HEADER, MemberSpace, PlanError, QUOTA_BYTES,
    member_space, offered,
};
pub use run::{EtcdOutcome, SNAPSHOT_MAX_BYTES, SnapshotLimits, run_step};
pub use snapshot_file::{
    SnapshotError, SnapshotReport, SnapshotTarget, TargetRefusal, check_target, write_snapshot,
};

#[cfg(test)]
mod guards_tests;
