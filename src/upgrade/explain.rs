//! What `?` says of each step of an upgrade plan, for engineers new to Talos, as
//! `GuardId::explain` says what each guard checks: which calls the step makes, in what
//! order, why it sits where it does and when it is done; of a node's Talos upgrade, a
//! Kubernetes component's, a phase of the CAPI way. Said beside the operations they tell, so
//! the plan screens show it and never restate it. Pure.
use super::capi::{CapiPhase, CapiUpgradePlan, PhaseObject};
use super::kubernetes::{Component, KubeStep, KubeStepState, KubernetesUpgradePlan};
use super::{PlanStep, StepState, UpgradeApi, UpgradePlan};
use crate::fleet::NodeRole;

/// What `?` says about one step: what happens to that node, in order, and
/// why it sits where it does.
pub fn node_step(plan: &UpgradePlan, step: &PlanStep) -> String {
    let from = step
        .from
        .as_ref()
        .map_or("an unknown version".to_string(), ToString::to_string);
    let mut parts = Vec::new();
    match step.state {
        StepState::AlreadyOnTarget => {
            return format!(
                "{} already runs {}: it is skipped and nothing is sent to it. The guards still check that it is up and ready, because the cluster counts on it while the others reboot.",
                step.node, plan.target
            );
        }
        StepState::LeftOut => {
            return format!(
                "{} is left out of this rollout (x includes it again). It stays on {from}; the guards still check that it is up and ready, because the cluster counts on it while the others reboot.",
                step.node
            );
        }
        StepState::Upgrade => {}
    }
    let api = match step.api {
        Some(UpgradeApi::MachineUpgrade) => format!(
            "It runs {from}, below Talos 1.13, so taloscope calls MachineService.Upgrade with {}; the node pulls the image, installs it and reboots on its own.",
            plan.image
        ),
        Some(UpgradeApi::Lifecycle) => format!(
            "It runs {from} (Talos 1.13 or later), so taloscope pulls {} through ImageService.Pull, installs it with LifecycleService.Upgrade and then reboots it with MachineService.Reboot. The server no longer checks etcd itself; taloscope's guards are the only gate.",
            plan.image
        ),
        None => "Its Talos version is unknown, so the API cannot be chosen yet.".to_string(),
    };
    parts.push(format!(
        "{} ({}): upgraded from {from} to {}.",
        step.node,
        step.role.as_str(),
        plan.target
    ));
    parts.push("Before it goes down the guards are checked again against live status: every node back and ready, etcd healthy with no alarms, and quorum kept without this node.".to_string());
    if step.forfeit_leadership {
        parts.push("It leads etcd, so it goes last among the control planes and first hands leadership to another member (forfeit): otherwise the cluster would hold an election while a member is already down, and writes stall meanwhile.".to_string());
    } else if step.role == NodeRole::Controlplane {
        parts.push("Control planes go one at a time: each takes one etcd member and one API server away while it reboots.".to_string());
    } else if let Some(batch) = step.batch {
        parts.push(format!(
            "Workers go in batches of max-parallel ({}); this one is in batch {}.",
            plan.options.max_parallel, batch
        ));
    }
    parts.push(api);
    parts.push("It is done when it is back, running and ready on the target, its Kubernetes node is Ready and its etcd member healthy; only then does the next node start.".to_string());
    parts.join(" ")
}

/// What `?` says about one step: what happens to that component on that node.
pub fn component_step(plan: &KubernetesUpgradePlan, step: &KubeStep) -> String {
    let component = step.component.as_str();
    let from = step.from.as_deref().unwrap_or("an unknown version");
    if step.state == KubeStepState::NoKubeProxy {
        return format!(
            "{component} on {}: the cluster has no kube-proxy DaemonSet (kube-proxy is disabled): the step is skipped.",
            step.node
        );
    }
    if step.state == KubeStepState::AlreadyOnTarget {
        return format!(
            "{component} on {} already runs {}: the step is skipped and its machine config is left alone.",
            step.node, plan.target
        );
    }
    let (section, key) = step.component.config_path();
    let mut parts = vec![format!(
        "{component} on {} ({}): {from} -> {}.",
        step.node,
        step.role.as_str(),
        plan.target
    )];
    parts.push(format!(
        "taloscope reads the node's machine config, sets {section}.{key}.image to {}, and applies it with ApplyConfiguration in no-reboot mode: the node does not restart, only this component does.",
        step.component.image(&plan.target)
    ));
    parts.push(match step.component {
        c if c.is_static_pod() => "It is done when the static pod runs the new version and is ready. The order is upstream's: every kube-apiserver first (one control plane at a time), then the controller managers, then the schedulers, so the API server is never older than the components that talk to it.".to_string(),
        Component::KubeProxy => "kube-proxy runs as a DaemonSet that Talos created once and never updates: after the control planes' config, the step sets the DaemonSet's image and is done when its rollout finishes.".to_string(),
        _ => "The kubelet restarts with the new image; it is done when the node reports the new kubelet version and is Ready again. Control planes go first, then the workers, one at a time.".to_string(),
    });
    parts.push("Before every step the guards are checked again against live status: nodes ready, etcd healthy with no alarms, every control-plane component ready. A step that does not finish within its timeout halts the rollout with the reason.".to_string());
    parts.join(" ")
}

/// What `?` says about phase `p` of `plan`: its patch, then how the provider replaces its
/// Machines and in which order.
pub fn capi_phase(plan: &CapiUpgradePlan, p: &CapiPhase) -> String {
    let machines = if p.replace.is_empty() {
        "none: every Machine already runs the target".to_string()
    } else {
        p.replace.join(", ")
    };
    let patch = p.patch_text(&plan.version);
    if p.on_delete {
        format!(
            "{patch}\n\nrolloutStrategy OnDelete: the provider replaces a Machine only once it \
             is deleted. taloscope deletes them one at a time, each once every Machine is \
             Ready and every etcd member healthy; the provider then creates its \
             replacement. In this order: {machines}."
        )
    } else {
        let etcd = if p.object == PhaseObject::TalosControlPlane {
            " after its etcd member leaves; etcd must stay healthy throughout"
        } else {
            ""
        };
        format!(
            "{patch}\n\nThen the provider replaces its Machines one at a time (maxSurge 1): a new \
             Machine is created, its node joins and becomes Ready, then the old Machine is \
             deleted{etcd}. In this order: {machines}."
        )
    }
}
