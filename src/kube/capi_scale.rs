//! Writes a Cluster API scale makes on a management cluster: `spec.replicas` of a
//! TalosControlPlane or MachineDeployment through its `scale` subresource (both CRDs serve
//! it), and the workload cluster's `<name>-talosconfig` Secret the bootstrap provider keeps.
use reqwest::Method;
use serde::{Deserialize, Serialize};

use super::capi::{CAPI_GROUP, TALOS_CONTROL_PLANE_API};
use super::capi_model::CapiVersion;
use super::client::{KubeClient, KubeError};
use super::rest::Body;

/// The objects whose `spec.replicas` a scale changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ScaledKind {
    TalosControlPlane,
    MachineDeployment,
}

impl ScaledKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ScaledKind::TalosControlPlane => "TalosControlPlane",
            ScaledKind::MachineDeployment => "MachineDeployment",
        }
    }

    /// The object's `scale` subresource; a MachineDeployment in the `cluster.x-k8s.io`
    /// version the management cluster was read in.
    pub fn scale_path(self, version: CapiVersion, namespace: &str, name: &str) -> String {
        match self {
            ScaledKind::TalosControlPlane => format!(
                "{TALOS_CONTROL_PLANE_API}/namespaces/{namespace}/taloscontrolplanes/{name}/scale"
            ),
            ScaledKind::MachineDeployment => format!(
                "/apis/{CAPI_GROUP}/{}/namespaces/{namespace}/machinedeployments/{name}/scale",
                version.as_str()
            ),
        }
    }
}

/// `autoscaling/v1` Scale, the part read back.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Scale {
    spec: ScaleSpec,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ScaleSpec {
    replicas: Option<u32>,
}

impl KubeClient {
    /// Sets `spec.replicas` of `kind` `namespace/name` to `replicas` (a merge patch of its
    /// scale subresource); the replicas the server then holds.
    pub async fn capi_scale(
        &self,
        kind: ScaledKind,
        version: CapiVersion,
        (namespace, name): (&str, &str),
        replicas: u32,
    ) -> Result<u32, KubeError> {
        let path = kind.scale_path(version, namespace, name);
        let patch = serde_json::json!({"spec": {"replicas": replicas}});
        let scale: Scale = self
            .rest()
            .call(Method::PATCH, &path, &[], Some(Body::merge_patch(&patch)))
            .await
            .map_err(|e| self.error(e))?;
        scale.spec.replicas.ok_or_else(|| {
            self.api_error(format!(
                "the scale of {} {namespace}/{name} has no spec.replicas",
                kind.as_str()
            ))
        })
    }

    /// The talosconfig in the workload cluster's `<cluster>-talosconfig` Secret of
    /// `namespace` (key `talosconfig`); `None` when there is none (yet).
    pub async fn capi_talosconfig(
        &self,
        namespace: &str,
        cluster: &str,
    ) -> Result<Option<String>, KubeError> {
        self.capi_secret_text(namespace, &format!("{cluster}-talosconfig"), "talosconfig")
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_scales_through_its_own_group() {
        assert_eq!(
            ScaledKind::TalosControlPlane.scale_path(CapiVersion::V1beta2, "default", "w-cp"),
            "/apis/controlplane.cluster.x-k8s.io/v1alpha3/namespaces/default/taloscontrolplanes/w-cp/scale"
        );
        assert_eq!(
            ScaledKind::MachineDeployment.scale_path(CapiVersion::V1beta1, "ns", "md-0"),
            "/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/machinedeployments/md-0/scale"
        );
    }
}
