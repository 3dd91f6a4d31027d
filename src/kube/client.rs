//! A Kubernetes client for one paired kube context, built from the merged
//! kubeconfig as kube's config loader resolves it (exec plugins, client
//! certificates, tokens and proxy-url as kubectl does them), with per-call timeouts.
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use reqwest::Method;
use serde::Deserialize;

use super::api_objects::{Node, Pod};
use super::removed_apis::{self, RemovedApiCount};
use super::rest::{Body, CallError, Rest};
use super::types::{CORDONED_BY_ANNOTATION, ControlPlaneComponent, KubeNode, image_tag};

#[derive(Debug, thiserror::Error)]
pub enum KubeError {
    #[error("kube context {context}: {message}")]
    Config { context: String, message: String },
    #[error("kube context {context}: API server unreachable: {message}")]
    Unreachable { context: String, message: String },
    #[error("kube context {context}: credentials refused: {message}")]
    Unauthorized { context: String, message: String },
    #[error("kube context {context}: {message}")]
    Api { context: String, message: String },
}

/// Timeouts for the Kubernetes API, like the Talos client's.
#[derive(Debug, Clone, Copy)]
pub struct KubeTimeouts {
    pub connect: Duration,
    pub call: Duration,
}

impl Default for KubeTimeouts {
    fn default() -> Self {
        KubeTimeouts {
            connect: Duration::from_secs(3),
            call: Duration::from_secs(5),
        }
    }
}

#[derive(Clone)]
pub struct KubeClient {
    rest: Rest,
    context: String,
}

/// The items of a list answer (`NodeList`, `PodList`...).
#[derive(Deserialize)]
pub(super) struct Items<T> {
    pub items: Vec<T>,
}

impl KubeClient {
    /// Builds a client for `context`. May run the context's exec plugin: call
    /// it from an IO task.
    pub async fn new(
        kubeconfig: &Kubeconfig,
        context: &str,
        timeouts: KubeTimeouts,
    ) -> Result<KubeClient, KubeError> {
        let options = KubeConfigOptions {
            context: Some(context.to_string()),
            ..KubeConfigOptions::default()
        };
        let config_error = |message: String| KubeError::Config {
            context: context.to_string(),
            message,
        };
        let config = kube::Config::from_custom_kubeconfig(kubeconfig.clone(), &options)
            .await
            .map_err(|e| config_error(e.to_string()))?;
        let rest = Rest::connect(&config, timeouts)
            .await
            .map_err(config_error)?;
        Ok(KubeClient {
            rest,
            context: context.to_string(),
        })
    }

    pub fn context(&self) -> &str {
        &self.context
    }

    /// The API server, for the other protocol modules of `kube`.
    pub(super) fn rest(&self) -> &Rest {
        &self.rest
    }

    pub(super) fn error(&self, e: CallError) -> KubeError {
        let context = self.context.clone();
        match e {
            CallError::Api(status) if status.code == 401 || status.code == 403 => {
                KubeError::Unauthorized {
                    context,
                    message: status.message,
                }
            }
            CallError::Api(status) => KubeError::Api {
                context,
                message: status.message,
            },
            CallError::Credentials(message) => KubeError::Config { context, message },
            // Connection, TLS and timeout failures all mean "cannot reach it";
            // the chain says which.
            CallError::Transport(message) => {
                // TLS 1.3 reports a refused client certificate as an alert on
                // the first request, not at connect.
                let lower = message.to_lowercase();
                if lower.contains("certificateexpired")
                    || lower.contains("certificate expired")
                    || lower.contains("certificaterequired")
                    || lower.contains("badcertificate")
                {
                    KubeError::Unauthorized { context, message }
                } else {
                    KubeError::Unreachable { context, message }
                }
            }
        }
    }

    pub async fn server_version(&self) -> Result<String, KubeError> {
        let info: serde_json::Value = self
            .rest
            .get("/version", &[])
            .await
            .map_err(|e| self.error(e))?;
        Ok(info["gitVersion"].as_str().unwrap_or_default().to_string())
    }

    pub async fn nodes(&self) -> Result<Vec<KubeNode>, KubeError> {
        let list: Items<Node> = self
            .rest
            .get("/api/v1/nodes", &[])
            .await
            .map_err(|e| self.error(e))?;
        Ok(list.items.iter().map(KubeNode::from_api).collect())
    }

    /// kube-apiserver, kube-controller-manager and kube-scheduler per node.
    pub async fn control_plane_components(&self) -> Result<Vec<ControlPlaneComponent>, KubeError> {
        let list: Items<Pod> = self
            .rest
            .get(
                "/api/v1/namespaces/kube-system/pods",
                &[("labelSelector", "tier=control-plane")],
            )
            .await
            .map_err(|e| self.error(e))?;
        let mut components: Vec<ControlPlaneComponent> = list
            .items
            .iter()
            .filter_map(ControlPlaneComponent::from_pod)
            .collect();
        components.sort_by(|a, b| (&a.node, &a.name).cmp(&(&b.node, &b.name)));
        Ok(components)
    }

    /// The kube-proxy DaemonSet's image tag, when it exists.
    pub async fn kube_proxy_version(&self) -> Result<Option<String>, KubeError> {
        let ds = self
            .daemonset(super::KUBE_SYSTEM, super::KUBE_PROXY)
            .await?;
        Ok(ds
            .filter(|ds| !ds.image.is_empty())
            .map(|ds| image_tag(&ds.image).to_string()))
    }

    /// Marks a node unschedulable or schedulable again. Mutating: callers
    /// reach this only through the app's dispatcher.
    pub async fn set_cordoned(&self, node: &str, cordoned: bool) -> Result<(), KubeError> {
        let patch = serde_json::json!({"spec": {"unschedulable": cordoned}});
        self.patch_node(node, &patch).await
    }

    /// Cordons `node` and marks the cordon as taloscope's (`by`), in one merge patch.
    pub async fn cordon_marked(&self, node: &str, by: &str) -> Result<(), KubeError> {
        let patch = serde_json::json!({
            "metadata": {"annotations": {CORDONED_BY_ANNOTATION: by}},
            "spec": {"unschedulable": true},
        });
        self.patch_node(node, &patch).await
    }

    /// Uncordons `node` and removes taloscope's cordon mark.
    pub async fn uncordon_marked(&self, node: &str) -> Result<(), KubeError> {
        let patch = serde_json::json!({
            "metadata": {"annotations": {CORDONED_BY_ANNOTATION: null}},
            "spec": {"unschedulable": null},
        });
        self.patch_node(node, &patch).await
    }

    async fn patch_node(&self, node: &str, patch: &serde_json::Value) -> Result<(), KubeError> {
        let path = format!("/api/v1/nodes/{node}");
        self.rest
            .call::<serde_json::Value>(Method::PATCH, &path, &[], Some(Body::merge_patch(patch)))
            .await
            .map(|_| ())
            .map_err(|e| self.error(e))
    }

    /// Objects still stored in API versions that an upgrade from `from` to
    /// `to` removes. A version the server no longer serves counts as zero.
    pub async fn removed_api_objects(
        &self,
        from: &str,
        to: &str,
    ) -> Result<Vec<RemovedApiCount>, KubeError> {
        let (Some(from_minor), Some(to_minor)) =
            (removed_apis::minor_of(from), removed_apis::minor_of(to))
        else {
            return Err(KubeError::Config {
                context: self.context.clone(),
                message: format!("cannot compare Kubernetes versions {from:?} and {to:?}"),
            });
        };
        let mut counts = Vec::new();
        for api in removed_apis::removed_between(from_minor, to_minor) {
            let list: Option<serde_json::Value> = self
                .rest
                .get_opt(&api.list_path())
                .await
                .map_err(|e| self.error(e))?;
            let count = list
                .and_then(|list| list["items"].as_array().map(Vec::len))
                .unwrap_or(0);
            counts.push(RemovedApiCount {
                api: api.name(),
                removed_in: format!("1.{}", api.removed_in),
                replacement: api.replacement.to_string(),
                count,
            });
        }
        Ok(counts)
    }
}
