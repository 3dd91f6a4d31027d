//! DaemonSets of the bootstrap manifests (kube-proxy): their image and rollout, and the image
//! patch `talosctl upgrade-k8s` applies itself, since Talos only creates missing manifests and
//! never updates an existing object (internal/app/machined/pkg/controllers/k8s/manifest_apply.go).
use super::api_objects::DaemonSet;
use reqwest::Method;

use super::client::{KubeClient, KubeError};
use super::rest::Body;

/// kube-proxy's DaemonSet, as Talos' bootstrap manifests name it.
pub const KUBE_PROXY: &str = "kube-proxy";
pub const KUBE_SYSTEM: &str = "kube-system";

/// One DaemonSet's container image and how far its rollout is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DaemonSetRollout {
    /// The image of the container named like the DaemonSet (else the first container).
    pub image: String,
    pub desired: i32,
    pub updated: i32,
    pub available: i32,
    /// The controller has seen the latest spec (`observedGeneration >= generation`).
    pub observed: bool,
}

impl DaemonSetRollout {
    fn from_api(name: &str, ds: &DaemonSet) -> DaemonSetRollout {
        let containers = ds
            .spec
            .as_ref()
            .and_then(|s| s.template.spec.as_ref())
            .map(|s| s.containers.as_slice())
            .unwrap_or_default();
        let container = containers
            .iter()
            .find(|c| c.name == name)
            .or(containers.first());
        let status = ds.status.clone().unwrap_or_default();
        let generation = ds.metadata.generation.unwrap_or(0);
        DaemonSetRollout {
            image: container.and_then(|c| c.image.clone()).unwrap_or_default(),
            desired: status.desired_number_scheduled,
            updated: status.updated_number_scheduled.unwrap_or(0),
            available: status.number_available.unwrap_or(0),
            observed: status.observed_generation.unwrap_or(0) >= generation,
        }
    }

    /// Every scheduled pod runs the current spec and is available (kubectl rollout status).
    pub fn rolled_out(&self) -> Result<(), String> {
        if !self.observed {
            return Err("the DaemonSet controller has not seen the new spec yet".into());
        }
        if self.updated < self.desired {
            return Err(format!("{} of {} pods updated", self.updated, self.desired));
        }
        if self.available < self.desired {
            return Err(format!(
                "{} of {} pods available",
                self.available, self.desired
            ));
        }
        Ok(())
    }
}

impl KubeClient {
    /// A DaemonSet's image and rollout; `None` when it does not exist.
    pub async fn daemonset(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<DaemonSetRollout>, KubeError> {
        let ds: Option<DaemonSet> = self
            .rest()
            .get_opt(&daemonset_path(namespace, name))
            .await
            .map_err(|e| self.error(e))?;
        Ok(ds.map(|ds| DaemonSetRollout::from_api(name, &ds)))
    }

    /// Sets the image of the DaemonSet's container named like it (a strategic merge patch
    /// keyed by the container name), as upstream's manifest sync updates kube-proxy
    /// (pkg/cluster/kubernetes/talos_managed.go). Mutating: reached only from an approved run.
    pub async fn set_daemonset_image(
        &self,
        namespace: &str,
        name: &str,
        image: &str,
    ) -> Result<(), KubeError> {
        let patch = serde_json::json!({
            "spec": {"template": {"spec": {"containers": [{"name": name, "image": image}]}}},
        });
        let body = Body::strategic_merge_patch(&patch);
        self.rest()
            .call::<serde_json::Value>(
                Method::PATCH,
                &daemonset_path(namespace, name),
                &[],
                Some(body),
            )
            .await
            .map(|_| ())
            .map_err(|e| self.error(e))
    }
}

fn daemonset_path(namespace: &str, name: &str) -> String {
    format!("/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ds(generation: i64, observed: i64, desired: i32, updated: i32, available: i32) -> DaemonSet {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "kube-proxy", "generation": generation},
            "spec": {
                "selector": {},
                "template": {"spec": {"containers": [
                    {"name": "sidecar", "image": "busybox"},
                    {"name": "kube-proxy", "image": "registry.k8s.io/kube-proxy:v1.35.0"},
                ]}},
            },
            "status": {
                "observedGeneration": observed, "desiredNumberScheduled": desired,
                "updatedNumberScheduled": updated, "numberAvailable": available,
                "currentNumberScheduled": desired, "numberMisscheduled": 0, "numberReady": available,
            },
        }))
        .expect("DaemonSet")
    }

    #[test]
    fn the_container_named_like_the_daemonset_gives_the_image() {
        let r = DaemonSetRollout::from_api(KUBE_PROXY, &ds(2, 2, 3, 3, 3));
        assert_eq!(r.image, "registry.k8s.io/kube-proxy:v1.35.0");
        assert_eq!(r.rolled_out(), Ok(()));
    }

    #[test]
    fn a_rollout_waits_for_the_controller_the_updates_and_availability() {
        let unseen = DaemonSetRollout::from_api(KUBE_PROXY, &ds(3, 2, 3, 3, 3));
        assert!(unseen.rolled_out().unwrap_err().contains("not seen"));
        let updating = DaemonSetRollout::from_api(KUBE_PROXY, &ds(3, 3, 3, 1, 3));
        assert_eq!(updating.rolled_out(), Err("1 of 3 pods updated".into()));
        let starting = DaemonSetRollout::from_api(KUBE_PROXY, &ds(3, 3, 3, 3, 2));
        assert_eq!(starting.rolled_out(), Err("2 of 3 pods available".into()));
    }
}
