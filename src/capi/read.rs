//! Reading management clusters: which kube contexts serve the Cluster API, their objects as
//! trees, and their workload clusters for pairing. Every read is bounded by the kube client's
//! timeouts; contexts are read at the same time.
use std::collections::BTreeMap;

use kube::config::Kubeconfig;
use tokio::task::JoinSet;

use super::pairing::{CapiOwner, WorkloadCluster, pair_workloads};
use super::tree::{ClusterTree, cluster_trees, endpoint_text};
use crate::discovery::Cluster;
use crate::kube::{CapiObjects, KubeClient, KubeError};

/// One management cluster as read now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Management {
    pub context: String,
    pub objects: CapiObjects,
    pub workloads: Vec<WorkloadCluster>,
}

impl Management {
    pub fn trees(&self) -> Vec<ClusterTree> {
        cluster_trees(&self.context, &self.objects)
    }
}

/// What reading one kube context found.
#[derive(Debug)]
pub enum ContextRead {
    /// It serves no `cluster.x-k8s.io`.
    NotManagement,
    Management(Box<Management>),
}

/// Reads one kube context: `NotManagement` unless it serves the CAPI group, else every
/// object and each Cluster's kubeconfig secret's server.
pub async fn read_context(client: &KubeClient) -> Result<ContextRead, KubeError> {
    let Some(version) = client.capi_version().await? else {
        return Ok(ContextRead::NotManagement);
    };
    let objects = client.capi_objects(version).await?;
    let mut workloads = Vec::new();
    for c in &objects.clusters {
        let server = client
            .capi_kubeconfig_server(&c.meta.namespace, &c.meta.name)
            .await?;
        workloads.push(WorkloadCluster {
            owner: CapiOwner {
                management: client.context().to_string(),
                namespace: c.meta.namespace.clone(),
                name: c.meta.name.clone(),
            },
            endpoint: endpoint_text(c),
            kubeconfig_server: server,
        });
    }
    Ok(ContextRead::Management(Box::new(Management {
        context: client.context().to_string(),
        objects,
        workloads,
    })))
}

/// Reads `contexts` at once; per context, what it is or why it could not be read.
pub async fn read_contexts(
    kubeconfig: &Kubeconfig,
    contexts: &[String],
) -> Vec<(String, Result<ContextRead, KubeError>)> {
    let mut tasks = JoinSet::new();
    for (index, context) in contexts.iter().enumerate() {
        let kubeconfig = kubeconfig.clone();
        let context = context.clone();
        tasks.spawn(async move {
            let read = match KubeClient::new(&kubeconfig, &context, Default::default()).await {
                Ok(client) => read_context(&client).await,
                Err(e) => Err(e),
            };
            (index, context, read)
        });
    }
    let mut reads = Vec::new();
    while let Some(done) = tasks.join_next().await {
        if let Ok(read) = done {
            reads.push(read);
        }
    }
    reads.sort_by_key(|(index, _, _)| *index);
    reads.into_iter().map(|(_, c, r)| (c, r)).collect()
}

/// The management clusters among `contexts`, and the contexts that could not be read.
pub async fn managements(
    kubeconfig: &Kubeconfig,
    contexts: &[String],
) -> (Vec<Management>, Vec<KubeError>) {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for (_, read) in read_contexts(kubeconfig, contexts).await {
        match read {
            Ok(ContextRead::Management(m)) => found.push(*m),
            Ok(ContextRead::NotManagement) => {}
            Err(e) => errors.push(e),
        }
    }
    (found, errors)
}

/// The kube contexts worth asking whether they are management clusters: each discovered
/// cluster's kube context in use (its alternates reach the same API server).
pub fn candidate_contexts(clusters: &[Cluster]) -> Vec<String> {
    clusters
        .iter()
        .filter_map(|c| c.kube_context().map(str::to_string))
        .collect()
}

/// What the management clusters among the kube contexts say now: each one read, which
/// discovered cluster each workload cluster is, and the contexts that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CapiView {
    pub managements: Vec<Management>,
    /// By discovered cluster name.
    pub owners: BTreeMap<String, CapiOwner>,
    pub errors: Vec<String>,
}

impl CapiView {
    pub fn owner(&self, cluster: &str) -> Option<&CapiOwner> {
        self.owners.get(cluster)
    }

    /// The tree of the Cluster `owner` names, as its management cluster was last read.
    pub fn tree(&self, owner: &CapiOwner) -> Option<ClusterTree> {
        let m = self
            .managements
            .iter()
            .find(|m| m.context == owner.management)?;
        let cluster = m
            .objects
            .clusters
            .iter()
            .find(|c| c.meta.namespace == owner.namespace && c.meta.name == owner.name)?;
        Some(super::tree::cluster_tree(&m.context, &m.objects, cluster))
    }

    /// The owner and tree of discovered cluster `cluster`, when a management cluster owns it.
    pub fn owned_tree(&self, cluster: &str) -> Option<(&CapiOwner, ClusterTree)> {
        let owner = self.owner(cluster)?;
        Some((owner, self.tree(owner)?))
    }
}

/// Reads every candidate context and pairs the workload clusters found with `clusters`.
pub async fn read_view(kubeconfig: &Kubeconfig, clusters: &[Cluster]) -> CapiView {
    let (managements, errors) = managements(kubeconfig, &candidate_contexts(clusters)).await;
    let workloads: Vec<WorkloadCluster> = managements
        .iter()
        .flat_map(|m| m.workloads.iter().cloned())
        .collect();
    CapiView {
        owners: pair_workloads(&workloads, clusters),
        managements,
        errors: errors.iter().map(|e| crate::error_chain(e)).collect(),
    }
}

/// Why kube context `context` was not read as a management cluster.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManagementError {
    /// It serves no Cluster API; `owner` is the Cluster that owns it, when it is a workload
    /// cluster of a management cluster among the kube contexts.
    #[error("{}", not_management(context, owner.as_ref()))]
    NotManagement {
        context: String,
        owner: Option<CapiOwner>,
    },
    #[error("{0}")]
    Unread(String),
}

/// `context` is no management cluster: the one to name instead, when it is a workload cluster.
fn not_management(context: &str, owner: Option<&CapiOwner>) -> String {
    let serves_no = format!(
        "kube context {context} serves no {} API: it is not a Cluster API management cluster",
        crate::kube::CAPI_GROUP
    );
    match owner {
        Some(owner) => format!(
            "{serves_no}; it is the workload cluster {}/{} of management cluster {}: run `taloscope --context {} capi status`",
            owner.namespace, owner.name, owner.management, owner.management
        ),
        None => format!(
            "{serves_no}, and no management cluster among the kube contexts owns it: name a management cluster with --context"
        ),
    }
}

/// Reads kube context `context` as a management cluster; when it is none, which management
/// cluster among `clusters`' kube contexts owns the discovered cluster it is.
pub async fn read_management(
    kubeconfig: &Kubeconfig,
    clusters: &[Cluster],
    context: &str,
) -> Result<Management, ManagementError> {
    let read = async {
        let client = KubeClient::new(kubeconfig, context, Default::default()).await?;
        read_context(&client).await
    };
    match read.await {
        Ok(ContextRead::Management(m)) => Ok(*m),
        Ok(ContextRead::NotManagement) => {
            let cluster = clusters.iter().find(|c| c.kube_context() == Some(context));
            let owner = match cluster {
                Some(c) => super::read_owner(Some(kubeconfig), clusters, &c.name).await,
                None => None,
            };
            let context = context.to_string();
            Err(ManagementError::NotManagement { context, owner })
        }
        Err(e) => Err(ManagementError::Unread(crate::error_chain(&e))),
    }
}
