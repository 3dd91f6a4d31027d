//! A Kubernetes upgrade plan for one cluster, in upstream `talosctl upgrade-k8s` order:
//! kube-apiserver on each control plane one at a time, then kube-controller-manager, then
//! kube-scheduler, then kube-proxy (each control plane's config), then each node's kubelet
//! (control planes first). Pure: built from a status snapshot.
use serde::{Deserialize, Serialize};

use crate::fleet::{ClusterStatus, NodeRole, NodeStatus};
use crate::kube::removed_apis::RemovedApiCount;
use crate::upgrade::releases::ReleasesOrigin;
use crate::versions::{KubeVersion, Version, kubernetes_upgrade_targets};

/// One Kubernetes component the upgrade changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Component {
    KubeApiserver,
    KubeControllerManager,
    KubeScheduler,
    KubeProxy,
    Kubelet,
}

impl Component {
    /// The control-plane static pods, in upgrade order.
    pub const STATIC_PODS: [Component; 3] = [
        Component::KubeApiserver,
        Component::KubeControllerManager,
        Component::KubeScheduler,
    ];

    /// The name Kubernetes and Talos use (`kube-apiserver`, `kubelet`).
    pub fn as_str(self) -> &'static str {
        match self {
            Component::KubeApiserver => "kube-apiserver",
            Component::KubeControllerManager => "kube-controller-manager",
            Component::KubeScheduler => "kube-scheduler",
            Component::KubeProxy => "kube-proxy",
            Component::Kubelet => "kubelet",
        }
    }

    /// Where the image lives in the v1alpha1 machine config: (section, key), e.g.
    /// `cluster.apiServer.image` → ("cluster", "apiServer").
    pub fn config_path(self) -> (&'static str, &'static str) {
        match self {
            Component::KubeApiserver => ("cluster", "apiServer"),
            Component::KubeControllerManager => ("cluster", "controllerManager"),
            Component::KubeScheduler => ("cluster", "scheduler"),
            Component::KubeProxy => ("cluster", "proxy"),
            Component::Kubelet => ("machine", "kubelet"),
        }
    }

    /// The document of a Talos 1.14+ config that holds the image instead
    /// (pkg/machinery/config/types/k8s at v1.14.0-rc.1).
    pub fn document_kind(self) -> &'static str {
        match self {
            Component::KubeApiserver => "KubeAPIServerConfig",
            Component::KubeControllerManager => "KubeControllerManagerConfig",
            Component::KubeScheduler => "KubeSchedulerConfig",
            Component::KubeProxy => "KubeProxyConfig",
            Component::Kubelet => "KubeletConfig",
        }
    }

    /// The image repository talosctl uses by default.
    pub fn default_repository(self) -> &'static str {
        match self {
            Component::KubeApiserver => "registry.k8s.io/kube-apiserver",
            Component::KubeControllerManager => "registry.k8s.io/kube-controller-manager",
            Component::KubeScheduler => "registry.k8s.io/kube-scheduler",
            Component::KubeProxy => "registry.k8s.io/kube-proxy",
            Component::Kubelet => "ghcr.io/siderolabs/kubelet",
        }
    }

    /// The image reference for `target`: `registry.k8s.io/kube-apiserver:v1.35.0`.
    pub fn image(self, target: &KubeVersion) -> String {
        format!("{}:{target}", self.default_repository())
    }

    pub fn is_static_pod(self) -> bool {
        Component::STATIC_PODS.contains(&self)
    }
}

/// Whether a step changes anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KubeStepState {
    Upgrade,
    /// Already runs the target: nothing to apply (upstream skips it too).
    AlreadyOnTarget,
    /// kube-proxy is disabled: the cluster has no kube-proxy DaemonSet to upgrade.
    NoKubeProxy,
}

impl KubeStepState {
    /// Why a step that changes nothing is skipped, for plans and progress.
    pub fn skip_note(self) -> Option<&'static str> {
        match self {
            KubeStepState::Upgrade => None,
            KubeStepState::AlreadyOnTarget => Some("already on target"),
            KubeStepState::NoKubeProxy => Some("no kube-proxy DaemonSet (kube-proxy disabled)"),
        }
    }
}

/// One component on one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KubeStep {
    pub component: Component,
    pub node: String,
    /// The Talos address the node is reached at.
    pub address: String,
    pub role: NodeRole,
    /// The version it runs now, when known.
    pub from: Option<String>,
    pub state: KubeStepState,
}

impl KubeStep {
    /// "kube-apiserver v1.35.0", for the progress pane.
    pub fn label(&self, target: &KubeVersion) -> String {
        format!("{} {target}", self.component.as_str())
    }
}

/// The plan: what to run, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KubernetesUpgradePlan {
    pub cluster: String,
    /// The lowest control-plane component version (what talosctl detects as `--from`).
    pub from: KubeVersion,
    pub target: KubeVersion,
    /// Pull every new image on every node before the first step.
    pub pre_pull: bool,
    pub steps: Vec<KubeStep>,
    /// Objects stored in API versions the target removes, when they were counted.
    #[serde(default)]
    pub removed_apis: Vec<RemovedApiCount>,
    /// Where the releases were learned when the built-in table does not know the target.
    #[serde(default)]
    pub releases: ReleasesOrigin,
    /// A registry lists the target's API server image, though the built-in table does not.
    #[serde(default)]
    pub target_listed: bool,
}

/// Why no plan can be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KubePlanError {
    #[error(
        "cluster {cluster}: the Kubernetes API did not answer ({reason}); the upgrade needs its static pods and nodes"
    )]
    NoKubernetes { cluster: String, reason: String },
    #[error("cluster {cluster}: no control plane found in the cluster status")]
    NoControlPlane { cluster: String },
    #[error(
        "cluster {cluster}: cannot tell the running Kubernetes version (no control-plane component reports a version)"
    )]
    UnknownVersion { cluster: String },
}

/// The running Kubernetes version as talosctl detects it: the lowest control-plane component
/// image tag, else the API server's version, else the lowest kubelet.
pub fn detect_running(status: &ClusterStatus) -> Option<KubeVersion> {
    let parse = |v: &str| Version::parse(v).ok();
    let kube = status.kubernetes.as_ref();
    let components: Vec<KubeVersion> = kube
        .map(|k| {
            k.components
                .iter()
                .filter_map(|c| parse(&c.version))
                .collect()
        })
        .unwrap_or_default();
    if let Some(lowest) = Version::lowest(&components) {
        return Some(lowest.clone());
    }
    if let Some(v) = kube
        .and_then(|k| k.server_version.as_deref())
        .and_then(parse)
    {
        return Some(v);
    }
    let kubelets: Vec<KubeVersion> = status
        .nodes
        .iter()
        .filter_map(|n| n.kubelet_version.as_deref())
        .filter_map(parse)
        .collect();
    Version::lowest(&kubelets).cloned()
}

/// The targets the plan screen offers for `status`: later patches of the running minor and
/// releases of the next minor that every node's Talos runs (empty when nothing is known).
pub fn offered_kubernetes_targets(status: &ClusterStatus) -> Vec<KubeVersion> {
    let Some(running) = detect_running(status) else {
        return Vec::new();
    };
    let talos = crate::upgrade::plan::running_talos_versions(status);
    kubernetes_upgrade_targets(&running, &talos)
}

/// The targets the console's plan screens offer for `status` and the one chosen: the `named`
/// one, which need not be offered (the version-path guard decides), else the newest offered.
/// Errors are one line for the message line.
pub fn chosen_kubernetes_target(
    status: &ClusterStatus,
    named: Option<&str>,
) -> Result<(Vec<KubeVersion>, KubeVersion), String> {
    let mut targets = offered_kubernetes_targets(status);
    let target = match named {
        None => targets.last().cloned().ok_or_else(|| {
            format!(
                "no Kubernetes upgrade target is offered for {} (already on the newest its Talos runs, or versions unknown)",
                status.name
            )
        })?,
        Some(text) => {
            let wanted = Version::parse(text).map_err(|e| format!(":upgrade-k8s {text}: {e}"))?;
            if !targets.contains(&wanted) {
                targets.push(wanted.clone());
                targets.sort();
            }
            wanted
        }
    };
    Ok((targets, target))
}

fn step(
    component: Component,
    node: &NodeStatus,
    from: Option<String>,
    target: &KubeVersion,
) -> KubeStep {
    let on_target = from
        .as_deref()
        .and_then(|v| Version::parse(v).ok())
        .is_some_and(|v| &v == target);
    KubeStep {
        component,
        node: node.name.clone(),
        address: node.address.clone(),
        role: node.role,
        from,
        state: if on_target {
            KubeStepState::AlreadyOnTarget
        } else {
            KubeStepState::Upgrade
        },
    }
}

impl KubernetesUpgradePlan {
    /// The plan for `status` to `target`. Whether the target is allowed is for the guards.
    pub fn new(
        status: &ClusterStatus,
        target: &KubeVersion,
        pre_pull: bool,
    ) -> Result<KubernetesUpgradePlan, KubePlanError> {
        let cluster = status.name.clone();
        let kube = match &status.kubernetes {
            Some(k) if k.error.is_none() => k,
            Some(k) => {
                return Err(KubePlanError::NoKubernetes {
                    cluster,
                    reason: k.error.clone().unwrap_or_default(),
                });
            }
            None => {
                return Err(KubePlanError::NoKubernetes {
                    cluster,
                    reason: "no kube context is paired with it".into(),
                });
            }
        };
        let control_planes: Vec<&NodeStatus> = status
            .nodes
            .iter()
            .filter(|n| n.role == NodeRole::Controlplane)
            .collect();
        if control_planes.is_empty() {
            return Err(KubePlanError::NoControlPlane { cluster });
        }
        let from = detect_running(status).ok_or(KubePlanError::UnknownVersion {
            cluster: cluster.clone(),
        })?;
        let mut steps = Vec::new();
        for component in Component::STATIC_PODS {
            for node in &control_planes {
                let running = kube
                    .components
                    .iter()
                    .find(|c| c.name == component.as_str() && c.node == node.name)
                    .map(|c| c.version.clone());
                steps.push(step(component, node, running, target));
            }
        }
        for node in &control_planes {
            let mut proxy = step(
                Component::KubeProxy,
                node,
                kube.kube_proxy_version.clone(),
                target,
            );
            if kube.kube_proxy_version.is_none() {
                proxy.state = KubeStepState::NoKubeProxy;
            }
            steps.push(proxy);
        }
        let workers = status
            .nodes
            .iter()
            .filter(|n| n.role != NodeRole::Controlplane);
        for node in control_planes.iter().copied().chain(workers) {
            steps.push(step(
                Component::Kubelet,
                node,
                node.kubelet_version.clone(),
                target,
            ));
        }
        Ok(KubernetesUpgradePlan {
            cluster,
            from,
            target: target.clone(),
            pre_pull,
            steps,
            removed_apis: Vec::new(),
            releases: ReleasesOrigin::default(),
            target_listed: false,
        })
    }

    /// Steps that apply a new image.
    pub fn steps_to_run(&self) -> impl Iterator<Item = (usize, &KubeStep)> {
        self.steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.state == KubeStepState::Upgrade)
    }

    /// One step per batch: the Kubernetes upgrade never runs two steps at once.
    pub fn batches(&self) -> Vec<Vec<usize>> {
        self.steps_to_run().map(|(i, _)| vec![i]).collect()
    }

    /// The pre-pull steps that come before the component steps: every image each node pulls,
    /// when the plan pre-pulls.
    pub fn pre_pull_steps(&self) -> Vec<PrePull> {
        if self.pre_pull {
            self.images_to_pull()
        } else {
            Vec::new()
        }
    }

    /// Every image each node pulls before the first step: the static pods on control planes,
    /// the kubelet everywhere (upstream pre-pulls the same set).
    pub fn images_to_pull(&self) -> Vec<PrePull> {
        let mut out: Vec<PrePull> = Vec::new();
        for s in self.steps_to_run().map(|(_, s)| s) {
            if s.component == Component::KubeProxy {
                continue;
            }
            let image = s.component.image(&self.target);
            if !out.iter().any(|p| p.node == s.node && p.image == image) {
                out.push(PrePull {
                    node: s.node.clone(),
                    address: s.address.clone(),
                    image,
                    component: s.component,
                });
            }
        }
        out
    }
}

/// One image to pull on one node before the rollout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrePull {
    pub node: String,
    pub address: String,
    pub image: String,
    pub component: Component,
}

impl PrePull {
    /// "pre-pull registry.k8s.io/kube-apiserver:v1.35.0", for the progress pane.
    pub fn label(&self) -> String {
        format!("pre-pull {}", self.image)
    }
}
