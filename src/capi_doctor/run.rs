//! An approved fix applied, and the workload cluster followed until its finding clears: the
//! orphaned member removed by etcd_maintenance's runner (the one `etcd remove-member` runs),
//! the stuck Machine deleted on the management cluster, the stopped single member's node
//! rebooted by node_actions' runner (the one `node reboot` runs). Every wait is bounded. Each
//! fix keeps the action journal its caller began (its steps, and the reboot's cordon and
//! outcome), so a fix whose run is killed is reported interrupted on the next start.
use std::time::Duration;

use super::diagnose::{Finding, Fix, cleared, recovery_steps};
use super::fix::{FixPlan, MachineDeletion};
use super::locate::read_tree;
use crate::approval::ApprovedAction;
use crate::capi::{CapiOwner, ClusterTree};
use crate::etcd_maintenance::{SNAPSHOT_MAX_BYTES, SnapshotLimits, run_plan};
use crate::fleet::ClusterStatus;
use crate::journal::action::RunningAction;
use crate::kube::{CapiVersion, DrainOptions, KubeClient};
use crate::node_actions::{
    CancelSignal, NodeActionOptions, NodeActionPlan, NodeActionRun, run_node_action,
};
use crate::upgrade::observe::ClusterObserver;

/// Runs `plan`, which `approved` must be the approval of; `say` hears each step's line, and
/// `journal` records it; a reboot waits at most `bound` for the node to be back, reading
/// every `poll`.
pub async fn apply_fix(
    plan: &FixPlan,
    approved: &ApprovedAction,
    observer: &ClusterObserver,
    management: &KubeClient,
    (bound, poll): (Duration, Duration),
    journal: &RunningAction,
    mut say: impl FnMut(String) + Send,
) -> Result<String, String> {
    approved.check_for(&plan.mutating_action())?;
    // The reboot's runner records its own steps; the other fixes' lines are recorded here.
    let mut say_recorded = |line: String| {
        journal.record(|r| r.step = line.clone());
        say(line)
    };
    match plan {
        FixPlan::Etcd(etcd) => {
            // A removal streams nothing: the snapshot limits are never reached.
            let limits = SnapshotLimits {
                bound: Duration::from_secs(60),
                max_bytes: SNAPSHOT_MAX_BYTES,
            };
            let cancel = CancelSignal::never();
            let outcome = run_plan(
                &observer.talos,
                approved,
                etcd,
                limits,
                &cancel,
                |i, total, line| say_recorded(format!("[{}/{total}] {line}", i + 1)),
            )
            .await?;
            Ok(outcome.steps.join("; "))
        }
        FixPlan::DeleteMachine(d) => delete_machine(d, management, say_recorded).await,
        FixPlan::RebootNode(node) => {
            let options = NodeActionOptions {
                node_timeout: bound,
                poll_interval: poll,
                drain: DrainOptions {
                    timeout: poll,
                    retry_every: poll,
                },
            };
            reboot_node(node, approved, observer, (options, journal), say).await
        }
    }
}

/// node_actions' reboot through the Talos API alone: the Kubernetes API is down with etcd, so
/// there is nothing to cordon or drain, and the node is back once Talos says it runs ready.
async fn reboot_node(
    node: &NodeActionPlan,
    approved: &ApprovedAction,
    observer: &ClusterObserver,
    (options, journal): (NodeActionOptions, &RunningAction),
    say: impl FnMut(String) + Send,
) -> Result<String, String> {
    let talos_only = ClusterObserver {
        kube: None,
        ..observer.clone()
    };
    let say = std::sync::Mutex::new(say);
    let progress = |line: String| {
        if let Ok(mut say) = say.lock() {
            say(line)
        }
    };
    progress(format!(
        "{}: the Kubernetes API is down with etcd: rebooting without a drain",
        node.node
    ));
    let run = NodeActionRun {
        approved,
        observer: &talos_only,
        options,
        progress: &progress,
        journal: Some(journal),
        cancel: CancelSignal::never(),
    };
    run_node_action(node, run)
        .await
        .map_err(|e| format!("{e}. {}", recovery_steps(&node.node)))
}

async fn delete_machine(
    d: &MachineDeletion,
    management: &KubeClient,
    mut say: impl FnMut(String),
) -> Result<String, String> {
    let version = match d.api_version.as_str() {
        "v1beta1" => CapiVersion::V1beta1,
        _ => CapiVersion::V1beta2,
    };
    let deleted = management
        .delete_capi_machine(version, &d.namespace, &d.machine)
        .await
        .map_err(|e| crate::error_chain(&e))?;
    let line = if deleted {
        format!(
            "Machine {}/{} deleted on {}",
            d.namespace, d.machine, d.management
        )
    } else {
        format!("Machine {}/{} was gone already", d.namespace, d.machine)
    };
    say(format!("[1/1] {line}"));
    Ok(line)
}

/// The workload cluster now: its tree on the management cluster and its Talos status.
pub async fn read_now(
    management: &KubeClient,
    owner: &CapiOwner,
    observer: &ClusterObserver,
) -> Result<(ClusterTree, ClusterStatus), String> {
    let (tree, status) = tokio::join!(read_tree(management, owner), observer.status());
    Ok((tree?, status))
}

/// One line of what the fix waits on: the control plane's counts and etcd's members.
pub fn progress_line(tree: &ClusterTree, status: &ClusterStatus) -> String {
    let members = &status.etcd.members;
    let healthy = members.iter().filter(|m| m.healthy).count();
    let etcd = format!("etcd {} member(s), {healthy} healthy", members.len());
    match tree.control_plane.as_ref() {
        Some(cp) => format!(
            "{}: {} of {} Machines, {} up to date, {} ready; {etcd}",
            cp.name, cp.counts.current, cp.counts.replicas, cp.counts.up_to_date, cp.counts.ready
        ),
        None => etcd,
    }
}

/// Reads the cluster every `poll` until `finding` clears, for at most `bound`; `say` hears a
/// line each time what the fix waits on changes.
pub async fn follow(
    finding: &Finding,
    management: &KubeClient,
    owner: &CapiOwner,
    observer: &ClusterObserver,
    (bound, poll): (Duration, Duration),
    mut say: impl FnMut(String),
) -> Result<String, String> {
    let deadline = tokio::time::Instant::now() + bound;
    let mut last = String::new();
    loop {
        // A fix that replaces control planes (a deleted Machine) leaves the operator's Talos
        // endpoints behind: the bootstrap provider's Secret names the current ones.
        let current = crate::upgrade::capi::secret_observer(
            management,
            owner,
            &observer.cluster,
            observer.kube.clone(),
            observer.options.client,
        )
        .await;
        let observer = current.as_ref().unwrap_or(observer);
        match read_now(management, owner, observer).await {
            Ok((tree, status)) => {
                let line = progress_line(&tree, &status);
                if line != last {
                    say(line.clone());
                    last = line;
                }
                if cleared(finding, &tree, &status) {
                    return Ok(format!("{} cleared: {last}", finding.id));
                }
            }
            Err(e) => say(format!("reading again: {e}")),
        }
        if tokio::time::Instant::now() + poll > deadline {
            let next = match &finding.fix {
                Some(Fix::RebootNode { node, .. }) => {
                    format!(". etcd did not come back: {}", recovery_steps(node))
                }
                _ => String::new(),
            };
            return Err(format!(
                "{} not cleared after {} s: {last}{next}",
                finding.id,
                bound.as_secs()
            ));
        }
        tokio::time::sleep(poll).await;
    }
}
