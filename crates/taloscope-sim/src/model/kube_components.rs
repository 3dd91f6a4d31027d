//! The Kubernetes components a simulated node runs, each on its own version: kube-apiserver,
//! kube-controller-manager and kube-scheduler on control planes, the kubelet everywhere, and the
//! kube-proxy image its machine config renders. Also the node's machine config with those image
//! fields (node_life/component_restart.rs restarts a component whose image changes).
use std::collections::BTreeMap;

use serde_json::Value;

use super::component_specs::render_extra_args;
use super::config_secrets::ConfigSecrets;
use super::scenario::{NodeRole, NodeSpec};
use super::state::{NodeStatus, SimNode};
use std::net::Ipv4Addr;

pub use super::component_names::{
    KUBE_APISERVER, KUBE_CONTROLLER_MANAGER, KUBE_PROXY, KUBE_SCHEDULER, KUBELET, STATIC_PODS,
};

/// Simulated seconds from an applied config to the old container stopping.
pub const COMPONENT_STOP_SECONDS: f64 = 1.0;
/// Simulated seconds a restarted component takes to run the new version and be ready.
pub const COMPONENT_RESTART_SECONDS: f64 = 6.0;

/// One component on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentStatus {
    /// `kube-apiserver`, `kube-controller-manager`, `kube-scheduler` or `kubelet`.
    pub name: String,
    /// Image tag it runs, e.g. `v1.34.1`.
    pub version: String,
    pub ready: bool,
    /// The config version the running pod was rendered from (a static pod's
    /// `talos.dev/config-version`); catches up with `config_resource_version` on restart.
    pub config_version: u64,
    /// Version of the node's `<Component>Configs` resource (namespace `controlplane`): bumped
    /// as soon as a config change reaches the component
    /// (siderolabs/talos internal/app/machined/pkg/controllers/k8s/control_plane.go writes it,
    /// control_plane_static_pod.go stamps its version on the pod).
    pub config_resource_version: u64,
}

impl ComponentStatus {
    fn new(name: &str, version: &str) -> ComponentStatus {
        ComponentStatus {
            name: name.to_string(),
            version: version.to_string(),
            ready: true,
            config_version: 1,
            config_resource_version: 1,
        }
    }
}

/// The Kubernetes side of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeKubernetes {
    pub kubelet: ComponentStatus,
    /// The control-plane static pods; empty on workers.
    pub static_pods: Vec<ComponentStatus>,
    /// Tag of `cluster.proxy.image` in the node's machine config (the DaemonSet is created from
    /// it once; later changes stay in the config).
    pub proxy_version: String,
    /// Bumped on every applied machine config (the MachineConfig resource's version).
    pub config_generation: u64,
}

impl NodeKubernetes {
    /// Every component of a `role` node on `version`.
    pub fn new(role: NodeRole, version: &str) -> NodeKubernetes {
        let static_pods = match role {
            NodeRole::ControlPlane => STATIC_PODS
                .iter()
                .map(|c| ComponentStatus::new(c, version))
                .collect(),
            NodeRole::Worker => Vec::new(),
        };
        NodeKubernetes {
            kubelet: ComponentStatus::new(KUBELET, version),
            static_pods,
            proxy_version: version.to_string(),
            config_generation: 1,
        }
    }

    /// A component by name (`kubelet` or a static pod).
    pub fn component(&self, name: &str) -> Option<&ComponentStatus> {
        if name == KUBELET {
            return Some(&self.kubelet);
        }
        self.static_pods.iter().find(|c| c.name == name)
    }

    pub(crate) fn component_mut(&mut self, name: &str) -> Option<&mut ComponentStatus> {
        if name == KUBELET {
            return Some(&mut self.kubelet);
        }
        self.static_pods.iter_mut().find(|c| c.name == name)
    }
}

/// The image references a machine config sets (absent fields are left as they are).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigImages {
    pub kubelet: Option<String>,
    pub apiserver: Option<String>,
    pub controller_manager: Option<String>,
    pub scheduler: Option<String>,
    pub proxy: Option<String>,
}

impl ConfigImages {
    /// (component, image) for every image set.
    pub(crate) fn by_component(&self) -> Vec<(&'static str, &str)> {
        [
            (KUBE_APISERVER, &self.apiserver),
            (KUBE_CONTROLLER_MANAGER, &self.controller_manager),
            (KUBE_SCHEDULER, &self.scheduler),
            (KUBELET, &self.kubelet),
            (KUBE_PROXY, &self.proxy),
        ]
        .into_iter()
        .filter_map(|(c, image)| image.as_deref().map(|i| (c, i)))
        .collect()
    }
}

/// The tag of an image reference, ignoring a digest: `registry.k8s.io/kube-apiserver:v1.35.0`
/// → `v1.35.0`; empty when there is none.
pub fn image_tag(image: &str) -> &str {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last = without_digest.rsplit('/').next().unwrap_or(without_digest);
    last.split_once(':').map(|(_, tag)| tag).unwrap_or("")
}

/// Reads the image fields of a machine config (one or more YAML documents; the v1alpha1 one
/// has `machine` and `cluster`; from Talos 1.14 each component's own document holds its
/// `image`: types/k8s/{kubelet,apiserver,controller_manager,scheduler,proxy}.go at
/// v1.14.0-rc.1). Err is the parser's message.
pub fn parse_config_images(data: &[u8]) -> Result<ConfigImages, String> {
    let text = std::str::from_utf8(data).map_err(|e| format!("not UTF-8: {e}"))?;
    let docs: Vec<Value> = serde_saphyr::from_str_multiple(text).map_err(|e| e.to_string())?;
    let mut images = ConfigImages::default();
    let image = |v: &Value| v["image"].as_str().map(str::to_string);
    for doc in docs.iter().filter(|d| d.is_object()) {
        let own = image(doc);
        match doc["kind"].as_str() {
            Some("KubeletConfig") => images.kubelet = own.or(images.kubelet.take()),
            Some("KubeAPIServerConfig") => images.apiserver = own.or(images.apiserver.take()),
            Some("KubeControllerManagerConfig") => {
                images.controller_manager = own.or(images.controller_manager.take());
            }
            Some("KubeSchedulerConfig") => images.scheduler = own.or(images.scheduler.take()),
            Some("KubeProxyConfig") => images.proxy = own.or(images.proxy.take()),
            _ => {}
        }
        let machine = &doc["machine"];
        let cluster = &doc["cluster"];
        images.kubelet = images.kubelet.or(image(&machine["kubelet"]));
        images.apiserver = images.apiserver.or(image(&cluster["apiServer"]));
        images.controller_manager = images
            .controller_manager
            .or(image(&cluster["controllerManager"]));
        images.scheduler = images.scheduler.or(image(&cluster["scheduler"]));
        images.proxy = images.proxy.or(image(&cluster["proxy"]));
    }
    Ok(images)
}

/// The image a machine config sets for `component`, if any.
pub fn config_image(config: &str, component: &str) -> Option<String> {
    let images = parse_config_images(config.as_bytes()).ok()?;
    images
        .by_component()
        .into_iter()
        .find(|(name, _)| *name == component)
        .map(|(_, image)| image.to_string())
}

/// The machine config a node booted with: its role, hostname, certSANs and install disk (per
/// node), the cluster's secrets (model/config_secrets.rs), any registry mirrors the scenario gives
/// it and the images it runs. The cluster endpoint is the first control plane's address, as
/// `talosctl gen config` writes one endpoint for every node.
pub fn initial_config(status: &NodeStatus, spec: &NodeSpec, endpoint: Ipv4Addr) -> String {
    let k = &status.kubernetes;
    let version_of = |name: &str| {
        k.component(name)
            .map(|c| c.version.clone())
            .unwrap_or_else(|| k.kubelet.version.clone())
    };
    let secrets = ConfigSecrets::of_cluster(&status.cluster);
    let mut text = format!(
        "version: v1alpha1\ndebug: false\npersist: true\nmachine:\n  type: {role}\n{machine_secrets}  certSANs:\n    - {address}\n  network:\n    hostname: {name}\n  kubelet:\n    image: ghcr.io/siderolabs/kubelet:{kubelet}\n{kubelet_args}  install:\n    disk: /dev/sda\n    image: ghcr.io/siderolabs/installer:{talos}\n{registries}cluster:\n{cluster_secrets}  clusterName: {cluster}\n  controlPlane:\n    endpoint: https://{endpoint}:6443\n",
        role = status.role.as_str(),
        machine_secrets = secrets.machine_lines(status.role),
        name = status.name,
        kubelet = k.kubelet.version,
        kubelet_args = render_extra_args(spec.extra_args.get(KUBELET), 4),
        talos = status.talos_version,
        registries = render_mirrors(&spec.registry_mirrors),
        cluster_secrets = secrets.cluster_lines(status.role),
        cluster = status.cluster,
        address = status.address,
    );
    if status.role == NodeRole::ControlPlane {
        for (key, component) in [
            ("apiServer", KUBE_APISERVER),
            ("controllerManager", KUBE_CONTROLLER_MANAGER),
            ("scheduler", KUBE_SCHEDULER),
        ] {
            text.push_str(&format!(
                "  {key}:\n    image: registry.k8s.io/{component}:{}\n",
                version_of(component)
            ));
            text.push_str(&render_extra_args(spec.extra_args.get(component), 4));
        }
        text.push_str(&format!(
            "  proxy:\n    image: registry.k8s.io/kube-proxy:{}\n",
            k.proxy_version
        ));
    }
    text
}

/// `machine.registries.mirrors` (v1alpha1_types.go `RegistryMirrorConfig`: `endpoints` per
/// registry); nothing when there are none.
fn render_mirrors(mirrors: &BTreeMap<String, Vec<String>>) -> String {
    if mirrors.is_empty() {
        return String::new();
    }
    let mut text = String::from("  registries:\n    mirrors:\n");
    for (registry, endpoints) in mirrors {
        text.push_str(&format!("      {registry}:\n        endpoints:\n"));
        for e in endpoints {
            text.push_str(&format!("          - {e}\n"));
        }
    }
    text
}

/// The config the node serves as `MachineConfigs.config.talos.dev/v1alpha1`: the last one
/// applied, or the one it booted with.
pub fn current_config(node: &SimNode) -> String {
    let applied = node.lock().applied_config.clone();
    match applied {
        Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        None => initial_config(&node.status(), &node.spec, node.cluster_endpoint),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_image_fields_from_every_document() {
        let text = b"version: v1alpha1\nmachine:\n  kubelet:\n    image: ghcr.io/siderolabs/kubelet:v1.35.0\ncluster:\n  apiServer:\n    image: registry.k8s.io/kube-apiserver:v1.35.0\n---\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: cp-1\n";
        let images = parse_config_images(text).expect("parses");
        assert_eq!(
            images.kubelet.as_deref(),
            Some("ghcr.io/siderolabs/kubelet:v1.35.0")
        );
        assert_eq!(
            images.apiserver.as_deref(),
            Some("registry.k8s.io/kube-apiserver:v1.35.0")
        );
        assert_eq!(images.scheduler, None);
        assert!(parse_config_images(b"version: v1alpha1\n").is_ok());
        assert!(parse_config_images(b"machine: [unclosed").is_err());
    }

    #[test]
    fn reads_a_v1_14_configs_component_documents() {
        let text = b"version: v1alpha1\nmachine:\n  type: controlplane\n---\napiVersion: v1alpha1\nkind: KubeletConfig\nimage: ghcr.io/siderolabs/kubelet:v1.37.0\n---\napiVersion: v1alpha1\nkind: KubeSchedulerConfig\nimage: registry.k8s.io/kube-scheduler:v1.37.1\nconfig: {}\n";
        let images = parse_config_images(text).expect("parses");
        assert_eq!(
            images.kubelet.as_deref(),
            Some("ghcr.io/siderolabs/kubelet:v1.37.0")
        );
        assert_eq!(
            images.scheduler.as_deref(),
            Some("registry.k8s.io/kube-scheduler:v1.37.1")
        );
        assert_eq!(images.apiserver, None);
    }

    #[test]
    fn tags() {
        assert_eq!(image_tag("registry.k8s.io/kube-proxy:v1.35.0"), "v1.35.0");
        assert_eq!(
            image_tag("localhost:5000/kubelet:v1.35.0@sha256:ab"),
            "v1.35.0"
        );
        assert_eq!(image_tag("localhost:5000/kubelet"), "");
    }
}
