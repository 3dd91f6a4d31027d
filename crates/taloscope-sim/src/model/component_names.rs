//! The Kubernetes components a node runs, by name, and the machine config sections that carry
//! their extra flags: what scenarios name and both the component model and the rendered specs
//! share.
use std::collections::BTreeMap;

pub const KUBE_APISERVER: &str = "kube-apiserver";
pub const KUBE_CONTROLLER_MANAGER: &str = "kube-controller-manager";
pub const KUBE_SCHEDULER: &str = "kube-scheduler";
pub const KUBELET: &str = "kubelet";
pub const KUBE_PROXY: &str = "kube-proxy";

/// The control-plane static pods, in the order Talos upgrades them.
pub const STATIC_PODS: [&str; 3] = [KUBE_APISERVER, KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER];

/// A component's extra flags: flag name (without `--`) to value.
pub type ExtraArgs = BTreeMap<String, String>;

/// The config sections that carry a component's `extraArgs` (v1alpha1 config:
/// `cluster.apiServer`, `cluster.controllerManager`, `cluster.scheduler`, `machine.kubelet`).
pub(crate) const SECTIONS: [(&str, &str, &str); 4] = [
    (KUBE_APISERVER, "cluster", "apiServer"),
    (KUBE_CONTROLLER_MANAGER, "cluster", "controllerManager"),
    (KUBE_SCHEDULER, "cluster", "scheduler"),
    (KUBELET, "machine", "kubelet"),
];

/// The config key of a component's section, for rendering a config.
pub(crate) fn section_key(component: &str) -> Option<&'static str> {
    SECTIONS
        .iter()
        .find(|(c, _, _)| *c == component)
        .map(|(_, _, key)| *key)
}
