//! What the Kubernetes API sim knows about a cluster, published by the Talos
//! sim whenever a node changes (reboots, upgrades, config applies), so both
//! APIs always tell the same story.
use std::net::IpAddr;

/// One control-plane static pod as the kubelet would report it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticPodFacts {
    /// `kube-apiserver`, `kube-controller-manager` or `kube-scheduler`.
    pub component: String,
    /// Image tag, e.g. `v1.34.1`.
    pub version: String,
    pub ready: bool,
    /// Machine-config version the pod was started from (`talos.dev/config-version`).
    pub config_version: u64,
}

/// One node as the kubelet registers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeNodeFacts {
    pub name: String,
    pub address: IpAddr,
    pub control_plane: bool,
    /// Kubelet version, e.g. `v1.34.1`.
    pub kubelet_version: String,
    /// Talos version, shown as the OS image (`Talos (v1.11.3)`).
    pub talos_version: String,
    /// False while the node is down or rebooting.
    pub ready: bool,
    /// Empty on workers.
    pub static_pods: Vec<StaticPodFacts>,
}

/// A whole cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeClusterFacts {
    pub cluster: String,
    /// The kube-proxy image tag the first control plane's config renders (the DaemonSet is
    /// created from it at start and changed only by a client's patch).
    pub kube_proxy_version: String,
    pub nodes: Vec<KubeNodeFacts>,
    /// Seconds since the Unix epoch when the cluster was created (node ages).
    pub created_unix: i64,
    /// Every kube-apiserver that runs has no etcd to talk to (each reaches only the etcd of its
    /// own node, which is stopped): requests that need storage time out (kube_api::etcd_down).
    pub storage_unreachable: bool,
}

impl KubeClusterFacts {
    /// The version the API server reports: the apiserver of the first control
    /// plane that runs one and is ready (what a load balancer would reach). Cut from etcd, an
    /// apiserver is not ready yet still runs and serves `/version` from memory (k8s.io/apiserver
    /// pkg/server/routes/version.go answers the build's version.Info, no storage; Talos's static pod has no liveness
    /// probe, so the kubelet never restarts it: clusters.rs `storage_unreachable`).
    pub fn server_version(&self) -> Option<&str> {
        let apiservers = || {
            self.nodes
                .iter()
                .filter(|n| n.ready || self.storage_unreachable)
                .flat_map(|n| n.static_pods.iter())
                .filter(|p| p.component == "kube-apiserver")
        };
        apiservers()
            .find(|p| p.ready)
            .or_else(|| apiservers().find(|_| self.storage_unreachable))
            .map(|p| p.version.as_str())
    }
}
