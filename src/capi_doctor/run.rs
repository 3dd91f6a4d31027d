//! A fix's own call (the stuck Machine deleted on the management cluster; the etcd removal
//! and the node reboot are etcd_maintenance's and node_actions', all run by
//! `operation::capi_fix`), and the workload cluster followed until its finding clears, bounded.
use std::time::Duration;

use super::diagnose::{Finding, Fix, cleared, recovery_steps};
use super::fix::MachineDeletion;
use super::locate::read_tree;
use crate::capi::{CapiOwner, ClusterTree};
use crate::fleet::ClusterStatus;
use crate::kube::{CapiVersion, KubeClient};
use crate::upgrade::observe::ClusterObserver;

/// How long a fix is followed until its finding clears, and how often the cluster is read:
/// `capi doctor --fix`'s defaults and the console's.
pub const FOLLOW_BOUNDS: (Duration, Duration) = (Duration::from_secs(1800), Duration::from_secs(5));

/// Deletes the Machine a rollout waits on (`clusterctl`'s way: the Machine object, its
/// provider's finalizers do the rest); the line says what happened.
pub async fn delete_machine(
    d: &MachineDeletion,
    management: &KubeClient,
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
