//! The Kubernetes upgrade's guards: pure checks over live status with the same `Guard` and
//! `Verdict` as the Talos OS upgrade — the version path, Talos support for the target, nodes,
//! etcd, control-plane readiness and the removed-API check (acknowledged by typing a phrase).
use std::collections::BTreeSet;

use super::plan::KubernetesUpgradePlan;
use super::removed_flags::{RemovedItem, crosses_removals};
use crate::fleet::{ClusterStatus, NodeRole};
use crate::kube::removed_apis::RemovedApiCount;
use crate::talos::Roles;
use crate::upgrade::guards::{
    Guard, GuardId, RolloutInProgress, SINGLE_CONTROL_PLANE_ACK, Verdict, client_role, etcd_alarms,
    leader_verdict, no_other_rollout, not_ready_reason, unhealthy_members, verdict_over,
};
use crate::versions::{
    PathError, Version, check_kubernetes_path, check_kubernetes_supported,
    check_kubernetes_upgrade, oldest_talos_minor_supporting,
};

/// What the operator types to upgrade although objects are stored in removed API versions.
pub const REMOVED_APIS_ACK: &str = "objects in removed API versions become unreadable";

/// The live facts the plan guards look at besides the cluster status.
#[derive(Debug, Clone, Copy)]
pub struct KubeGuardInput<'a> {
    pub roles: &'a Roles,
    pub other_rollout: Option<&'a RolloutInProgress>,
    /// The removed-API count, or why it could not be made.
    pub removed_apis: &'a Result<Vec<RemovedApiCount>, String>,
    /// The removed flags, feature gates and admission plugins in use, or why they could not
    /// be read.
    pub removed_flags: &'a Result<Vec<RemovedItem>, String>,
    /// The acknowledgements typed so far.
    pub acks: &'a [String],
}

/// Every guard of the plan, in [`GuardId::KUBERNETES`] order.
pub fn kubernetes_plan_guards(
    plan: &KubernetesUpgradePlan,
    status: &ClusterStatus,
    input: KubeGuardInput<'_>,
) -> Vec<Guard> {
    vec![
        no_other_rollout(&plan.cluster, input.other_rollout),
        client_role(input.roles),
        kubernetes_path(plan),
        talos_supports_target(plan, status),
        nodes_ready(status),
        etcd_healthy(status),
        etcd_alarms(status),
        components_ready(status),
        removed_apis(plan, input.removed_apis, input.acks),
        removed_flags(plan, input.removed_flags),
        single_control_plane(status),
    ]
}

/// The re-check before every step: nodes ready, etcd healthy without alarms, every
/// control-plane component ready.
pub fn kubernetes_step_guards(status: &ClusterStatus) -> Vec<Guard> {
    vec![
        nodes_ready(status),
        etcd_healthy(status),
        etcd_alarms(status),
        components_ready(status),
    ]
}

fn kubernetes_path(plan: &KubernetesUpgradePlan) -> Guard {
    let id = GuardId::KubernetesPath;
    let to_run = plan.steps_to_run().count();
    if to_run == 0 {
        return Guard::fail(
            id,
            format!(
                "every component already runs {}; nothing to upgrade",
                plan.target
            ),
        );
    }
    if plan.from == plan.target {
        return Guard::pass(
            id,
            format!(
                "control plane on {}; {to_run} components still to move",
                plan.target
            ),
        );
    }
    let checked = if plan.target_listed {
        check_kubernetes_path(&plan.from, &plan.target, &[])
    } else {
        check_kubernetes_upgrade(&plan.from, &plan.target, &[])
    };
    match checked {
        Ok(()) | Err(PathError::NoTalosVersions) if plan.target_listed => Guard::pass(
            id,
            format!(
                "Kubernetes {} -> {}; {}",
                plan.from,
                plan.target,
                plan.releases.describe()
            ),
        ),
        Ok(()) | Err(PathError::NoTalosVersions) => {
            Guard::pass(id, format!("Kubernetes {} -> {}", plan.from, plan.target))
        }
        Err(e @ PathError::UnknownRelease { .. }) => {
            Guard::fail(id, format!("{e} ({})", plan.releases.describe()))
        }
        Err(e) => Guard::fail(id, e.to_string()),
    }
}

fn talos_supports_target(plan: &KubernetesUpgradePlan, status: &ClusterStatus) -> Guard {
    let id = GuardId::TalosSupportsTarget;
    let silent: Vec<&str> = status
        .nodes
        .iter()
        .filter(|n| n.talos_version.is_none())
        .map(|n| n.name.as_str())
        .collect();
    if !silent.is_empty() {
        return Guard::fail(
            id,
            format!("no Talos version reported by {}", silent.join(", ")),
        );
    }
    let versions: BTreeSet<Version> = status
        .nodes
        .iter()
        .filter_map(|n| n.talos_version.as_deref())
        .filter_map(|v| Version::parse(v).ok())
        .collect();
    if versions.is_empty() {
        return Guard::fail(id, "no node reports a Talos version");
    }
    let failures: Vec<String> = versions
        .iter()
        .filter_map(|talos| check_kubernetes_supported(talos, &plan.target).err())
        .map(|e| e.to_string())
        .collect();
    let oldest = versions.iter().next().map(Version::minor_key);
    let way = oldest
        .and_then(|from| oldest_talos_minor_supporting(&plan.target, from))
        .map(|minor| {
            format!("; upgrade Talos to v{minor} first (taloscope upgrade --to v{minor}.x)")
        })
        .unwrap_or_default();
    match failures.first() {
        Some(first) => Guard::fail(id, format!("{first}{way}")),
        None => {
            let list: Vec<String> = versions.iter().map(Version::to_string).collect();
            Guard::pass(
                id,
                format!("Talos {} runs Kubernetes {}", list.join(", "), plan.target),
            )
        }
    }
}

fn nodes_ready(status: &ClusterStatus) -> Guard {
    let not_ready: Vec<String> = status
        .nodes
        .iter()
        .filter_map(|n| not_ready_reason(n).map(|why| format!("{} ({why})", n.name)))
        .collect();
    verdict_over(
        GuardId::NodesReady,
        "not ready",
        &not_ready,
        status.nodes.len(),
        "ready",
    )
}

pub(crate) fn etcd_healthy(status: &ClusterStatus) -> Guard {
    let id = GuardId::EtcdHealthy;
    let members = &status.etcd.members;
    if members.is_empty() {
        return Guard::fail(id, "no etcd members reported");
    }
    if let Some(guard) = unhealthy_members(id, members) {
        return guard;
    }
    leader_verdict(id, status)
}

fn components_ready(status: &ClusterStatus) -> Guard {
    let id = GuardId::ComponentsReady;
    let Some(kube) = &status.kubernetes else {
        return Guard::fail(id, "the Kubernetes API was not asked");
    };
    if let Some(error) = &kube.error {
        return Guard::fail(id, format!("the Kubernetes API did not answer: {error}"));
    }
    if kube.components.is_empty() {
        return Guard::fail(id, "no control-plane static pods found");
    }
    let not_ready: Vec<String> = kube
        .components
        .iter()
        .filter(|c| !c.ready)
        .map(|c| format!("{} on {}", c.name, c.node))
        .collect();
    if not_ready.is_empty() {
        Guard::pass(
            id,
            format!(
                "all {} control-plane components ready",
                kube.components.len()
            ),
        )
    } else {
        Guard::fail(id, format!("not ready: {}", not_ready.join(", ")))
    }
}

fn removed_apis(
    plan: &KubernetesUpgradePlan,
    counts: &Result<Vec<RemovedApiCount>, String>,
    acks: &[String],
) -> Guard {
    let id = GuardId::RemovedApis;
    let counts = match counts {
        Ok(counts) => counts,
        Err(reason) => {
            return Guard::fail(
                id,
                format!("cannot count objects in removed APIs: {reason}"),
            );
        }
    };
    if counts.is_empty() {
        return Guard::pass(
            id,
            format!(
                "Kubernetes {} removes no API version in use here",
                plan.target
            ),
        );
    }
    let stored: Vec<String> = counts
        .iter()
        .filter(|c| c.count > 0)
        .map(|c| format!("{}: {}", c.api, c.count))
        .collect();
    if stored.is_empty() {
        return Guard::pass(
            id,
            format!(
                "no objects in the {} API versions the target removes",
                counts.len()
            ),
        );
    }
    let reason = format!("stored in removed API versions: {}", stored.join(", "));
    let acked = acks.iter().any(|a| a.trim() == REMOVED_APIS_ACK);
    let verdict = if acked { Verdict::Warn } else { Verdict::Fail };
    Guard {
        id,
        verdict,
        reason,
        needs_ack: Some(REMOVED_APIS_ACK.to_string()),
    }
}

/// Upstream refuses the upgrade outright (pkg/cluster/kubernetes/talos_managed.go runs
/// go-kubernetes' `upgrade.Checks` before the first step): no acknowledgement.
fn removed_flags(plan: &KubernetesUpgradePlan, found: &Result<Vec<RemovedItem>, String>) -> Guard {
    let id = GuardId::RemovedFlags;
    if !crosses_removals(plan) {
        return Guard::pass(
            id,
            format!(
                "Kubernetes {} -> {} removes no component flag",
                plan.from, plan.target
            ),
        );
    }
    match found {
        Err(reason) => Guard::fail(id, format!("cannot check the component flags: {reason}")),
        Ok(found) if found.is_empty() => Guard::pass(
            id,
            format!(
                "no component uses a flag, feature gate or admission plugin {} removes",
                plan.target
            ),
        ),
        Ok(found) => {
            let list: Vec<String> = found.iter().map(ToString::to_string).collect();
            Guard::fail(
                id,
                format!("removed in {}: {}", plan.target, list.join(", ")),
            )
        }
    }
}

fn single_control_plane(status: &ClusterStatus) -> Guard {
    let id = GuardId::SingleControlPlane;
    let count = status
        .nodes
        .iter()
        .filter(|n| n.role == NodeRole::Controlplane)
        .count();
    if count == 1 {
        Guard::warn(
            id,
            "one control plane: the Kubernetes API is down while its kube-apiserver restarts",
        )
        // The same typed acknowledgement the Talos upgrade asks for, in the CLI and the console.
        .acked_by(SINGLE_CONTROL_PLANE_ACK)
    } else {
        Guard::pass(id, format!("{count} control planes"))
    }
}

#[cfg(test)]
#[path = "guards_tests.rs"]
pub(crate) mod tests;
