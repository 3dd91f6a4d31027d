//! Cordon and drain of one Kubernetes node, as talosctl's `--drain` does before a reboot:
//! mark it unschedulable, evict every pod that is neither a DaemonSet's nor a mirror (static)
//! pod through the Eviction API, retry evictions a disruption budget refuses, and wait until
//! the evicted pods are gone — all within a drain timeout.
use std::time::{Duration, Instant};

use super::api_objects::Pod;
use reqwest::Method;

use super::client::{Items, KubeClient, KubeError};
use super::rest::{Body, CallError};

/// The value of `taloscope.dev/cordoned-by` on a node a drain cordoned.
pub const CORDONED_BY_TALOSCOPE: &str = "taloscope";

/// The annotation the kubelet puts on the API's copy of a static pod.
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// How a drain behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrainOptions {
    /// The most the evictions may take together (talosctl's `--drain-timeout`, 5 min).
    pub timeout: Duration,
    /// How long to wait before asking again after a refused eviction or for pods to go.
    pub retry_every: Duration,
}

impl Default for DrainOptions {
    fn default() -> Self {
        DrainOptions {
            timeout: Duration::from_secs(5 * 60),
            retry_every: Duration::from_secs(1),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DrainError {
    #[error("draining node {node}: {source}")]
    Kube { node: String, source: KubeError },
    #[error("draining node {node}: pods still there after {after:?}: {pods}")]
    Timeout {
        node: String,
        after: Duration,
        pods: String,
    },
}

/// A pod on the node being drained, in the words the drain decides by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePod {
    pub namespace: String,
    pub name: String,
    /// The kind of its controller (`ReplicaSet`, `DaemonSet`, `Node` for mirror pods).
    pub owner_kind: Option<String>,
    pub mirror: bool,
    /// `Succeeded` or `Failed`: nothing to evict.
    pub finished: bool,
    /// Its labels, which disruption budgets select by.
    pub labels: std::collections::BTreeMap<String, String>,
}

impl NodePod {
    pub fn from_api(pod: &Pod) -> NodePod {
        let meta = &pod.metadata;
        let owner_kind = meta
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.controller == Some(true))
            .or_else(|| meta.owner_references.iter().flatten().next())
            .map(|o| o.kind.clone());
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        NodePod {
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
            mirror: meta
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(MIRROR_ANNOTATION)),
            owner_kind,
            finished: matches!(phase, Some("Succeeded" | "Failed")),
            labels: meta.labels.clone().unwrap_or_default(),
        }
    }

    /// kubectl drain's filters as talosctl uses them: DaemonSet pods stay (their controller
    /// would put them straight back), mirror pods stay (the kubelet owns them), finished pods
    /// need nothing.
    pub fn must_evict(&self) -> bool {
        !self.mirror
            && !self.finished
            && !matches!(self.owner_kind.as_deref(), Some("DaemonSet" | "Node"))
    }

    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// What one eviction request came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Eviction {
    Evicted,
    /// Already gone.
    Gone,
    /// 429: a disruption budget does not allow it now; the server's words.
    Refused(String),
}

/// What a finished drain did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DrainReport {
    /// `namespace/name` of every pod evicted.
    pub evicted: Vec<String>,
    /// Left in place: DaemonSet and mirror pods.
    pub kept: usize,
}

impl KubeClient {
    /// Every pod scheduled on `node`, in all namespaces.
    pub async fn pods_on_node(&self, node: &str) -> Result<Vec<NodePod>, KubeError> {
        let list: Items<Pod> = self
            .rest()
            .get(
                "/api/v1/pods",
                &[("fieldSelector", &format!("spec.nodeName={node}"))],
            )
            .await
            .map_err(|e| self.error(e))?;
        Ok(list.items.iter().map(NodePod::from_api).collect())
    }

    /// Asks the Eviction API to evict one pod. Mutating: reached only from a confirmed
    /// rollout.
    pub async fn evict_pod(&self, namespace: &str, name: &str) -> Result<Eviction, KubeError> {
        let path = format!("/api/v1/namespaces/{namespace}/pods/{name}/eviction");
        let eviction = serde_json::json!({
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        });
        let answer = self
            .rest()
            .call::<serde_json::Value>(Method::POST, &path, &[], Some(Body::json(&eviction)))
            .await;
        match answer {
            Ok(_) => Ok(Eviction::Evicted),
            Err(CallError::Api(status)) if status.code == 404 => Ok(Eviction::Gone),
            Err(CallError::Api(status)) if status.code == 429 => {
                Ok(Eviction::Refused(status.message))
            }
            Err(e) => Err(self.error(e)),
        }
    }

    /// Cordons `node` and evicts its pods within `options.timeout`; `progress` hears each step
    /// in the operator's words. On failure the node stays cordoned, as with kubectl drain.
    pub async fn cordon_and_drain(
        &self,
        node: &str,
        options: DrainOptions,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<DrainReport, DrainError> {
        let kube_err = |source| DrainError::Kube {
            node: node.to_string(),
            source,
        };
        progress(format!("cordoning {node}"));
        self.cordon_marked(node, CORDONED_BY_TALOSCOPE)
            .await
            .map_err(kube_err)?;
        let started = Instant::now();
        let mut report = DrainReport::default();
        loop {
            let pods = self.pods_on_node(node).await.map_err(kube_err)?;
            let (evict, kept): (Vec<NodePod>, Vec<NodePod>) =
                pods.into_iter().partition(NodePod::must_evict);
            report.kept = kept.len();
            if evict.is_empty() {
                return Ok(report);
            }
            if started.elapsed() >= options.timeout {
                let pods: Vec<String> = evict.iter().map(NodePod::key).collect();
                return Err(DrainError::Timeout {
                    node: node.to_string(),
                    after: options.timeout,
                    pods: pods.join(", "),
                });
            }
            progress(format!("draining {node}: {} pods to evict", evict.len()));
            for pod in &evict {
                let outcome = self
                    .evict_pod(&pod.namespace, &pod.name)
                    .await
                    .map_err(kube_err)?;
                match outcome {
                    Eviction::Evicted => {
                        if !report.evicted.contains(&pod.key()) {
                            report.evicted.push(pod.key());
                        }
                    }
                    Eviction::Gone => {}
                    Eviction::Refused(why) => {
                        progress(format!("draining {node}: {} not yet: {why}", pod.key()));
                    }
                }
            }
            tokio::time::sleep(options.retry_every).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(owner: Option<&str>, mirror: bool, finished: bool) -> NodePod {
        NodePod {
            namespace: "default".into(),
            name: "p".into(),
            owner_kind: owner.map(str::to_string),
            mirror,
            finished,
            labels: Default::default(),
        }
    }

    #[test]
    fn only_pods_a_controller_would_replace_elsewhere_are_evicted() {
        assert!(pod(Some("ReplicaSet"), false, false).must_evict());
        assert!(pod(Some("StatefulSet"), false, false).must_evict());
        assert!(pod(None, false, false).must_evict(), "bare pods too");
        assert!(!pod(Some("DaemonSet"), false, false).must_evict());
        assert!(!pod(Some("Node"), false, false).must_evict(), "mirror pods");
        assert!(!pod(None, true, false).must_evict(), "mirror annotation");
        assert!(
            !pod(Some("ReplicaSet"), false, true).must_evict(),
            "finished"
        );
    }

    #[test]
    fn decodes_owner_mirror_and_phase_from_the_api_object() {
        let json = serde_json::json!({
            "metadata": {
                "name": "kube-apiserver-cp-1", "namespace": "kube-system",
                "annotations": {"kubernetes.io/config.mirror": "abc"},
                "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "cp-1",
                                     "uid": "u", "controller": true}]
            },
            "status": {"phase": "Running"}
        });
        let pod: Pod = serde_json::from_value(json).expect("pod");
        let p = NodePod::from_api(&pod);
        assert_eq!(p.owner_kind.as_deref(), Some("Node"));
        assert!(p.mirror && !p.finished && !p.must_evict());
    }
}
