//! The guarded rolling Talos OS upgrade, pure part: the plan (node order, options, the API each
//! node is upgraded through) and the guards that are checked before the rollout and again
//! before every node. No IO: plain functions over the fleet status model, except `releases`,
//! which learns the Talos releases from a registry (or its cache in the state dir).
pub mod capi;
pub mod downtime;
pub mod explain;
pub mod guards;
mod image_ref;
pub use crate::capi::owned::{InPlaceUpgrade, capi_owned};
pub use image_ref::check_image_reference;
pub mod kubernetes;
pub(crate) mod launch;
mod node_step;
pub mod observe;
pub mod plan;
pub mod releases;
pub mod runner;
mod talos_os;

#[cfg(test)]
pub(crate) mod fixtures;

pub use crate::rollout::RolloutHandle;
pub use guards::{
    Guard, GuardId, RolloutInProgress, SINGLE_CONTROL_PLANE_ACK, Verdict, blocking, plan_guards,
    quorum_after_losing, quorum_without, step_guards,
};
pub use plan::{
    Direction, PlanError, PlanStep, StepState, UpgradeApi, UpgradeOptions, UpgradePlan,
    chosen_talos_target, default_installer_image, must_forfeit_leadership, offered_among,
    offered_targets, unknown_target,
};
pub use releases::{
    LearnedReleases, ReleaseLookup, ReleasesLearned, ReleasesOrigin, UNLISTED_RELEASE_ACK,
};
pub use runner::{KindRollout, RunOptions, UpgradeKind};
pub use talos_os::TalosOs;
