//! Pre-flight guards of a rolling upgrade: pure checks over live status, each with a verdict
//! and a one-line reason, run for the whole plan before it starts and again before every
//! node. A failing guard (or a warning whose typed acknowledgement is missing) blocks.
use std::collections::BTreeSet;

use super::plan::{PlanStep, StepState, UpgradePlan};
use super::releases::{INSTALLER_REPOSITORY, ReleasesOrigin, UNLISTED_RELEASE_ACK};
use crate::fleet::{ClusterStatus, EtcdMemberReport, NodeRole, NodeStatus, Quorum};
pub use crate::guards::{Guard, GuardId, Verdict, blocking};
pub use crate::rollout::RolloutInProgress;
use crate::talos::{MachineStage, Roles};
use crate::versions::{ReleaseSource, Version, check_fleet_talos_path, check_kubernetes_supported};

/// What the operator types to upgrade the only control plane.
pub const SINGLE_CONTROL_PLANE_ACK: &str = "the Kubernetes API will be down";

/// What the operator types to go on when the rollout Lease cannot be read.
pub const LEASE_UNREAD_ACK: &str = "no one else is changing this cluster";

/// Every guard, for the plan screen.
pub fn plan_guards(
    plan: &UpgradePlan,
    status: &ClusterStatus,
    roles: &Roles,
    other_rollout: Option<&RolloutInProgress>,
) -> Vec<Guard> {
    let mut guards = vec![
        no_other_rollout(&plan.cluster, other_rollout),
        client_role(roles),
        listed_release(plan),
        version_path(plan),
        kubernetes_supported(plan, status),
        installer_image(plan),
    ];
    guards.extend(node_guards(plan, status));
    guards.push(etcd_healthy(plan, status));
    guards.push(etcd_alarms(status));
    guards.push(plan_quorum(plan, status));
    guards.push(single_control_plane(plan, status));
    guards
}

/// The re-check before the node of `step_index` goes down: every planned node back, running
/// and ready; etcd healthy with no member lost since planning; no alarms; and this node's
/// member may go down with quorum kept. Skipped steps get the same checks; the runner does
/// not ask for them.
pub fn step_guards(plan: &UpgradePlan, step_index: usize, status: &ClusterStatus) -> Vec<Guard> {
    let Some(step) = plan.steps.get(step_index) else {
        return vec![Guard::fail(
            GuardId::NodesReachable,
            format!(
                "the plan for {} has no step {} (it has {})",
                plan.cluster,
                step_index + 1,
                plan.steps.len()
            ),
        )];
    };
    let mut guards = node_guards(plan, status);
    guards.push(etcd_healthy(plan, status));
    guards.push(etcd_alarms(status));
    guards.push(quorum_after_losing(status, &step.node));
    if step.role == NodeRole::Controlplane {
        guards.push(single_control_plane(plan, status));
    }
    guards
}

/// Whether etcd keeps its quorum once the member `member_id` (of `hostname`) is gone: removed
/// by id, by its node leaving the cluster, or gone with its Machine (the CAPI doctor's fix);
/// a member unhealthy only by its own alarm still votes ([`EtcdMemberReport::answers`]).
pub fn quorum_without(status: &ClusterStatus, member_id: &str, hostname: &str) -> Guard {
    let id = GuardId::EtcdQuorum;
    let left = status
        .etcd
        .members
        .iter()
        .filter(|m| m.id != member_id && !m.is_learner);
    let q = Quorum::of_members(left.map(|m| (false, m.answers())));
    let counts = format!(
        "{} of {} members left healthy, {} needed",
        q.healthy, q.members, q.needed
    );
    if q.has_quorum() {
        Guard::pass(id, format!("without {hostname}: {counts}"))
    } else {
        Guard::fail(id, format!("removing {hostname} loses quorum: {counts}"))
    }
}

/// Whether etcd keeps quorum while `node` is down. Passes for nodes that are not voting
/// members; a lone member is a warning needing [`SINGLE_CONTROL_PLANE_ACK`].
pub fn quorum_after_losing(status: &ClusterStatus, node: &str) -> Guard {
    let id = GuardId::EtcdQuorum;
    let known = status.node(node);
    let names = [
        Some(node),
        known.map(|n| n.name.as_str()),
        known.map(|n| n.address.as_str()),
    ];
    let member = status
        .etcd
        .members
        .iter()
        .find(|m| names.contains(&Some(m.hostname.as_str())));
    let Some(member) = member else {
        let is_control_plane = known.is_some_and(|n| n.role == NodeRole::Controlplane);
        if is_control_plane && status.etcd.members.is_empty() {
            return Guard::fail(
                id,
                format!("{node}: etcd members unknown, cannot check quorum"),
            );
        }
        return Guard::pass(id, format!("{node} is not an etcd member"));
    };
    if member.is_learner {
        return Guard::pass(id, format!("{node} is an etcd learner and does not vote"));
    }
    let q = quorum_of(&status.etcd.members);
    if q.members == 1 {
        return Guard::warn(
            id,
            format!("{node} is the only etcd member: etcd is down until it is back"),
        )
        .acked_by(SINGLE_CONTROL_PLANE_ACK);
    }
    let counts = format!(
        "{} of {} members healthy, {} needed",
        q.healthy, q.members, q.needed
    );
    if q.survives_losing(member.healthy) {
        Guard::pass(id, format!("{node} can go down: {counts}"))
    } else {
        Guard::fail(
            id,
            format!("taking {node} down breaks etcd quorum: {counts}"),
        )
    }
}

fn quorum_of(members: &[EtcdMemberReport]) -> Quorum {
    Quorum::of_members(members.iter().map(|m| (m.is_learner, m.healthy)))
}

pub(crate) fn no_other_rollout(cluster: &str, other: Option<&RolloutInProgress>) -> Guard {
    let id = GuardId::NoOtherRollout;
    match other {
        None => Guard::pass(id, format!("no other rollout on {cluster}")),
        Some(r) => Guard::fail(
            id,
            format!(
                "upgrade in progress by {}, node {} of {}",
                crate::run_holder::holder_described(&r.holder),
                r.node_index,
                r.node_count
            ),
        ),
    }
}

/// The rollout Lease guard of every change other than an upgrade: a rollout holding the Lease
/// refuses it; a Lease that could not be read fails closed, asking the typed
/// [`LEASE_UNREAD_ACK`] (another console's rollout cannot be seen).
pub(crate) fn lease_guard(cluster: &str, read: &crate::rollout::LeaseReading) -> Guard {
    no_other_rollout_read(
        cluster,
        read,
        Some("type the acknowledgement only if you know no one else is changing it"),
    )
}

/// [`no_other_rollout`] over a Lease that may not have been read: when it could not be, and
/// `api_down` says why the cluster's own Kubernetes API is expected to be down (the fault the
/// change repairs), the guard warns with that and asks for [`LEASE_UNREAD_ACK`]: a rollout
/// another console started before cannot be seen. Unexpected, it fails.
pub(crate) fn no_other_rollout_read(
    cluster: &str,
    read: &crate::rollout::LeaseReading,
    api_down: Option<&str>,
) -> Guard {
    let id = GuardId::NoOtherRollout;
    match (read, api_down) {
        (Ok(other), _) => no_other_rollout(cluster, other.as_ref()),
        (Err(why), Some(cause)) => Guard::warn(
            id,
            format!(
                "the rollout Lease of {cluster} cannot be read ({why}): {cause}; another \
                 console's rollout cannot be seen"
            ),
        )
        .acked_by(LEASE_UNREAD_ACK),
        (Err(why), None) => Guard::fail(
            id,
            format!("the rollout Lease of {cluster} cannot be read: {why}"),
        ),
    }
}

/// "Talos v1.11.3 -> v1.12.0": the versions the nodes run (each once) and the target.
pub(crate) fn talos_path_text(froms: &[Version], target: &impl std::fmt::Display) -> String {
    let distinct: BTreeSet<String> = froms.iter().map(Version::to_string).collect();
    let list: Vec<String> = distinct.into_iter().collect();
    format!("Talos {} -> {target}", list.join(", "))
}

pub(crate) fn client_role(roles: &Roles) -> Guard {
    role_guard(
        GuardId::ClientRole,
        roles,
        roles.may_upgrade(),
        "upgrade; upgrades need os:admin",
    )
}

/// Passes when the client's `roles` are `allowed`; else fails with "client role R may not
/// {refusal}".
pub(crate) fn role_guard(id: GuardId, roles: &Roles, allowed: bool, refusal: &str) -> Guard {
    let shown = if roles.0.is_empty() {
        "none".to_string()
    } else {
        roles.to_string()
    };
    if allowed {
        Guard::pass(id, format!("client role {shown}"))
    } else {
        Guard::fail(id, format!("client role {shown} may not {refusal}"))
    }
}

fn version_path(plan: &UpgradePlan) -> Guard {
    let id = GuardId::VersionPath;
    let upgrading: Vec<&PlanStep> = plan.nodes_to_upgrade().collect();
    if upgrading.is_empty() {
        return Guard::fail(
            id,
            "no node to upgrade: every node is left out or on the target",
        );
    }
    let silent: Vec<&str> = upgrading
        .iter()
        .filter(|s| s.from.is_none())
        .map(|s| s.node.as_str())
        .collect();
    if !silent.is_empty() {
        return Guard::fail(
            id,
            format!("no Talos version reported by {}", silent.join(", ")),
        );
    }
    let froms: Vec<Version> = upgrading.iter().filter_map(|s| s.from.clone()).collect();
    match check_fleet_talos_path(&froms, &plan.target, plan.options.allow_downgrade) {
        Ok(()) => Guard::pass(id, talos_path_text(&froms, &plan.target)),
        Err(e) => Guard::fail(id, e.to_string()),
    }
}

/// The target is a release the registry lists or the built-in table knows; another version
/// needs its acknowledgement, and the plan names the image it would install.
fn listed_release(plan: &UpgradePlan) -> Guard {
    let id = GuardId::ListedRelease;
    let target = &plan.target;
    match (plan.target_source, &plan.releases) {
        (Some(ReleaseSource::Registry), ReleasesOrigin::Registry { registry, .. }) => Guard::pass(
            id,
            format!(
                "Talos {target} is listed by registry {} ({INSTALLER_REPOSITORY})",
                crate::printable::line(registry)
            ),
        ),
        (Some(_), _) => Guard::pass(
            id,
            format!("Talos {target} is in the built-in release table"),
        ),
        (None, origin) => {
            let asked = match origin {
                ReleasesOrigin::Registry { registry, .. } => {
                    format!("registry {}", crate::printable::line(registry))
                }
                ReleasesOrigin::BuiltIn { .. } => "no registry that answered".to_string(),
            };
            Guard::warn(
                id,
                format!(
                    "Talos {target} is listed neither by {asked} nor in the built-in table; {} may not exist",
                    crate::printable::line(&plan.image)
                ),
            )
            .acked_by(UNLISTED_RELEASE_ACK)
        }
    }
}

fn kubernetes_supported(plan: &UpgradePlan, status: &ClusterStatus) -> Guard {
    let id = GuardId::KubernetesSupported;
    let server = status
        .kubernetes
        .as_ref()
        .and_then(|k| k.server_version.as_deref());
    let kubelets = status
        .nodes
        .iter()
        .filter_map(|n| n.kubelet_version.as_deref());
    let running: BTreeSet<Version> = server
        .into_iter()
        .chain(kubelets)
        .filter_map(|v| Version::parse(v).ok())
        .collect();
    if running.is_empty() {
        return Guard::warn(
            id,
            format!(
                "Kubernetes version unknown; check that Talos {} supports it",
                plan.target
            ),
        );
    }
    let failures: Vec<String> = running
        .iter()
        .filter_map(|kube| check_kubernetes_supported(&plan.target, kube).err())
        .map(|e| e.to_string())
        .collect();
    match failures.first() {
        Some(first) => Guard::fail(id, first.clone()),
        None => {
            let list: Vec<String> = running.iter().map(Version::to_string).collect();
            Guard::pass(
                id,
                format!("Talos {} runs Kubernetes {}", plan.target, list.join(", ")),
            )
        }
    }
}

fn installer_image(plan: &UpgradePlan) -> Guard {
    let id = GuardId::InstallerImage;
    let name = plan.image.rsplit('/').next().unwrap_or(&plan.image);
    let name = name.split('@').next().unwrap_or(name);
    match name.split_once(':').map(|(_, tag)| tag) {
        Some(tag) if tag == plan.target.to_string() => Guard::pass(id, plan.image.clone()),
        Some(tag) => Guard::warn(
            id,
            format!(
                "{} is tagged {tag}, not the target {}",
                plan.image, plan.target
            ),
        ),
        None => Guard::warn(
            id,
            format!(
                "{} has no tag; make sure it installs {}",
                plan.image, plan.target
            ),
        ),
    }
}

/// The nodes the guards look at: every planned node the operator did not leave out.
fn planned_nodes<'a>(
    plan: &'a UpgradePlan,
    status: &'a ClusterStatus,
) -> Vec<(&'a str, Option<&'a NodeStatus>)> {
    plan.steps
        .iter()
        .filter(|s| s.state != StepState::LeftOut)
        .map(|s| (s.node.as_str(), status.node(&s.node)))
        .collect()
}

fn node_guards(plan: &UpgradePlan, status: &ClusterStatus) -> Vec<Guard> {
    nodes_healthy(&planned_nodes(plan, status))
}

/// Every one of `nodes` (name, and its status when it has one) reachable, running and ready.
pub(crate) fn nodes_healthy(nodes: &[(&str, Option<&NodeStatus>)]) -> Vec<Guard> {
    let mut unreachable = Vec::new();
    let mut not_running = Vec::new();
    let mut not_ready = Vec::new();
    for (name, node) in nodes {
        let Some(node) = node else {
            unreachable.push(format!("{name} (gone from the cluster status)"));
            not_running.push(format!("{name} (unknown)"));
            not_ready.push(format!("{name} (unknown)"));
            continue;
        };
        if let Some(error) = &node.error {
            unreachable.push(format!("{name} ({error})"));
        }
        match node.stage {
            Some(MachineStage::Running) => {}
            Some(stage) => not_running.push(format!("{name} ({stage})")),
            None => not_running.push(format!("{name} (unknown)")),
        }
        if let Some(why) = not_ready_reason(node) {
            not_ready.push(format!("{name} ({why})"));
        }
    }
    let count = nodes.len();
    vec![
        verdict_over(
            GuardId::NodesReachable,
            "unreachable",
            &unreachable,
            count,
            "reachable",
        ),
        verdict_over(
            GuardId::NodesRunning,
            "not running",
            &not_running,
            count,
            "running",
        ),
        verdict_over(GuardId::NodesReady, "not ready", &not_ready, count, "ready"),
    ]
}

pub(crate) fn not_ready_reason(node: &NodeStatus) -> Option<String> {
    if node.error.is_some() && !node.ready {
        return Some("unreachable".to_string());
    }
    if !node.ready {
        let unmet = node.unmet_names();
        return Some(if unmet.is_empty() {
            "Talos not ready".to_string()
        } else {
            format!("unmet: {}", unmet.join(", "))
        });
    }
    if node.k8s_ready == Some(false) {
        return Some("Kubernetes node NotReady".to_string());
    }
    None
}

pub(crate) fn verdict_over(
    id: GuardId,
    bad: &str,
    offenders: &[String],
    count: usize,
    good: &str,
) -> Guard {
    if offenders.is_empty() {
        Guard::pass(id, format!("all {count} nodes {good}"))
    } else {
        Guard::fail(id, format!("{bad}: {}", offenders.join(", ")))
    }
}

pub(crate) fn member_name(m: &EtcdMemberReport) -> String {
    if m.hostname.is_empty() {
        format!("member {}", m.id)
    } else {
        format!("{} ({})", m.hostname, m.id)
    }
}

fn etcd_healthy(plan: &UpgradePlan, status: &ClusterStatus) -> Guard {
    let id = GuardId::EtcdHealthy;
    let members = &status.etcd.members;
    let lost: Vec<String> = plan
        .steps
        .iter()
        .filter_map(|s| s.etcd_member.as_ref().map(|m| (s, m)))
        .filter(|(_, member)| !members.iter().any(|m| &m.id == *member))
        .map(|(s, member)| format!("{} ({member}) left the member list", s.node))
        .collect();
    if !lost.is_empty() {
        return Guard::fail(id, format!("etcd lost a member: {}", lost.join(", ")));
    }
    let has_control_planes = plan.steps.iter().any(|s| s.role == NodeRole::Controlplane);
    if members.is_empty() {
        return if has_control_planes {
            Guard::fail(id, "no etcd members reported")
        } else {
            Guard::warn(
                id,
                "no etcd members reported and no control plane in the plan",
            )
        };
    }
    if let Some(guard) = unhealthy_members(id, members) {
        return guard;
    }
    let learners: Vec<String> = members
        .iter()
        .filter(|m| m.is_learner)
        .map(member_name)
        .collect();
    if !learners.is_empty() {
        return Guard::fail(
            id,
            format!("etcd learner still joining: {}", learners.join(", ")),
        );
    }
    leader_verdict(id, status)
}

/// Fails naming every member that is not healthy, with its first error; none when all are.
pub(crate) fn unhealthy_members(id: GuardId, members: &[EtcdMemberReport]) -> Option<Guard> {
    let unhealthy: Vec<String> = members
        .iter()
        .filter(|m| !m.healthy)
        .map(|m| {
            // Its own alarm first: etcd lists every member's alarms in each status.
            let own = format!("memberID:{}", m.id);
            let why = m
                .errors
                .iter()
                .find(|e| e.contains(&own))
                .or(m.errors.first())
                .map(String::as_str)
                .unwrap_or("did not answer");
            format!("{} unhealthy: {why}", member_name(m))
        })
        .collect();
    (!unhealthy.is_empty())
        .then(|| Guard::fail(id, format!("etcd member {}", unhealthy.join("; "))))
}

/// Passes with the healthy count and the leader; fails when etcd reports no leader.
pub(crate) fn leader_verdict(id: GuardId, status: &ClusterStatus) -> Guard {
    let members = &status.etcd.members;
    match status.etcd.leader() {
        None => Guard::fail(id, "etcd reports no leader"),
        Some(leader) => Guard::pass(
            id,
            format!(
                "{} of {} members healthy, leader {}",
                members.len(),
                members.len(),
                leader.hostname
            ),
        ),
    }
}

pub(crate) fn etcd_alarms(status: &ClusterStatus) -> Guard {
    let id = GuardId::EtcdAlarms;
    if status.etcd.alarms.is_empty() {
        return Guard::pass(id, "no etcd alarms");
    }
    let alarms: Vec<String> = status
        .etcd
        .alarms
        .iter()
        .map(|a| match &a.hostname {
            Some(host) => format!("{} on {host} ({})", a.alarm, a.member_id),
            None => format!("{} on member {}", a.alarm, a.member_id),
        })
        .collect();
    Guard::fail(id, format!("etcd alarm: {}", alarms.join(", ")))
}

/// Quorum for every control plane the plan takes down, as one guard.
fn plan_quorum(plan: &UpgradePlan, status: &ClusterStatus) -> Guard {
    let id = GuardId::EtcdQuorum;
    let per_node: Vec<(&str, Guard)> = plan
        .nodes_to_upgrade()
        .filter(|s| s.role != NodeRole::Worker)
        .map(|s| (s.node.as_str(), quorum_after_losing(status, &s.node)))
        .collect();
    let breaking: Vec<&str> = per_node
        .iter()
        .filter(|(_, g)| g.verdict == Verdict::Fail)
        .map(|(n, _)| *n)
        .collect();
    let q = quorum_of(&status.etcd.members);
    let counts = format!(
        "{} of {} members healthy, {} needed",
        q.healthy, q.members, q.needed
    );
    if !breaking.is_empty() {
        return Guard::fail(
            id,
            format!(
                "losing {} breaks etcd quorum: {counts}",
                breaking.join(" or ")
            ),
        );
    }
    if let Some((_, warning)) = per_node.iter().find(|(_, g)| g.verdict == Verdict::Warn) {
        return warning.clone();
    }
    if per_node.is_empty() {
        return Guard::pass(id, "no control plane in the plan");
    }
    Guard::pass(
        id,
        format!("each control plane can go down alone: {counts}"),
    )
}

fn single_control_plane(plan: &UpgradePlan, status: &ClusterStatus) -> Guard {
    let id = GuardId::SingleControlPlane;
    let control_planes: Vec<&NodeStatus> = status
        .nodes
        .iter()
        .filter(|n| n.role == NodeRole::Controlplane)
        .collect();
    match control_planes.as_slice() {
        [only]
            if plan
                .position(&only.name)
                .is_some_and(|i| !plan.steps[i].is_skipped()) =>
        {
            Guard::warn(
                id,
                format!(
                    "{} is the only control plane: the Kubernetes API is down while it upgrades",
                    only.name
                ),
            )
            .acked_by(SINGLE_CONTROL_PLANE_ACK)
        }
        [only] => Guard::pass(
            id,
            format!("the only control plane {} is not upgraded", only.name),
        ),
        many => Guard::pass(id, format!("{} control planes", many.len())),
    }
}

#[cfg(test)]
#[path = "guards_tests.rs"]
mod tests;
