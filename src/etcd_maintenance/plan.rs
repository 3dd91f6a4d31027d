//! What an etcd action will do, member by member, from the status model: which node each
//! call goes to and in which order (followers first, the leader last), and every member's
//! database size against the quota. Pure.
use std::path::PathBuf;

use serde::Serialize;

use crate::approval::{EtcdAction, MutatingAction};
use crate::fleet::{ClusterStatus, EtcdMemberReport};
use crate::printable::{bytes_text, yes_no};

/// etcd's backend quota when `quota-backend-bytes` is not set (etcd server/storage/quota.go
/// `DefaultQuotaBytes`); Talos does not set it unless `cluster.etcd.extraArgs` does.
pub const QUOTA_BYTES: i64 = 2 * 1024 * 1024 * 1024;

/// What the operator asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EtcdRequest {
    /// Defragment the members over quota (followers first), then disarm every alarm.
    Disarm,
    /// One member (`node`) or all of them, the leader last.
    Defragment {
        node: Option<String>,
    },
    /// The database of `node` (the leader when none) into `out`, a new file unless
    /// `overwrite` lets it replace an existing regular file.
    Snapshot {
        node: Option<String>,
        out: PathBuf,
        overwrite: bool,
    },
    ForfeitLeadership {
        node: String,
    },
    /// A member by its 16-digit hex id or its hostname.
    RemoveMember {
        member: String,
    },
}

impl EtcdRequest {
    /// The etcd action it asks for.
    pub fn action(&self) -> EtcdAction {
        match self {
            EtcdRequest::Disarm => EtcdAction::Disarm,
            EtcdRequest::Defragment { .. } => EtcdAction::Defragment,
            EtcdRequest::Snapshot { .. } => EtcdAction::Snapshot,
            EtcdRequest::ForfeitLeadership { .. } => EtcdAction::ForfeitLeadership,
            EtcdRequest::RemoveMember { .. } => EtcdAction::RemoveMember,
        }
    }
}

/// One call to one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EtcdStep {
    /// The node's name, as the status model has it.
    pub node: String,
    /// Where the call goes.
    pub address: String,
    pub call: EtcdCall,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "call", rename_all = "kebab-case")]
pub enum EtcdCall {
    Defragment,
    Disarm,
    Snapshot {
        out: PathBuf,
        overwrite: bool,
    },
    /// `new_leader`: the member leadership moves to, when the node's member leads now.
    ForfeitLeadership {
        new_leader: Option<String>,
    },
    /// The member to remove (16 hex digits) and its hostname, asked through the step's node.
    RemoveMember {
        member_id: String,
        hostname: String,
    },
}

impl EtcdCall {
    pub fn as_str(&self) -> &'static str {
        match self {
            EtcdCall::Defragment => "defragment",
            EtcdCall::Disarm => "disarm alarms",
            EtcdCall::Snapshot { .. } => "snapshot",
            EtcdCall::ForfeitLeadership { .. } => "forfeit leadership",
            EtcdCall::RemoveMember { .. } => "remove member",
        }
    }
}

/// One member's database against the quota, as the plan shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemberSpace {
    pub hostname: String,
    pub id: String,
    pub leader: bool,
    pub healthy: bool,
    pub db_size: Option<i64>,
    pub db_size_in_use: Option<i64>,
    /// The member's alarm (`NOSPACE`, `CORRUPT`), if any.
    pub alarm: Option<String>,
}

/// The members table's columns, as `etcd alarms` and an etcd plan print it and the actions
/// screen draws it.
pub const MEMBER_HEADER: [&str; 7] = [
    "MEMBER", "ID", "LEADER", "HEALTHY", "DB SIZE", "IN USE", "ALARM",
];

impl MemberSpace {
    /// The member's row under [`MEMBER_HEADER`]; a size the member did not report is `None`
    /// (the command prints `?`, the console its placeholder).
    pub fn cells(&self) -> [Option<String>; 7] {
        let size = |bytes: Option<i64>| bytes.map(bytes_text);
        [
            Some(self.hostname.clone()),
            Some(self.id.clone()),
            Some(if self.leader { "yes" } else { "-" }.to_string()),
            Some(yes_no(self.healthy).to_string()),
            size(self.db_size),
            size(self.db_size_in_use),
            Some(self.alarm.clone().unwrap_or_else(|| "-".to_string())),
        ]
    }
}

/// The plan of one etcd action: the JSON of `etcd ... --plan --output json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EtcdPlan {
    pub cluster: String,
    pub action: EtcdAction,
    /// The node or member the action is about, in words ("cp-2", "all members").
    pub target: String,
    pub quota: i64,
    pub members: Vec<MemberSpace>,
    pub steps: Vec<EtcdStep>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// Nothing to do (no alarm to disarm): not a failure.
    #[error("{0}")]
    NothingToDo(String),
    /// The node or member named is not one of this cluster's.
    #[error("{0}")]
    Unknown(String),
}

impl EtcdPlan {
    pub fn new(status: &ClusterStatus, request: &EtcdRequest) -> Result<EtcdPlan, PlanError> {
        let members = member_space(status);
        let (action, target, steps) = match request {
            EtcdRequest::Disarm => disarm_steps(status, &members)?,
            EtcdRequest::Defragment { node } => defragment_steps(status, node.as_deref())?,
            EtcdRequest::Snapshot {
                node,
                out,
                overwrite,
            } => {
                let member = match node {
                    Some(n) => member_named(status, n)?,
                    None => status.etcd.leader().ok_or_else(|| {
                        PlanError::Unknown(format!(
                            "{}: etcd reports no leader; name the member with --node",
                            status.name
                        ))
                    })?,
                };
                let call = EtcdCall::Snapshot {
                    out: out.clone(),
                    overwrite: *overwrite,
                };
                let step = step_on(status, member, call);
                (EtcdAction::Snapshot, step.node.clone(), vec![step])
            }
            EtcdRequest::ForfeitLeadership { node } => {
                let member = member_named(status, node)?;
                let new_leader = new_leader(status, member);
                let step = step_on(status, member, EtcdCall::ForfeitLeadership { new_leader });
                (EtcdAction::ForfeitLeadership, step.node.clone(), vec![step])
            }
            EtcdRequest::RemoveMember { member } => remove_steps(status, member)?,
        };
        Ok(EtcdPlan {
            cluster: status.name.clone(),
            action,
            target,
            quota: QUOTA_BYTES,
            members,
            steps,
        })
    }

    /// The action the dispatcher approves for this plan.
    pub fn mutating_action(&self) -> MutatingAction {
        MutatingAction::Etcd {
            cluster: self.cluster.clone(),
            action: self.action,
            target: self.target.clone(),
        }
    }
}

type Steps = (EtcdAction, String, Vec<EtcdStep>);

/// Every member's database against the quota, with its alarm.
pub fn member_space(status: &ClusterStatus) -> Vec<MemberSpace> {
    status
        .etcd
        .members
        .iter()
        .map(|m| MemberSpace {
            hostname: m.hostname.clone(),
            id: m.id.clone(),
            leader: m.leader,
            healthy: m.healthy,
            db_size: m.db_size,
            db_size_in_use: m.db_size_in_use,
            alarm: status
                .etcd
                .alarms
                .iter()
                .find(|a| a.member_id == m.id)
                .map(|a| a.alarm.clone()),
        })
        .collect()
}

/// The member of a node (by name or address) or a member by hostname or id.
fn member_named<'a>(
    status: &'a ClusterStatus,
    name: &str,
) -> Result<&'a EtcdMemberReport, PlanError> {
    let node = status.node(name);
    status
        .etcd
        .members
        .iter()
        .find(|m| {
            m.hostname == name
                || m.id == name.trim_start_matches("0x")
                || node.is_some_and(|n| n.name == m.hostname || n.address == m.hostname)
        })
        .ok_or_else(|| {
            PlanError::Unknown(format!(
                "{name} is not an etcd member of {} (members: {})",
                status.name,
                status
                    .etcd
                    .members
                    .iter()
                    .map(|m| m.hostname.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
}

/// Who leads after `member` forfeits: Talos moves leadership to the first other member of
/// etcd's member list (siderolabs/talos internal/pkg/etcd/etcd.go `ForfeitLeadership`), which
/// etcd returns sorted by member id (etcd server/etcdserver/api/membership/cluster.go
/// `Members`); `None` when `member` does not lead (the call then moves nothing).
fn new_leader(status: &ClusterStatus, member: &EtcdMemberReport) -> Option<String> {
    if !member.leader {
        return None;
    }
    status
        .etcd
        .members
        .iter()
        .filter(|m| m.id != member.id)
        .min_by(|a, b| a.id.cmp(&b.id))
        .map(|m| m.hostname.clone())
}

impl EtcdCall {
    /// The call in the plan's words, with the subject it touches: the member a forfeit hands
    /// leadership to, or that it moves nothing.
    pub fn describe(&self, node: &str) -> String {
        match self {
            EtcdCall::ForfeitLeadership {
                new_leader: Some(to),
            } => format!("forfeit leadership to {to}"),
            EtcdCall::ForfeitLeadership { new_leader: None } => {
                format!("forfeit leadership ({node} does not lead: nothing moves)")
            }
            EtcdCall::RemoveMember {
                member_id,
                hostname,
            } => format!("remove member {hostname} ({member_id})"),
            other => other.as_str().to_string(),
        }
    }
}

fn step_on(status: &ClusterStatus, member: &EtcdMemberReport, call: EtcdCall) -> EtcdStep {
    let address = status
        .node(&member.hostname)
        .map_or_else(|| member.hostname.clone(), |n| n.address.clone());
    EtcdStep {
        node: member.hostname.clone(),
        address,
        call,
    }
}

/// Followers by name, then the leader: the order defragments run in.
fn leader_last<'a>(
    members: impl Iterator<Item = &'a EtcdMemberReport>,
) -> Vec<&'a EtcdMemberReport> {
    let mut list: Vec<&EtcdMemberReport> = members.collect();
    list.sort_by(|a, b| a.leader.cmp(&b.leader).then(a.hostname.cmp(&b.hostname)));
    list
}

fn defragment_steps(status: &ClusterStatus, node: Option<&str>) -> Result<Steps, PlanError> {
    let (target, members) = match node {
        Some(n) => {
            let member = member_named(status, n)?;
            (member.hostname.clone(), vec![member])
        }
        None => (
            "all members".to_string(),
            leader_last(status.etcd.members.iter().filter(|m| !m.is_learner)),
        ),
    };
    let steps = members
        .into_iter()
        .map(|m| step_on(status, m, EtcdCall::Defragment))
        .collect();
    Ok((EtcdAction::Defragment, target, steps))
}

/// The members a disarm defragments first: those with an alarm or over quota, with free
/// pages to give back.
fn needs_defragment(space: &MemberSpace) -> bool {
    let over = space.db_size.is_some_and(|s| s >= QUOTA_BYTES);
    let free = match (space.db_size, space.db_size_in_use) {
        (Some(size), Some(in_use)) => size > in_use,
        _ => false,
    };
    (over || space.alarm.is_some()) && free
}

fn disarm_steps(status: &ClusterStatus, space: &[MemberSpace]) -> Result<Steps, PlanError> {
    if status.etcd.alarms.is_empty() {
        return Err(PlanError::NothingToDo(format!(
            "no etcd alarms on {}: nothing to disarm",
            status.name
        )));
    }
    let defragment = leader_last(
        status
            .etcd
            .members
            .iter()
            .filter(|m| space.iter().any(|s| s.id == m.id && needs_defragment(s))),
    );
    let mut steps: Vec<EtcdStep> = defragment
        .into_iter()
        .map(|m| step_on(status, m, EtcdCall::Defragment))
        .collect();
    let through = status
        .etcd
        .leader()
        .or_else(|| status.etcd.members.iter().find(|m| m.healthy))
        .ok_or_else(|| PlanError::Unknown(format!("{}: no etcd member answers", status.name)))?;
    steps.push(step_on(status, through, EtcdCall::Disarm));
    let alarmed: Vec<String> = status
        .etcd
        .alarms
        .iter()
        .map(|a| a.hostname.clone().unwrap_or_else(|| a.member_id.clone()))
        .collect();
    Ok((EtcdAction::Disarm, alarmed.join(", "), steps))
}

fn remove_steps(status: &ClusterStatus, wanted: &str) -> Result<Steps, PlanError> {
    let member = member_named(status, wanted)?;
    let through = status
        .etcd
        .leader()
        .filter(|l| l.id != member.id)
        .or_else(|| {
            status
                .etcd
                .members
                .iter()
                .find(|m| m.id != member.id && m.healthy)
        })
        .ok_or_else(|| {
            PlanError::Unknown(format!(
                "{}: no other etcd member answers to remove {} through",
                status.name, member.hostname
            ))
        })?;
    let call = EtcdCall::RemoveMember {
        member_id: member.id.clone(),
        hostname: member.hostname.clone(),
    };
    let target = format!("{} ({})", member.hostname, member.id);
    Ok((
        EtcdAction::RemoveMember,
        target,
        vec![step_on(status, through, call)],
    ))
}

/// The etcd actions offered about member `member_id` of `status`, in the menu's order, only
/// those whose subject exists: disarm while an alarm is active, forfeit on the leader,
/// remove-member for a member no answering node runs.
pub fn offered(status: &ClusterStatus, member_id: &str) -> Vec<EtcdAction> {
    let member = status.etcd.members.iter().find(|m| m.id == member_id);
    let mut actions = Vec::new();
    if !status.etcd.alarms.is_empty() {
        actions.push(EtcdAction::Disarm);
    }
    actions.extend([EtcdAction::Defragment, EtcdAction::Snapshot]);
    if member.is_some_and(|m| m.leader) {
        actions.push(EtcdAction::ForfeitLeadership);
    }
    let runs_on_a_node = member.is_some_and(|m| {
        status
            .nodes
            .iter()
            .any(|n| n.error.is_none() && (n.name == m.hostname || n.address == m.hostname))
    });
    if !runs_on_a_node {
        actions.push(EtcdAction::RemoveMember);
    }
    actions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_members_cells_say_its_leader_health_sizes_and_alarm_under_the_header() {
        let member = MemberSpace {
            hostname: "cp-1".into(),
            id: "00aa".into(),
            leader: true,
            healthy: false,
            db_size: Some(3 * 1024 * 1024),
            db_size_in_use: None,
            alarm: Some("NOSPACE".into()),
        };
        let cells = member.cells();
        assert_eq!(cells.len(), MEMBER_HEADER.len());
        let some = |t: &str| Some(t.to_string());
        assert_eq!(
            cells,
            [
                some("cp-1"),
                some("00aa"),
                some("yes"),
                some("no"),
                some("3.0 MiB"),
                None,
                some("NOSPACE")
            ]
        );
        let quiet = MemberSpace {
            leader: false,
            alarm: None,
            ..member
        };
        assert_eq!(
            (quiet.cells()[2].as_deref(), quiet.cells()[6].as_deref()),
            (Some("-"), Some("-"))
        );
    }
}
