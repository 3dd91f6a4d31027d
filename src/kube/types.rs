//! Typed Kubernetes facts in the operator's words, decoded from k8s-openapi
//! objects, and the matching of Kubernetes nodes to Talos nodes.
use super::api_objects::{Node, Pod};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeCondition {
    pub kind: String,
    pub status: String,
    pub reason: Option<String>,
}

/// A Kubernetes node as the panes need it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KubeNode {
    pub name: String,
    /// From `node-role.kubernetes.io/<role>` labels.
    pub roles: Vec<String>,
    pub ready: bool,
    pub conditions: Vec<NodeCondition>,
    pub kubelet_version: String,
    pub internal_ips: Vec<String>,
    pub hostname: Option<String>,
    /// `key=value:effect` as kubectl prints them.
    pub taints: Vec<String>,
    pub unschedulable: bool,
    /// Who cordoned it, when taloscope did (`taloscope.dev/cordoned-by`); an operator's own
    /// `kubectl cordon` leaves this empty.
    pub cordoned_by: Option<String>,
}

/// The annotation taloscope sets on a node it cordons, so a resumed rollout knows the cordon
/// is its own to undo.
pub const CORDONED_BY_ANNOTATION: &str = "taloscope.dev/cordoned-by";

impl KubeNode {
    pub fn from_api(node: &Node) -> KubeNode {
        let name = node.metadata.name.clone().unwrap_or_default();
        let mut roles: Vec<String> = node
            .metadata
            .labels
            .iter()
            .flatten()
            .filter_map(|(k, _)| {
                k.strip_prefix("node-role.kubernetes.io/")
                    .map(str::to_string)
            })
            .filter(|r| !r.is_empty())
            .collect();
        roles.sort();
        let status = node.status.as_ref();
        let conditions: Vec<NodeCondition> = status
            .and_then(|s| s.conditions.as_ref())
            .map(|cs| {
                cs.iter()
                    .map(|c| NodeCondition {
                        kind: c.type_.clone(),
                        status: c.status.clone(),
                        reason: c.reason.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let ready = conditions
            .iter()
            .any(|c| c.kind == "Ready" && c.status == "True");
        let addresses = status
            .and_then(|s| s.addresses.as_ref())
            .cloned()
            .unwrap_or_default();
        let spec = node.spec.as_ref();
        KubeNode {
            kubelet_version: status
                .and_then(|s| s.node_info.as_ref())
                .map(|i| i.kubelet_version.clone())
                .unwrap_or_default(),
            internal_ips: addresses
                .iter()
                .filter(|a| a.type_ == "InternalIP")
                .map(|a| a.address.clone())
                .collect(),
            hostname: addresses
                .iter()
                .find(|a| a.type_ == "Hostname")
                .map(|a| a.address.clone()),
            taints: spec
                .and_then(|s| s.taints.as_ref())
                .map(|ts| {
                    ts.iter()
                        .map(|t| match &t.value {
                            Some(v) => format!("{}={}:{}", t.key, v, t.effect),
                            None => format!("{}:{}", t.key, t.effect),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            unschedulable: spec.and_then(|s| s.unschedulable).unwrap_or(false),
            cordoned_by: node
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(CORDONED_BY_ANNOTATION))
                .cloned(),
            name,
            roles,
            ready,
            conditions,
        }
    }
}

/// A control-plane component's static pod on one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ControlPlaneComponent {
    pub node: String,
    /// `kube-apiserver`, `kube-controller-manager` or `kube-scheduler`.
    pub name: String,
    /// The image tag, e.g. `v1.34.1`.
    pub version: String,
    pub ready: bool,
    /// `status.hostIP`: the address of the node it runs on, as upstream matches static pods
    /// to control planes (pkg/cluster/kubernetes/talos_managed.go, checkPodStatus).
    pub host_ip: String,
    /// `talos.dev/config-version`: the version of the component config resource the pod was
    /// rendered from (internal/app/machined/pkg/controllers/k8s/control_plane_static_pod.go).
    pub config_version: Option<String>,
}

/// The annotation Talos stamps a static pod's config version in
/// (pkg/machinery/constants/constants.go, `AnnotationStaticPodConfigVersion`).
pub const CONFIG_VERSION_ANNOTATION: &str = "talos.dev/config-version";

pub const CONTROL_PLANE_COMPONENTS: [&str; 3] = [
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
];

impl ControlPlaneComponent {
    /// A static pod labelled `k8s-app=<component>` (as Talos labels them).
    pub fn from_pod(pod: &Pod) -> Option<ControlPlaneComponent> {
        let labels = pod.metadata.labels.as_ref()?;
        let name = labels.get("k8s-app")?;
        if !CONTROL_PLANE_COMPONENTS.contains(&name.as_str()) {
            return None;
        }
        let spec = pod.spec.as_ref()?;
        let image = spec.containers.first()?.image.clone().unwrap_or_default();
        let status = pod.status.as_ref();
        let ready = status
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
        let config_version = pod
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(CONFIG_VERSION_ANNOTATION))
            .cloned();
        Some(ControlPlaneComponent {
            node: spec.node_name.clone().unwrap_or_default(),
            name: name.clone(),
            version: image_tag(&image).to_string(),
            ready,
            host_ip: status.and_then(|s| s.host_ip.clone()).unwrap_or_default(),
            config_version,
        })
    }
}

/// The tag of an image reference (`registry.k8s.io/kube-apiserver:v1.34.1` →
/// `v1.34.1`), ignoring a digest; empty when there is none.
pub fn image_tag(image: &str) -> &str {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last = without_digest.rsplit('/').next().unwrap_or(without_digest);
    last.split_once(':').map(|(_, tag)| tag).unwrap_or("")
}

/// Which Kubernetes node is this Talos node: by InternalIP first, then by
/// hostname (Talos registers nodes under their hostname).
pub fn match_talos_node<'a>(
    address: &str,
    hostname: &str,
    nodes: &'a [KubeNode],
) -> Option<&'a KubeNode> {
    let host = address
        .rsplit_once(':')
        .filter(|_| !address.starts_with('['))
        .map(|(h, _)| h)
        .unwrap_or(address);
    nodes
        .iter()
        .find(|n| n.internal_ips.iter().any(|ip| ip == host))
        .or_else(|| {
            nodes.iter().find(|n| {
                !hostname.is_empty()
                    && (n.name == hostname || n.hostname.as_deref() == Some(hostname))
            })
        })
}

/// A Ready node on kubelet v1.34.1 at `ip`, for tests.
#[cfg(test)]
pub(crate) fn test_node(name: &str, ip: &str) -> KubeNode {
    KubeNode {
        name: name.into(),
        roles: vec![],
        ready: true,
        conditions: vec![],
        kubelet_version: "v1.34.1".into(),
        internal_ips: vec![ip.into()],
        hostname: Some(name.into()),
        taints: vec![],
        unschedulable: false,
        cordoned_by: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, ip: &str) -> KubeNode {
        test_node(name, ip)
    }

    #[test]
    fn image_tags() {
        assert_eq!(
            image_tag("registry.k8s.io/kube-apiserver:v1.34.1"),
            "v1.34.1"
        );
        assert_eq!(
            image_tag("localhost:5000/kube-apiserver:v1.35.0@sha256:abc"),
            "v1.35.0"
        );
        assert_eq!(image_tag("localhost:5000/kube-apiserver"), "");
    }

    #[test]
    fn matches_by_address_then_hostname() {
        let nodes = vec![node("cp-1", "127.10.0.1"), node("w-1", "127.10.0.4")];
        assert_eq!(
            match_talos_node("127.10.0.4", "other", &nodes).map(|n| n.name.as_str()),
            Some("w-1")
        );
        assert_eq!(
            match_talos_node("127.10.0.1:50000", "", &nodes).map(|n| n.name.as_str()),
            Some("cp-1")
        );
        assert_eq!(
            match_talos_node("127.99.0.1", "cp-1", &nodes).map(|n| n.name.as_str()),
            Some("cp-1")
        );
        assert!(match_talos_node("127.99.0.1", "nope", &nodes).is_none());
    }
}
