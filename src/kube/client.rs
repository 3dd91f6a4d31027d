//! A Kubernetes client for one paired kube context, built with the kube crate
//! from the merged kubeconfig (exec plugins, client certificates, tokens and
//! proxy-url as kubectl does them), with per-call timeouts.
use std::time::Duration;

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};

use super::exec_plugin;
use super::removed_apis::{self, RemovedApiCount};
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
    client: kube::Client,
    context: String,
    /// When the exec plugin's credential runs out, if it said.
    credentials_expire: Option<std::time::SystemTime>,
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
        let (kubeconfig, credentials_expire) =
            exec_plugin::resolve(kubeconfig, context, exec_plugin::EXEC_PLUGIN_TIMEOUT)
                .await
                .map_err(|message| KubeError::Config {
                    context: context.to_string(),
                    message,
                })?;
        let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .map_err(|e| KubeError::Config {
                context: context.to_string(),
                message: e.to_string(),
            })?;
        config.connect_timeout = Some(timeouts.connect);
        config.read_timeout = Some(timeouts.call);
        config.write_timeout = Some(timeouts.call);
        // kube retries 429/503/504 with backoff for minutes by default; the
        // console polls again anyway, and one call must stay within its timeout.
        config.default_retry = false;
        let client = kube::Client::try_from(config).map_err(|e| KubeError::Config {
            context: context.to_string(),
            message: e.to_string(),
        })?;
        Ok(KubeClient {
            client,
            context: context.to_string(),
            credentials_expire,
        })
    }

    /// True when the exec plugin's credential expires within a minute: build
    /// the client again (which runs the plugin again).
    pub fn credentials_expired(&self) -> bool {
        self.credentials_expire.is_some_and(|at| {
            at <= std::time::SystemTime::now() + std::time::Duration::from_secs(60)
        })
    }

    pub fn context(&self) -> &str {
        &self.context
    }

    /// The underlying kube client, for the other protocol modules of `kube`.
    pub(super) fn kube_client(&self) -> kube::Client {
        self.client.clone()
    }

    pub(super) fn error(&self, e: kube::Error) -> KubeError {
        let context = self.context.clone();
        match e {
            kube::Error::Api(status) if status.code == 401 || status.code == 403 => {
                KubeError::Unauthorized {
                    context,
                    message: status.message.clone(),
                }
            }
            kube::Error::Api(status) => KubeError::Api {
                context,
                message: status.message.clone(),
            },
            other => {
                // Connection, TLS and timeout failures all mean "cannot reach it";
                // the chain says which.
                let mut message = other.to_string();
                let mut source = std::error::Error::source(&other);
                while let Some(s) = source {
                    message = format!("{message}: {s}");
                    source = s.source();
                }
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
        self.client
            .apiserver_version()
            .await
            .map(|v| v.git_version)
            .map_err(|e| self.error(e))
    }

    pub async fn nodes(&self) -> Result<Vec<KubeNode>, KubeError> {
        let api: Api<Node> = Api::all(self.client.clone());
        let list = api
            .list(&ListParams::default())
            .await
            .map_err(|e| self.error(e))?;
        Ok(list.items.iter().map(KubeNode::from_api).collect())
    }

    /// kube-apiserver, kube-controller-manager and kube-scheduler per node.
    pub async fn control_plane_components(&self) -> Result<Vec<ControlPlaneComponent>, KubeError> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), "kube-system");
        let list = api
            .list(&ListParams::default().labels("tier=control-plane"))
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
        let api: Api<DaemonSet> = Api::namespaced(self.client.clone(), "kube-system");
        let ds = api.get_opt("kube-proxy").await.map_err(|e| self.error(e))?;
        Ok(ds.and_then(|ds| {
            let image = ds.spec?.template.spec?.containers.first()?.image.clone()?;
            Some(image_tag(&image).to_string())
        }))
    }

    /// Marks a node unschedulable or schedulable again. Mutating: callers
    /// reach this only through the app's dispatcher.
    pub async fn set_cordoned(&self, node: &str, cordoned: bool) -> Result<(), KubeError> {
        let api: Api<Node> = Api::all(self.client.clone());
        let result = if cordoned {
            api.cordon(node).await
        } else {
            api.uncordon(node).await
        };
        result.map(|_| ()).map_err(|e| self.error(e))
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
        let api: Api<Node> = Api::all(self.client.clone());
        api.patch(node, &PatchParams::default(), &Patch::Merge(patch))
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
            let request = http::Request::get(api.list_path())
                .body(Vec::new())
                .map_err(|e| KubeError::Api {
                    context: self.context.clone(),
                    message: e.to_string(),
                })?;
            let count = match self.client.request::<serde_json::Value>(request).await {
                Ok(list) => list["items"]
                    .as_array()
                    .map(|items| items.len())
                    .unwrap_or(0),
                Err(kube::Error::Api(status)) if status.code == 404 => 0,
                Err(e) => return Err(self.error(e)),
            };
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
