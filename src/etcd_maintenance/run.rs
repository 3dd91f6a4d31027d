//! One step of an etcd plan carried out and checked: a defragment (the member answers,
//! healthy, smaller), a disarm (the alarms listed again), a removal (the member list), a
//! forfeit, and a snapshot landing in its file whole. The steps run one after another through
//! the operation runner (`operation::etcd`), which sees a cancel between them.
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::plan::{EtcdCall, EtcdStep};
use super::snapshot_file::{SnapshotReport, write_snapshot};
use crate::fleet::collect::is_alarm_report;
use crate::printable::bytes_text;
use crate::talos::{EtcdMemberStatus, TalosClient};

/// How a run ended well: one line per step, and the snapshot when one was taken.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EtcdOutcome {
    pub steps: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<SnapshotReport>,
}

/// The most a snapshot may hold: etcd's largest recommended quota (8 GiB) twice over.
pub const SNAPSHOT_MAX_BYTES: u64 = 16 * 1024 * 1024 * 1024;

/// The bound and byte cap of a snapshot read.
#[derive(Debug, Clone, Copy)]
pub struct SnapshotLimits {
    pub bound: Duration,
    pub max_bytes: u64,
}

impl SnapshotLimits {
    /// A read bounded by `bound`, capped at [`SNAPSHOT_MAX_BYTES`].
    pub const fn within(bound: Duration) -> SnapshotLimits {
        SnapshotLimits {
            bound,
            max_bytes: SNAPSHOT_MAX_BYTES,
        }
    }
}

/// Carries out one step and checks it took: its line, and the snapshot it took.
pub async fn run_step(
    client: &TalosClient,
    step: &EtcdStep,
    limits: SnapshotLimits,
    taken: &mut Option<SnapshotReport>,
) -> Result<String, String> {
    let node = step.address.as_str();
    match &step.call {
        EtcdCall::Defragment => defragment(client, node).await,
        EtcdCall::Disarm => disarm(client, node).await,
        EtcdCall::Snapshot { out, overwrite } => {
            let report = snapshot(client, node, out, *overwrite, limits).await?;
            let said = format!(
                "{} written to {}, sha256 {}",
                bytes_text(report.size as i64),
                report.path.display(),
                report.sha256
            );
            *taken = Some(report);
            Ok(said)
        }
        EtcdCall::ForfeitLeadership { .. } => {
            let member = client
                .etcd_forfeit_leadership(node)
                .await
                .map_err(|e| e.to_string())?;
            Ok(format!("leadership handed over (answered by {member})"))
        }
        EtcdCall::RemoveMember {
            member_id,
            hostname,
        } => remove(client, node, member_id, hostname).await,
    }
}

/// A member's status, refusing one that reports errors other than an alarm.
async fn healthy_status(client: &TalosClient, node: &str) -> Result<EtcdMemberStatus, String> {
    let status = client.etcd_status(node).await.map_err(|e| e.to_string())?;
    match status.errors.iter().find(|e| !is_alarm_report(e)) {
        Some(error) => Err(format!("member unhealthy: {error}")),
        None => Ok(status),
    }
}

async fn defragment(client: &TalosClient, node: &str) -> Result<String, String> {
    let before = healthy_status(client, node).await?;
    client
        .etcd_defragment(node)
        .await
        .map_err(|e| e.to_string())?;
    let after = healthy_status(client, node).await?;
    Ok(format!(
        "{} -> {} ({} in use)",
        bytes_text(before.db_size),
        bytes_text(after.db_size),
        bytes_text(after.db_size_in_use)
    ))
}

async fn disarm(client: &TalosClient, node: &str) -> Result<String, String> {
    let disarmed = client
        .etcd_alarm_disarm(node)
        .await
        .map_err(|e| e.to_string())?;
    let left = client
        .etcd_alarm_list(node)
        .await
        .map_err(|e| e.to_string())?;
    let names = |list: &[crate::talos::EtcdAlarm]| -> String {
        list.iter()
            .map(|a| format!("{} on {:016x}", a.kind.as_str(), a.member_id))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !left.is_empty() {
        return Err(format!(
            "raised again: {} (the member is still over its quota)",
            names(&left)
        ));
    }
    if disarmed.is_empty() {
        Ok("no alarm was active".to_string())
    } else {
        Ok(format!("disarmed {}; no alarm left", names(&disarmed)))
    }
}

async fn snapshot(
    client: &TalosClient,
    node: &str,
    out: &Path,
    overwrite: bool,
    limits: SnapshotLimits,
) -> Result<SnapshotReport, String> {
    let stream = client
        .etcd_snapshot(node)
        .await
        .map_err(|e| e.to_string())?;
    write_snapshot(stream, out, overwrite, limits.bound, limits.max_bytes)
        .await
        .map_err(|e| e.to_string())
}

async fn remove(
    client: &TalosClient,
    node: &str,
    member_id: &str,
    hostname: &str,
) -> Result<String, String> {
    let id = u64::from_str_radix(member_id, 16)
        .map_err(|_| format!("member id {member_id:?} is not 16 hex digits"))?;
    client
        .etcd_remove_member(node, id)
        .await
        .map_err(|e| e.to_string())?;
    let members = client
        .etcd_member_list(node)
        .await
        .map_err(|e| e.to_string())?;
    if members.iter().any(|m| m.id == id) {
        return Err(format!(
            "{hostname} ({member_id}) is still in the member list"
        ));
    }
    Ok(format!(
        "{hostname} ({member_id}) removed; {} member(s) left",
        members.len()
    ))
}
