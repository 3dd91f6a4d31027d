//! etcd as a simulated control plane answers `machine.MachineService` about it: the member
//! list, member status, alarms, forfeiting leadership and leaving the cluster, with Talos's
//! rule that only control planes serve them, and the server-side etcd check of the legacy
//! Upgrade.
use tonic::Status;

use super::apid::Target;
use super::etcd_service;
use crate::model::scenario::{EtcdAlarmKind, NodeRole};
use taloscope_proto::machine::*;

fn control_plane_only(t: &Target, api: &str) -> Result<(), Status> {
    if t.node.role() == NodeRole::ControlPlane {
        Ok(())
    } else {
        Err(Status::unimplemented(format!(
            "{api} is only available on control plane nodes"
        )))
    }
}

fn member_of(t: &Target) -> Result<usize, Status> {
    let etcd = t.cluster.etcd_lock();
    etcd.members
        .iter()
        .copied()
        .find(|&m| m == t.node.node_index)
        .ok_or_else(|| {
            Status::failed_precondition("etcd is not running on this node (not a member)")
        })
}

fn has_quorum(t: &Target) -> bool {
    let etcd = t.cluster.etcd_lock();
    let healthy = etcd
        .members
        .iter()
        .filter(|&&m| t.cluster.member_healthy(m))
        .count();
    healthy > etcd.members.len() / 2
}

pub(super) fn member_list(t: &Target) -> Result<EtcdMembers, Status> {
    control_plane_only(t, "member list")?;
    etcd_service::any_member_answers(t)?;
    if !has_quorum(t) {
        return Err(Status::unavailable(
            "failed to list etcd members: etcdserver: no leader",
        ));
    }
    let members: Vec<usize> = t.cluster.etcd_lock().members.clone();
    let mut out = EtcdMembers::default();
    for i in members {
        let Some(n) = t.cluster.nodes.get(i) else {
            continue;
        };
        let ip = n.address();
        out.legacy_members.push(n.name().to_string());
        out.members.push(EtcdMember {
            id: n.etcd_member_id(),
            hostname: n.name().to_string(),
            peer_urls: vec![format!("https://{ip}:2380")],
            client_urls: vec![format!("https://{ip}:2379")],
            is_learner: false,
        });
    }
    Ok(out)
}

pub(super) fn etcd_status(t: &Target, advance: u64) -> Result<EtcdStatus, Status> {
    control_plane_only(t, "etcd status")?;
    etcd_service::local_client(t, "failed to query etcd status")?;
    member_of(t)?;
    let etcd = t.cluster.etcd();
    let leader = etcd
        .leader
        .and_then(|l| t.cluster.nodes.get(l))
        .map(|n| n.etcd_member_id())
        .unwrap_or(0);
    let id = t.node.etcd_member_id();
    let mut errors = Vec::new();
    if t.node.etcd_faulty() {
        errors.push("etcdserver: no connection to leader (heartbeat timeout)".to_string());
    }
    for (i, alarm) in &etcd.alarms {
        if *i == t.node.node_index {
            let name = match alarm {
                EtcdAlarmKind::NoSpace => "NOSPACE",
                EtcdAlarmKind::Corrupt => "CORRUPT",
            };
            errors.push(format!("memberID:{id} alarm:{name} "));
        }
    }
    let (db_size, db_size_in_use) = db_sizes(t.cluster.nodes.get(t.node.node_index), &etcd);
    Ok(EtcdStatus {
        metadata: None,
        member_status: Some(EtcdMemberStatus {
            protocol_version: "3.6.0".into(),
            db_size,
            db_size_in_use,
            leader,
            raft_index: etcd.raft_index + advance,
            raft_term: etcd.raft_term,
            raft_applied_index: etcd.raft_index + advance,
            errors,
            is_learner: false,
            member_id: id,
            storage_version: "3.6.0".into(),
        }),
    })
}

pub(super) fn alarm_list(t: &Target) -> Result<EtcdAlarm, Status> {
    control_plane_only(t, "etcd alarm list")?;
    etcd_service::local_client(t, "failed to list etcd alarms")?;
    let etcd = t.cluster.etcd();
    let member_alarms = map_alarms(t, &etcd.alarms);
    Ok(EtcdAlarm {
        metadata: None,
        member_alarms,
    })
}

pub(super) fn forfeit(t: &Target) -> Result<EtcdForfeitLeadership, Status> {
    control_plane_only(t, "etcd forfeit leadership")?;
    let me = member_of(t)?;
    if t.cluster.etcd_lock().members.len() == 1 {
        return Err(Status::unknown(
            "failed to forfeit leadership: cannot forfeit leadership, only one member",
        ));
    }
    let member = t
        .cluster
        .move_leader_from(me)
        .and_then(|n| t.cluster.nodes.get(n))
        .map(|n| n.name().to_string())
        .unwrap_or_default();
    Ok(EtcdForfeitLeadership {
        metadata: None,
        member,
    })
}

/// Upstream's `ValidateForUpgrade`, as the sim's etcd sees it.
pub(super) fn validate_etcd_for_upgrade(t: &Target) -> Result<(), String> {
    let members = t.cluster.etcd_lock().members.clone();
    if members.len() == 2 {
        return Err(format!(
            "etcd member count({}) is insufficient to maintain quorum if upgrade commences",
            members.len()
        ));
    }
    for m in members {
        if !t.cluster.member_healthy(m) {
            let id = t
                .cluster
                .nodes
                .get(m)
                .map(|n| n.etcd_member_id())
                .unwrap_or(0);
            return Err(format!(
                "etcd member {id:016x} is not healthy; all members must be healthy to perform an upgrade: context deadline exceeded"
            ));
        }
    }
    Ok(())
}

/// etcd's default backend quota (`--quota-backend-bytes` unset: `DefaultQuotaBytes`, 2 GiB,
/// etcd server/storage/quota.go); Talos leaves it unset unless the machine config's
/// `cluster.etcd.extraArgs` sets it.
pub(crate) const QUOTA_BYTES: i64 = 2 * 1024 * 1024 * 1024;

/// A member's database file size and the bytes in use in it. A member with the scenario's
/// NOSPACE alarm has grown past the quota with most of its pages free (compacted, not
/// defragmented); a defragmented member's file is only what is in use.
pub(crate) fn db_sizes(
    node: Option<&std::sync::Arc<crate::model::state::SimNode>>,
    etcd: &crate::model::state::EtcdCluster,
) -> (i64, i64) {
    let Some(node) = node else {
        return (0, 0);
    };
    let (size, in_use) = if node.faults().alarm == Some(EtcdAlarmKind::NoSpace) {
        (QUOTA_BYTES + 4 * 1024 * 1024, 312 * 1024 * 1024)
    } else {
        let size = 24_576_000 + (node.etcd_member_id() % 4096) as i64 * 1024;
        (size, size / 2)
    };
    if etcd.defragmented.contains(&node.node_index) {
        (in_use, in_use)
    } else {
        (size, in_use)
    }
}

/// The alarms as the API lists them, by member id (upstream's `mapAlarms`).
fn map_alarms(t: &Target, alarms: &[(usize, EtcdAlarmKind)]) -> Vec<EtcdMemberAlarm> {
    alarms
        .iter()
        .filter_map(|(i, a)| {
            let n = t.cluster.nodes.get(*i)?;
            Some(EtcdMemberAlarm {
                member_id: n.etcd_member_id(),
                alarm: alarm_name(*a) as i32,
            })
        })
        .collect()
}

fn alarm_name(kind: EtcdAlarmKind) -> etcd_member_alarm::AlarmType {
    match kind {
        EtcdAlarmKind::NoSpace => etcd_member_alarm::AlarmType::Nospace,
        EtcdAlarmKind::Corrupt => etcd_member_alarm::AlarmType::Corrupt,
    }
}

/// `EtcdAlarmDisarm` as upstream serves it (v1alpha1_server.go, v1.10 to v1.13): the local
/// client's `AlarmDisarm(&AlarmMember{})`, which clientv3 (client/v3/maintenance.go) turns
/// into a DEACTIVATE of every active alarm, answered with the alarms it disarmed. A member
/// still over its quota raises NOSPACE again at the next write (etcd
/// server/etcdserver/server.go, `applyEntryNormal` on ErrNoSpace), and a Kubernetes cluster always writes:
/// so disarm before a defragment and the alarm comes straight back.
pub(super) fn alarm_disarm(t: &Target) -> Result<EtcdAlarmDisarm, Status> {
    control_plane_only(t, "etcd alarm list")?;
    member_of(t)?;
    let mut etcd = t.cluster.etcd_lock();
    let disarmed = std::mem::take(&mut etcd.alarms);
    let member_alarms = map_alarms(t, &disarmed);
    let members = etcd.members.clone();
    for m in members {
        let (size, _) = db_sizes(t.cluster.nodes.get(m), &etcd);
        if size >= QUOTA_BYTES {
            etcd.alarms.push((m, EtcdAlarmKind::NoSpace));
        }
    }
    Ok(EtcdAlarmDisarm {
        metadata: None,
        member_alarms,
    })
}

/// `EtcdDefragment` as upstream serves it (v1alpha1_server.go, v1.10 to v1.13): the local
/// client's `Defragment` of this node's member only. Its file shrinks to what is in use; a
/// member whose etcd does not answer fails as the client's call would.
pub(super) fn defragment(t: &Target) -> Result<EtcdDefragment, Status> {
    control_plane_only(t, "etcd defragment")?;
    let me = member_of(t)?;
    if !t.cluster.member_healthy(me) {
        return Err(Status::unknown(
            "failed to defragment etcd: context deadline exceeded",
        ));
    }
    let mut etcd = t.cluster.etcd_lock();
    if !etcd.defragmented.contains(&me) {
        etcd.defragmented.push(me);
    }
    etcd.raft_index += 1;
    Ok(EtcdDefragment { metadata: None })
}

/// `EtcdRemoveMemberByID` as upstream serves it (v1alpha1_server.go, v1.10 to v1.13): a client
/// to the control planes with `WithRequireLeader`, then `RemoveMemberByMemberID`; an unknown
/// id is NotFound. etcd's strict reconfiguration check (server/etcdserver/server.go,
/// `mayRemoveMember`) refuses removing a started member when the members left could not
/// make a quorum; a member that is down may always go.
pub(super) fn remove_member(t: &Target, member_id: u64) -> Result<EtcdRemoveMemberById, Status> {
    control_plane_only(t, "etcd remove member")?;
    if !has_quorum(t) {
        return Err(Status::unknown(
            "failed to remove member: etcdserver: no leader",
        ));
    }
    let mut etcd = t.cluster.etcd_lock();
    let Some(gone) = etcd.members.iter().copied().find(|&m| {
        t.cluster
            .nodes
            .get(m)
            .is_some_and(|n| n.etcd_member_id() == member_id)
    }) else {
        return Err(Status::not_found("etcdserver: member not found"));
    };
    let voting = etcd.members.len();
    if t.cluster.member_healthy(gone) {
        let active = etcd
            .members
            .iter()
            .filter(|&&m| t.cluster.member_healthy(m))
            .count();
        if active - 1 < 1 + (voting - 1) / 2 {
            return Err(Status::unknown(
                "failed to remove member: etcdserver: unhealthy cluster",
            ));
        }
    }
    etcd.members.retain(|&m| m != gone);
    etcd.alarms.retain(|(m, _)| *m != gone);
    etcd.raft_index += 1;
    if etcd.leader == Some(gone) {
        etcd.leader = None;
    }
    drop(etcd);
    t.cluster.elect_if_leaderless();
    Ok(EtcdRemoveMemberById { metadata: None })
}

/// `EtcdLeaveCluster` as upstream serves it (v1alpha1_server.go `EtcdLeaveCluster`, and
/// internal/pkg/etcd/etcd.go `LeaveCluster`, v1.10 to v1.13): control planes only; the node's
/// own member (`GetLocalMemberID`) removed by id under etcd's strict reconfiguration check, as
/// `remove_member` (upstream retries an unhealthy cluster for five minutes; the sim answers
/// the error that retry ends with). The caller then stops etcd on the node and wipes its data
/// (`leave_stops_etcd`).
pub(super) fn leave(t: &Target) -> Result<EtcdLeaveCluster, Status> {
    control_plane_only(t, "etcd leave")?;
    member_of(t)?;
    remove_member(t, t.node.etcd_member_id()).map_err(|e| {
        let why = e.message().trim_start_matches("failed to remove member: ");
        Status::new(e.code(), format!("failed to leave cluster: {why}"))
    })?;
    Ok(EtcdLeaveCluster { metadata: None })
}
