//! The guards of an etcd action: the role the call needs, every member healthy before a
//! defragment (one member at a time, the leader last), the database against its quota before
//! a disarm, no running node behind a member being removed and quorum after it, the leader
//! for a forfeit, and a place to write a snapshot. Pure.
use super::plan::{EtcdCall, EtcdPlan, MemberSpace, QUOTA_BYTES};
use super::snapshot_file::{SnapshotTarget, check_target};
use crate::approval::EtcdAction;
use crate::fleet::{ClusterStatus, EtcdMemberReport};
use crate::guards::{Guard, GuardId, Verdict};
use crate::printable::{self, bytes_text};
use crate::rollout::LeaseReading;
use crate::talos::{MachineStage, Roles};
use crate::upgrade::guards::{
    leader_verdict, lease_guard, member_name, quorum_without, role_guard, unhealthy_members,
};

/// Every guard of the plan, in [`GuardId::ETCD`] order; `lease` is what the cluster's rollout
/// Lease said (or why it was not read). Every action but a snapshot changes etcd, so none may
/// run while a rollout holds the Lease (a forfeit or a defragment while an upgrade reboots a
/// member collides with it).
pub fn plan_guards(
    plan: &EtcdPlan,
    status: &ClusterStatus,
    roles: &Roles,
    lease: &LeaseReading,
) -> Vec<Guard> {
    let mut guards = vec![role(plan.action, roles)];
    if plan.action != EtcdAction::Snapshot {
        guards.push(lease_guard(&plan.cluster, lease));
    }
    match plan.action {
        EtcdAction::Defragment => {
            guards.push(all_healthy(status));
            guards.push(defrag_order(plan));
        }
        EtcdAction::Disarm => {
            if plan.steps.iter().any(|s| s.call == EtcdCall::Defragment) {
                guards.push(all_healthy(status));
                guards.push(defrag_order(plan));
            }
            guards.push(space(plan));
        }
        EtcdAction::Snapshot => {
            guards.push(member_healthy(plan, status));
            guards.push(snapshot_file(plan));
        }
        EtcdAction::ForfeitLeadership => guards.push(leader(plan, status)),
        EtcdAction::RemoveMember => {
            guards.push(member_without_node(plan, status));
            guards.push(quorum_after_removal(plan, status));
        }
    }
    guards
}

fn role(action: EtcdAction, roles: &Roles) -> Guard {
    let id = GuardId::EtcdRole;
    let (allowed, needed) = match action {
        EtcdAction::Disarm | EtcdAction::Defragment => {
            (roles.may_maintain_etcd(), "os:operator or os:admin")
        }
        EtcdAction::Snapshot => (
            roles.may_snapshot_etcd(),
            "os:admin, os:operator or os:etcd:backup",
        ),
        EtcdAction::ForfeitLeadership | EtcdAction::RemoveMember => {
            (roles.may_remove_etcd_member(), "os:admin")
        }
    };
    let refusal = format!("{}; it needs {needed}", action.as_str());
    role_guard(id, roles, allowed, &refusal)
}

fn all_healthy(status: &ClusterStatus) -> Guard {
    let id = GuardId::EtcdHealthy;
    let members = &status.etcd.members;
    if members.is_empty() {
        return Guard::fail(id, "no etcd members reported");
    }
    let failing: Vec<EtcdMemberReport> = members.iter().filter(|m| !m.answers()).cloned().collect();
    if let Some(guard) = unhealthy_members(id, &failing) {
        return guard;
    }
    let mut guard = leader_verdict(id, status);
    let alarmed: Vec<&str> = members
        .iter()
        .filter(|m| !m.healthy)
        .map(|m| m.hostname.as_str())
        .collect();
    if guard.verdict == Verdict::Pass && !alarmed.is_empty() {
        guard.reason = format!("{} (alarm aside: {})", guard.reason, alarmed.join(", "));
    }
    guard
}

fn defragments(plan: &EtcdPlan) -> impl Iterator<Item = &str> {
    plan.steps
        .iter()
        .filter(|s| s.call == EtcdCall::Defragment)
        .map(|s| s.node.as_str())
}

/// The plan's defragments run one after another; the leader may come first only when it is
/// the only one with free pages left.
fn defrag_order(plan: &EtcdPlan) -> Guard {
    let id = GuardId::DefragOrder;
    let order: Vec<&str> = defragments(plan).collect();
    let leader = plan.members.iter().find(|m| m.leader);
    let Some(leader) = leader.filter(|l| order.contains(&l.hostname.as_str())) else {
        return Guard::pass(
            id,
            format!("followers only, one at a time: {}", order.join(", ")),
        );
    };
    let last = order.last() == Some(&leader.hostname.as_str());
    let waiting: Vec<&str> = plan
        .members
        .iter()
        .filter(|m| !m.leader && has_free_pages(m) && !order.contains(&m.hostname.as_str()))
        .map(|m| m.hostname.as_str())
        .collect();
    if !last || !waiting.is_empty() {
        let followers = if waiting.is_empty() {
            "the followers".to_string()
        } else {
            waiting.join(", ")
        };
        return Guard::fail(
            id,
            format!(
                "{} is the leader: defragment {followers} first, or forfeit its leadership",
                leader.hostname
            ),
        );
    }
    Guard::pass(
        id,
        format!(
            "one at a time, leader {} last: {}",
            leader.hostname,
            order.join(", ")
        ),
    )
}

fn has_free_pages(m: &MemberSpace) -> bool {
    matches!((m.db_size, m.db_size_in_use), (Some(s), Some(u)) if s > u)
}

/// Every member's size against the quota; fails when what is in use is over it.
fn space(plan: &EtcdPlan) -> Guard {
    let id = GuardId::EtcdSpace;
    let quota = bytes_text(plan.quota);
    let mut over = Vec::new();
    let mut shown = Vec::new();
    for m in &plan.members {
        let (Some(size), Some(in_use)) = (m.db_size, m.db_size_in_use) else {
            shown.push(format!("{} size unknown", m.hostname));
            continue;
        };
        if in_use >= QUOTA_BYTES {
            over.push(format!("{} uses {} in use", m.hostname, bytes_text(in_use)));
        }
        if m.alarm.is_some() || size >= QUOTA_BYTES {
            shown.push(format!(
                "{} {} of {quota} ({} in use)",
                m.hostname,
                bytes_text(size),
                bytes_text(in_use)
            ));
        }
    }
    if !over.is_empty() {
        return Guard::fail(
            id,
            format!(
                "{} of a {quota} quota: a defragment frees nothing, compact or raise quota-backend-bytes first",
                over.join(", ")
            ),
        );
    }
    if shown.is_empty() {
        return Guard::pass(id, format!("every member under the {quota} quota"));
    }
    Guard::pass(
        id,
        format!(
            "{}; defragmenting brings each under the quota",
            shown.join(", ")
        ),
    )
}

fn member_healthy(plan: &EtcdPlan, status: &ClusterStatus) -> Guard {
    let id = GuardId::EtcdHealthy;
    let Some(step) = plan.steps.first() else {
        return Guard::fail(id, "no member to ask");
    };
    let member = status.etcd.members.iter().find(|m| m.hostname == step.node);
    match member {
        Some(m) if m.answers() => Guard::pass(id, format!("{} answers", member_name(m))),
        Some(m) => unhealthy_members(id, std::slice::from_ref(m))
            .unwrap_or_else(|| Guard::fail(id, format!("{} unhealthy", member_name(m)))),
        None => Guard::fail(id, format!("{} is not an etcd member", step.node)),
    }
}

fn snapshot_file(plan: &EtcdPlan) -> Guard {
    let id = GuardId::SnapshotFile;
    let Some((out, overwrite)) = plan.steps.iter().find_map(|s| match &s.call {
        EtcdCall::Snapshot { out, overwrite } => Some((out, *overwrite)),
        _ => None,
    }) else {
        return Guard::fail(id, "no snapshot file named");
    };
    let shown = printable::line(&out.display().to_string());
    match check_target(out, overwrite) {
        Ok(SnapshotTarget::New) => {
            Guard::pass(id, format!("{shown} (new, written whole, mode 0600)"))
        }
        Ok(SnapshotTarget::Replaced) => Guard::pass(
            id,
            format!("{shown} (replaces the existing file, written whole, mode 0600)"),
        ),
        Err(refusal) => Guard::fail(id, format!("{shown}: {refusal}")),
    }
}

fn leader(plan: &EtcdPlan, status: &ClusterStatus) -> Guard {
    let id = GuardId::EtcdLeader;
    let Some(step) = plan.steps.first() else {
        return Guard::fail(id, "no member to ask");
    };
    let others = status
        .etcd
        .members
        .iter()
        .filter(|m| m.hostname != step.node && m.answers() && !m.is_learner)
        .count();
    match status.etcd.leader() {
        Some(l) if l.hostname == step.node && others > 0 => Guard::pass(
            id,
            format!(
                "{} leads; {others} healthy member(s) can take over",
                step.node
            ),
        ),
        Some(l) if l.hostname == step.node => Guard::fail(
            id,
            format!("{} leads but no other member is healthy", step.node),
        ),
        Some(l) => Guard::fail(
            id,
            format!(
                "{} is not the leader ({} is): nothing to forfeit",
                step.node, l.hostname
            ),
        ),
        None => Guard::fail(id, "etcd reports no leader"),
    }
}

fn removed(plan: &EtcdPlan) -> Option<(&str, &str)> {
    plan.steps.iter().find_map(|s| match &s.call {
        EtcdCall::RemoveMember {
            member_id,
            hostname,
        } => Some((member_id.as_str(), hostname.as_str())),
        _ => None,
    })
}

/// A member may go only when no node of that name answers as running.
fn member_without_node(plan: &EtcdPlan, status: &ClusterStatus) -> Guard {
    let id = GuardId::MemberWithoutNode;
    let Some((_, hostname)) = removed(plan) else {
        return Guard::fail(id, "no member to remove");
    };
    match status.node(hostname) {
        None => Guard::pass(id, format!("no node named {hostname} in {}", status.name)),
        Some(node) if node.error.is_some() => Guard::pass(
            id,
            format!(
                "{hostname} does not answer: {}",
                node.error.as_deref().unwrap_or_default()
            ),
        ),
        Some(node) if node.stage == Some(MachineStage::Running) => Guard::fail(
            id,
            format!(
                "{hostname} is running ({}): shut it down or reset it first",
                node.address
            ),
        ),
        Some(node) => Guard::pass(
            id,
            format!(
                "{hostname} is not running ({})",
                node.stage
                    .map_or("stage unknown".to_string(), |s| s.to_string())
            ),
        ),
    }
}

fn quorum_after_removal(plan: &EtcdPlan, status: &ClusterStatus) -> Guard {
    let Some((member_id, hostname)) = removed(plan) else {
        return Guard::fail(GuardId::EtcdQuorum, "no member to remove");
    };
    quorum_without(status, member_id, hostname)
}
