//! Runs an approved etcd plan step by step: each defragment is checked (the member answers,
//! healthy, smaller) before the next starts, a disarm is checked by listing the alarms again,
//! a removal by the member list, and a snapshot lands in its file whole. A cancel is seen
//! between steps, never mid-call (node_actions' `CancelSignal`, set by the console's cancel
//! key or the command line's SIGINT/SIGTERM): the run stops before the next step and says
//! which steps were done and which were not run.
use std::future::Future;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::plan::{EtcdCall, EtcdPlan, EtcdStep};
use super::snapshot_file::{SnapshotReport, write_snapshot};
use crate::approval::ApprovedAction;
use crate::fleet::collect::is_alarm_report;
use crate::node_actions::CancelSignal;
use crate::printable::{bytes_text, line as printable};
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

/// Runs `plan`, which `approved` must be the approval of; `progress` hears each step's line
/// as `(index, total, line)`. Stops at the first step that fails, or before the next step
/// once `cancel` is set (the error then starts with "cancelled" and says what the run leaves).
pub async fn run_plan(
    client: &TalosClient,
    approved: &ApprovedAction,
    plan: &EtcdPlan,
    limits: SnapshotLimits,
    cancel: &CancelSignal,
    progress: impl FnMut(usize, usize, &str),
) -> Result<EtcdOutcome, String> {
    approved.check_for(&plan.mutating_action())?;
    run_steps(plan, cancel, progress, |step| async move {
        let mut done = StepDone::default();
        done.said = run_step(client, &step, limits, &mut done.snapshot).await?;
        Ok(done)
    })
    .await
}

/// What one step did: its line, and the snapshot it took.
#[derive(Debug, Default)]
struct StepDone {
    said: String,
    snapshot: Option<SnapshotReport>,
}

/// The run loop of [`run_plan`]: `cancel` is looked at before each step, and `step` runs one.
async fn run_steps<F>(
    plan: &EtcdPlan,
    cancel: &CancelSignal,
    mut progress: impl FnMut(usize, usize, &str),
    mut step: impl FnMut(EtcdStep) -> F,
) -> Result<EtcdOutcome, String>
where
    F: Future<Output = Result<StepDone, String>>,
{
    let mut outcome = EtcdOutcome::default();
    let total = plan.steps.len();
    for (i, next) in plan.steps.iter().enumerate() {
        if cancel.is_set() {
            return Err(cancelled_before(plan, i, &outcome));
        }
        let done = step(next.clone())
            .await
            .map_err(|e| format!("{}: {}: {}", next.node, next.call.as_str(), printable(&e)))?;
        let line = format!("{}: {}: {}", next.node, next.call.as_str(), done.said);
        progress(i, total, &line);
        outcome.steps.push(line);
        if done.snapshot.is_some() {
            outcome.snapshot = done.snapshot;
        }
    }
    Ok(outcome)
}

/// A cancel seen before step `next` (0-based): the steps done, and those not run.
fn cancelled_before(plan: &EtcdPlan, next: usize, outcome: &EtcdOutcome) -> String {
    let total = plan.steps.len();
    let step = &plan.steps[next];
    let done = if outcome.steps.is_empty() {
        "none: nothing was changed".to_string()
    } else {
        outcome.steps.join("; ")
    };
    let not_run: Vec<String> = plan.steps[next..]
        .iter()
        .map(|s| format!("{}: {}", s.node, s.call.as_str()))
        .collect();
    format!(
        "cancelled before step {} of {total} ({}: {}); done: {done}; not run: {}",
        next + 1,
        step.node,
        step.call.as_str(),
        not_run.join(", ")
    )
}

async fn run_step(
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

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
