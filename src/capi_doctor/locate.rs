//! Which workload cluster the doctor looks at: `--context` names the workload cluster (its
//! management cluster is found among the kube contexts) or a management cluster (its Cluster
//! named by `--cluster`, or its only one); either way the discovered cluster it is, for the
//! Talos API. Reads bounded by the kube client's timeouts.
use kube::config::Kubeconfig;

use crate::capi::{
    CapiOwner, ClusterTree, ContextRead, Management, pair_workloads, read_context, read_view,
    tree_names, trees_named,
};
use crate::discovery::{Cluster, Discovery};
use crate::kube::KubeClient;

/// The workload cluster found: its management cluster, its tree and its discovered cluster.
#[derive(Debug, Clone)]
pub struct Located {
    pub management: Management,
    pub owner: CapiOwner,
    pub tree: ClusterTree,
    /// The discovered cluster (talos and kube contexts) the workload cluster is.
    pub workload: Cluster,
}

/// Why the doctor has nothing to look at; the text says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocateError {
    /// The operator named something that is not there (a usage error).
    #[error("{0}")]
    Unknown(String),
    /// A cluster could not be read, or is not one the doctor can look at.
    #[error("{0}")]
    Unusable(String),
}

/// The workload cluster `wanted` (a cluster or context) names, or the Cluster `cluster`
/// (`NS/NAME`, or `NAME` one namespace has) of the management cluster it names.
pub async fn locate(
    discovery: &Discovery,
    kubeconfig: &Kubeconfig,
    wanted: &str,
    cluster: Option<&str>,
) -> Result<Located, LocateError> {
    let chosen = discovery.select(wanted).ok_or_else(|| {
        LocateError::Unknown(format!(
            "no cluster or context named {wanted:?}; `taloscope contexts` lists them"
        ))
    })?;
    let context = chosen.kube_context().ok_or_else(|| {
        LocateError::Unknown(format!(
            "{wanted} has no kube context: Cluster API objects are read through the Kubernetes API"
        ))
    })?;
    let client = KubeClient::new(kubeconfig, context, Default::default())
        .await
        .map_err(|e| LocateError::Unusable(crate::error_chain(&e)))?;
    match read_context(&client).await {
        Ok(ContextRead::Management(m)) => from_management(discovery, *m, cluster),
        Ok(ContextRead::NotManagement) => from_workload(discovery, kubeconfig, &chosen).await,
        Err(e) => Err(LocateError::Unusable(crate::error_chain(&e))),
    }
}

fn from_management(
    discovery: &Discovery,
    management: Management,
    wanted: Option<&str>,
) -> Result<Located, LocateError> {
    let trees = trees_named(management.trees(), wanted, &management.context)
        .map_err(LocateError::Unknown)?;
    let tree = match trees.as_slice() {
        [one] => one.clone(),
        _ => {
            return Err(LocateError::Unknown(format!(
                "management cluster {} has {} Clusters ({}); name one with --cluster NS/NAME",
                management.context,
                trees.len(),
                tree_names(&trees)
            )));
        }
    };
    let owner = CapiOwner {
        management: management.context.clone(),
        namespace: tree.namespace.clone(),
        name: tree.cluster.clone(),
    };
    let workload = pair_workloads(&management.workloads, &discovery.clusters)
        .into_iter()
        .find(|(_, o)| o == &owner)
        .and_then(|(name, _)| discovery.cluster(&name).cloned())
        .ok_or_else(|| {
            LocateError::Unusable(format!(
                "Cluster {owner} is none of the discovered clusters: add its talosconfig and kubeconfig contexts (its <name>-talosconfig and <name>-kubeconfig secrets)"
            ))
        })?;
    Ok(Located {
        management,
        owner,
        tree,
        workload,
    })
}

async fn from_workload(
    discovery: &Discovery,
    kubeconfig: &Kubeconfig,
    chosen: &Cluster,
) -> Result<Located, LocateError> {
    let view = read_view(kubeconfig, &discovery.clusters).await;
    let Some(owner) = view.owner(&chosen.name).cloned() else {
        let read = if view.errors.is_empty() {
            String::new()
        } else {
            format!(" (not read: {})", view.errors.join("; "))
        };
        return Err(LocateError::Unusable(format!(
            "{} is not owned by a Cluster API management cluster among the kube contexts{read}",
            chosen.name
        )));
    };
    let tree = view.tree(&owner);
    let management = view
        .managements
        .into_iter()
        .find(|m| m.context == owner.management);
    match (management, tree) {
        (Some(management), Some(tree)) => Ok(Located {
            management,
            owner,
            tree,
            workload: chosen.clone(),
        }),
        _ => Err(LocateError::Unusable(format!(
            "management cluster {} no longer lists Cluster {owner}",
            owner.management
        ))),
    }
}

/// The tree of `owner` as its management cluster (`client`) says now.
pub async fn read_tree(client: &KubeClient, owner: &CapiOwner) -> Result<ClusterTree, String> {
    match read_context(client).await {
        Ok(ContextRead::Management(m)) => m
            .trees()
            .into_iter()
            .find(|t| t.namespace == owner.namespace && t.cluster == owner.name)
            .ok_or_else(|| format!("{} no longer lists Cluster {owner}", owner.management)),
        Ok(ContextRead::NotManagement) => Err(format!(
            "{} no longer serves the Cluster API",
            owner.management
        )),
        Err(e) => Err(crate::error_chain(&e)),
    }
}
