//! etcd as a simulated control plane answers `machine.MachineService` about it: the member
//! list, member status, alarms and forfeiting leadership, with Talos's rule that only control
//! planes serve them, and the server-side etcd check of the legacy Upgrade.
use tonic::Status;

use super::apid::Target;
use super::scenario::{EtcdAlarmKind, NodeRole};
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
    let db_size = 24_576_000 + (id % 4096) as i64 * 1024;
    Ok(EtcdStatus {
        metadata: None,
        member_status: Some(EtcdMemberStatus {
            protocol_version: "3.6.0".into(),
            db_size,
            db_size_in_use: db_size / 2,
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
    let etcd = t.cluster.etcd();
    let member_alarms = etcd
        .alarms
        .iter()
        .filter_map(|(i, a)| {
            let n = t.cluster.nodes.get(*i)?;
            Some(EtcdMemberAlarm {
                member_id: n.etcd_member_id(),
                alarm: match a {
                    EtcdAlarmKind::NoSpace => etcd_member_alarm::AlarmType::Nospace,
                    EtcdAlarmKind::Corrupt => etcd_member_alarm::AlarmType::Corrupt,
                } as i32,
            })
        })
        .collect();
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
