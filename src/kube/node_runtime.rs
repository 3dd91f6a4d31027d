//! What Kubernetes knows of a node's runtime that the Talos API does not tell a reader: the
//! kernel (`status.nodeInfo.kernelVersion`, the kubelet's report; Talos serves it only through
//! `MachineService.Read`, os:admin) and how often each container on the node restarted
//! (`status.containerStatuses[].restartCount`; Talos's `Containers` reply carries no count).
use serde_json::Value;

use super::client::{KubeClient, KubeError};

/// One container's restarts, as its pod's status counts them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerRestarts {
    pub namespace: String,
    pub pod: String,
    pub container: String,
    pub restarts: u32,
}

impl KubeClient {
    /// The node's kernel as its kubelet reports it; `None` when Kubernetes has no such node.
    pub async fn node_kernel_version(&self, node: &str) -> Result<Option<String>, KubeError> {
        let object: Option<Value> = self
            .rest()
            .get_opt(&format!("/api/v1/nodes/{node}"))
            .await
            .map_err(|e| self.error(e))?;
        Ok(object.and_then(|n| {
            n["status"]["nodeInfo"]["kernelVersion"]
                .as_str()
                .map(str::to_string)
        }))
    }

    /// The restarts of every container of the pods scheduled on `node`.
    pub async fn container_restarts(
        &self,
        node: &str,
    ) -> Result<Vec<ContainerRestarts>, KubeError> {
        let list: Value = self
            .rest()
            .get(
                "/api/v1/pods",
                &[("fieldSelector", &format!("spec.nodeName={node}"))],
            )
            .await
            .map_err(|e| self.error(e))?;
        Ok(restarts_of(&list))
    }
}

fn restarts_of(list: &Value) -> Vec<ContainerRestarts> {
    let mut out = Vec::new();
    for pod in list["items"].as_array().into_iter().flatten() {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let namespace = text(&pod["metadata"]["namespace"]);
        let name = text(&pod["metadata"]["name"]);
        for status in pod["status"]["containerStatuses"]
            .as_array()
            .into_iter()
            .flatten()
        {
            out.push(ContainerRestarts {
                namespace: namespace.clone(),
                pod: name.clone(),
                container: text(&status["name"]),
                restarts: status["restartCount"]
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .unwrap_or(0),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarts_are_read_per_container() {
        let list = serde_json::json!({"items": [
            {"metadata": {"namespace": "kube-system", "name": "kube-apiserver-cp-1"},
             "status": {"containerStatuses": [{"name": "kube-apiserver", "restartCount": 3}]}},
            {"metadata": {"namespace": "default", "name": "pending"}, "status": {}},
        ]});
        assert_eq!(
            restarts_of(&list),
            [ContainerRestarts {
                namespace: "kube-system".into(),
                pod: "kube-apiserver-cp-1".into(),
                container: "kube-apiserver".into(),
                restarts: 3,
            }]
        );
    }
}
