//! The Talos resources that describe a node's Kubernetes components, read over COSI as
//! `talosctl upgrade-k8s` reads them: a control-plane component's config (whose version its
//! static pod carries), the static pod Talos renders, and the kubelet's spec.
use serde::Deserialize;

use super::client::TalosClient;
use super::cosi::TypedResource;
use super::error::TalosError;

/// Namespace of the control-plane component configs (pkg/machinery/resources/k8s/k8s.go,
/// `ControlPlaneNamespaceName`).
pub const CONTROL_PLANE_NAMESPACE: &str = "controlplane";
/// Namespace of static pods and the kubelet spec (k8s.go, `NamespaceName`).
pub const K8S_NAMESPACE: &str = "k8s";
pub const STATIC_POD_TYPE: &str = "StaticPods.kubernetes.talos.dev";
pub const KUBELET_SPEC_TYPE: &str = "KubeletSpecs.kubernetes.talos.dev";

/// The config resource type of a control-plane component, as upstream's
/// `controlplaneConfigResourceType` (pkg/cluster/kubernetes/talos_managed.go); `None` for
/// anything but the three static pods.
pub fn component_config_type(component: &str) -> Option<&'static str> {
    match component {
        "kube-apiserver" => Some("APIServerConfigs.kubernetes.talos.dev"),
        "kube-controller-manager" => Some("ControllerManagerConfigs.kubernetes.talos.dev"),
        "kube-scheduler" => Some("SchedulerConfigs.kubernetes.talos.dev"),
        _ => None,
    }
}

/// Any spec: only the resource's version is wanted.
#[derive(Deserialize)]
struct AnySpec {}

/// `StaticPodSpec`: the marshalled `v1.Pod` itself (pkg/machinery/resources/k8s/static_pod.go).
#[derive(Deserialize)]
struct StaticPodSpec {
    #[serde(default)]
    spec: PodSpec,
}

#[derive(Deserialize, Default)]
struct PodSpec {
    #[serde(default)]
    containers: Vec<Container>,
}

#[derive(Deserialize)]
struct Container {
    #[serde(default)]
    command: Vec<String>,
}

/// `KubeletSpecSpec` (pkg/machinery/resources/k8s/kubelet_spec.go): the flags it runs with.
#[derive(Deserialize)]
struct KubeletSpecSpec {
    #[serde(default)]
    args: Vec<String>,
}

impl TalosClient {
    /// The version of `component`'s config resource on a control plane (`controlplane`
    /// namespace): the value its static pod's `talos.dev/config-version` annotation carries
    /// once the pod runs that config.
    pub async fn component_config_version(
        &self,
        node: &str,
        component: &str,
    ) -> Result<String, TalosError> {
        let kind = component_config_type(component).ok_or_else(|| TalosError::Decode {
            node: node.to_string(),
            call: "cosi Get",
            reason: format!("{component} has no component config resource"),
        })?;
        let r: TypedResource<AnySpec> = self
            .cosi_get(node, CONTROL_PLANE_NAMESPACE, kind, component)
            .await?;
        Ok(r.version)
    }

    /// The command line of `component`'s static pod as Talos renders it (its first
    /// container), or `None` when the node has no such static pod.
    pub async fn static_pod_command(
        &self,
        node: &str,
        component: &str,
    ) -> Result<Option<Vec<String>>, TalosError> {
        let r = self
            .cosi_get::<StaticPodSpec>(node, K8S_NAMESPACE, STATIC_POD_TYPE, component)
            .await;
        not_found_as_none(r).map(|r| {
            r.map(|r| {
                r.spec
                    .spec
                    .containers
                    .into_iter()
                    .next()
                    .map(|c| c.command)
                    .unwrap_or_default()
            })
        })
    }

    /// The kubelet's flags (`KubeletSpecs` `k8s/kubelet`), or `None` when it has none yet.
    pub async fn kubelet_args(&self, node: &str) -> Result<Option<Vec<String>>, TalosError> {
        let r = self
            .cosi_get::<KubeletSpecSpec>(node, K8S_NAMESPACE, KUBELET_SPEC_TYPE, "kubelet")
            .await;
        not_found_as_none(r).map(|r| r.map(|r| r.spec.args))
    }
}

/// Upstream's checks skip a resource that is not there (`state.IsNotFoundError`).
fn not_found_as_none<T>(
    r: Result<TypedResource<T>, TalosError>,
) -> Result<Option<TypedResource<T>>, TalosError> {
    match r {
        Ok(r) => Ok(Some(r)),
        Err(TalosError::Rpc {
            code: tonic::Code::NotFound,
            ..
        }) => Ok(None),
        Err(e) => Err(e),
    }
}
