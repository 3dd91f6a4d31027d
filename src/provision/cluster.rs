//! A discovered cluster as a provision sees it: its key in taloscope's
//! config, the join checks built from its talos and kube contexts, and the
//! node names already in use there. Shared by the headless command and the
//! console.
use std::collections::BTreeSet;

use crate::config::Config;
use crate::discovery::{Cluster, host_of};
use crate::fleet::kube_client_for;
use crate::talos::{ClientOptions, TalosClient};

use super::runner::JoinChecks;

/// The key of the cluster's entry in taloscope's config: its name, else its
/// talos context, else (no entry) its name.
pub fn config_key(config: &Config, cluster: &Cluster) -> String {
    [Some(cluster.name.as_str()), cluster.talos_context()]
        .into_iter()
        .flatten()
        .find(|k| config.clusters.contains_key(*k))
        .unwrap_or(cluster.name.as_str())
        .to_string()
}

/// The checks that tell a new node joined `cluster`, and a warning when its
/// Kubernetes API cannot be used (joined then means a Talos member).
pub async fn join_checks(
    cluster: &Cluster,
    kubeconfig: Option<&kube::config::Kubeconfig>,
) -> Result<(JoinChecks, Option<String>), String> {
    let talos_ctx = cluster.talos.as_ref().ok_or_else(|| {
        format!(
            "cluster {:?} has no talosconfig context; following new nodes needs the Talos API",
            cluster.name
        )
    })?;
    let talos = TalosClient::new(talos_ctx, ClientOptions::default()).map_err(|e| e.to_string())?;
    let (kube, warning) = match kube_client_for(cluster, kubeconfig).await {
        Some(Ok(k)) => (Some(k), None),
        Some(Err(e)) => (
            None,
            Some(format!("{e}; joined will mean a Talos member only")),
        ),
        None => (None, None),
    };
    let member_node = talos_ctx
        .nodes
        .first()
        .cloned()
        .or_else(|| talos_ctx.endpoints.first().and_then(|e| host_of(e)));
    Ok((
        JoinChecks {
            talos,
            member_node,
            kube,
        },
        warning,
    ))
}

/// Kubernetes node names and Talos member ids and hostnames in use; what
/// cannot be read is left out (the provider's VM names are added by the
/// planner).
pub async fn names_in_use(checks: &JoinChecks) -> BTreeSet<String> {
    let mut taken = BTreeSet::new();
    if let Some(k) = &checks.kube
        && let Ok(nodes) = k.nodes().await
    {
        taken.extend(nodes.into_iter().map(|n| n.name));
    }
    if let Some(node) = &checks.member_node
        && let Ok(members) = checks.talos.cluster_members(node).await
    {
        taken.extend(members.into_iter().flat_map(|m| [m.id, m.hostname]));
    }
    taken
}
