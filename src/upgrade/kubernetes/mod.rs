//! The guarded Kubernetes upgrade (`talosctl upgrade-k8s` as a walkthrough): the pure plan and
//! guards, and the steps `operation::upgrade` runs — patch one node's machine
//! config image, apply it without reboot, wait for that component to run the new version —
//! and the removed-flags check upstream runs first.
pub mod config_patch;
pub mod guards;
pub mod plan;
pub mod removed_flags;
pub mod runner;
mod step;

pub use guards::{
    KubeGuardInput, REMOVED_APIS_ACK, kubernetes_plan_guards, kubernetes_step_guards,
};
pub use plan::{
    Component, KubePlanError, KubeStep, KubeStepState, KubernetesUpgradePlan, PrePull,
    chosen_kubernetes_target, detect_running, offered_kubernetes_targets,
};
pub use removed_flags::{RemovedItem, RemovedKind, check_removed_flags};
pub use runner::{
    Kubernetes, count_removed_apis, initial_steps, learn_target, read_plan_guards, read_removed,
    target_text,
};
pub use step::runs_target;
