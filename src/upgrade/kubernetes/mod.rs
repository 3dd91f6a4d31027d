//! The guarded Kubernetes upgrade (`talosctl upgrade-k8s` as a walkthrough): the pure plan and
//! guards, and the step executor the shared rollout engine drives — patch one node's machine
//! config image, apply it without reboot, wait for that component to run the new version.
pub mod config_patch;
pub mod guards;
pub mod plan;

pub use guards::{
    KubeGuardInput, REMOVED_APIS_ACK, kubernetes_plan_guards, kubernetes_step_guards,
};
pub use plan::{
    Component, KubePlanError, KubeStep, KubeStepState, KubernetesUpgradePlan, PrePull,
    detect_running,
};
