//! Reading what a Cluster API scale looks at, on demand: the workload cluster's tree on its
//! management cluster, and the workload cluster itself (etcd over the Talos API, its
//! Kubernetes nodes and rollout Lease) through the operator's talosconfig context with the
//! control-plane endpoints of the `<cluster>-talosconfig` Secret added, which the bootstrap
//! provider keeps current as Machines come and go.
use std::path::PathBuf;

use kube::config::Kubeconfig;

use crate::capi::{CapiOwner, ClusterTree, cluster_tree};
use crate::discovery::{Cluster, TalosContext, load_talosconfig_texts};
use crate::fleet::{ClusterStatus, CollectOptions, KubeSource, TalosSide, collect_status};
use crate::kube::{CapiVersion, KubeClient};

/// The clients of one scale: the management cluster's and the workload cluster's.
#[derive(Clone)]
pub struct ScaleSources {
    /// The discovered workload cluster.
    pub cluster: Cluster,
    pub owner: CapiOwner,
    pub management: KubeClient,
    /// The `cluster.x-k8s.io` version the management cluster serves.
    pub version: CapiVersion,
    /// The workload cluster's own kube client, when it has a kube context.
    pub workload: Option<KubeClient>,
    pub options: CollectOptions,
}

/// One look at both sides.
#[derive(Debug, Clone)]
pub struct ScaleView {
    pub tree: ClusterTree,
    pub status: ClusterStatus,
}

impl ScaleSources {
    /// Connects to the management cluster `owner` names and to the workload cluster's kube
    /// context (when it has one).
    pub async fn connect(
        cluster: &Cluster,
        owner: &CapiOwner,
        kubeconfig: &Kubeconfig,
        options: CollectOptions,
    ) -> Result<ScaleSources, String> {
        let management = KubeClient::new(kubeconfig, &owner.management, Default::default())
            .await
            .map_err(|e| crate::error_chain(&e))?;
        let version = management
            .capi_version()
            .await
            .map_err(|e| crate::error_chain(&e))?
            .ok_or_else(|| {
                format!(
                    "kube context {} no longer serves {}",
                    owner.management,
                    crate::kube::CAPI_GROUP
                )
            })?;
        let workload = match cluster.kube_context() {
            Some(context) => Some(
                KubeClient::new(kubeconfig, context, Default::default())
                    .await
                    .map_err(|e| crate::error_chain(&e))?,
            ),
            None => None,
        };
        Ok(ScaleSources {
            cluster: cluster.clone(),
            owner: owner.clone(),
            management,
            version,
            workload,
            options,
        })
    }

    /// The tree of the owner's Cluster now.
    pub async fn tree(&self) -> Result<ClusterTree, String> {
        let objects = self
            .management
            .capi_objects(self.version)
            .await
            .map_err(|e| crate::error_chain(&e))?;
        let cluster = objects
            .clusters
            .iter()
            .find(|c| c.meta.namespace == self.owner.namespace && c.meta.name == self.owner.name)
            .ok_or_else(|| format!("Cluster {} is gone", self.owner))?;
        Ok(cluster_tree(&self.owner.management, &objects, cluster))
    }

    /// The workload cluster now, through [`talos_access`].
    pub async fn status(&self) -> ClusterStatus {
        let secret = self
            .management
            .capi_talosconfig(&self.owner.namespace, &self.owner.name)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!("talosconfig secret of {}: {e}", self.owner);
                None
            });
        let talos = talos_access(self.cluster.talos.as_ref(), secret.as_deref(), &self.owner)
            .map(|ctx| TalosSide::for_context(&self.cluster.name, &ctx, self.options.client));
        let kube = self
            .workload
            .clone()
            .map_or(KubeSource::None, KubeSource::Client);
        let mut status =
            collect_status(&self.cluster.name, talos.clone(), kube, self.options).await;
        if talos.is_none() && status.error.is_none() {
            status.error = Some(format!(
                "{} has no talosconfig context and {} no talosconfig Secret",
                self.cluster.name, self.owner
            ));
        }
        status
    }

    /// Both sides, the tree first.
    pub async fn read(&self) -> Result<ScaleView, String> {
        let tree = self.tree().await?;
        let status = self.status().await;
        Ok(ScaleView { tree, status })
    }
}

/// The talosconfig context to reach the workload cluster through: the operator's own with
/// the Secret's endpoints first (they follow the Machines), else the Secret's.
pub fn talos_access(
    own: Option<&TalosContext>,
    secret: Option<&str>,
    owner: &CapiOwner,
) -> Option<TalosContext> {
    let from_secret = secret.and_then(|text| {
        let file = PathBuf::from(format!(
            "secret {}/{}-talosconfig",
            owner.namespace, owner.name
        ));
        let load = load_talosconfig_texts(&[(file, text.to_string())]);
        let current = load.current_context.clone();
        let mut contexts = load.contexts;
        let index = contexts
            .iter()
            .position(|c| Some(&c.name) == current.as_ref())
            .unwrap_or(0);
        (!contexts.is_empty()).then(|| contexts.swap_remove(index))
    });
    match (own, from_secret) {
        (Some(own), Some(secret)) => {
            let mut merged = own.clone();
            let mut endpoints = secret.endpoints;
            endpoints.extend(
                own.endpoints
                    .iter()
                    .filter(|e| !secret_has(&endpoints, e))
                    .cloned()
                    .collect::<Vec<_>>(),
            );
            merged.endpoints = endpoints;
            Some(merged)
        }
        (Some(own), None) => Some(own.clone()),
        (None, secret) => secret,
    }
}

fn secret_has(endpoints: &[String], e: &str) -> bool {
    endpoints.iter().any(|s| s == e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(endpoints: &[&str]) -> TalosContext {
        TalosContext {
            name: "w".into(),
            file: "talosconfig".into(),
            endpoints: endpoints.iter().map(|e| e.to_string()).collect(),
            nodes: vec![],
            ca_pem: String::new(),
            crt_pem: String::new(),
            key_pem: String::new(),
        }
    }

    #[test]
    fn the_operators_context_gains_the_secrets_endpoints_first() {
        let owner = CapiOwner {
            management: "m".into(),
            namespace: "ns".into(),
            name: "w".into(),
        };
        let own = context(&["127.0.0.2:50000", "127.0.0.3:50000"]);
        assert_eq!(talos_access(Some(&own), None, &owner), Some(own.clone()));
        assert_eq!(talos_access(None, None, &owner), None);
        // A secret that is no talosconfig adds nothing.
        assert_eq!(
            talos_access(Some(&own), Some("not: [yaml"), &owner),
            Some(own)
        );
    }
}
