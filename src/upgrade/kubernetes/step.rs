//! One step of the Kubernetes upgrade on a live cluster, as `talosctl upgrade-k8s` does it: read
//! the node's machine config over COSI, patch one image, apply it without reboot, then wait
//! until the component runs the target and is ready (its static pod on the new config version,
//! the kube-proxy DaemonSet, or the kubelet's Kubernetes node). Also the optional pre-pull.
use std::time::Duration;

use futures::StreamExt;

use super::config_patch::{current_image, patch_image};
use super::plan::{Component, KubeStep, KubernetesUpgradePlan, PrePull};
use crate::fleet::collect_kubernetes;
use crate::kube::{KUBE_PROXY, KUBE_SYSTEM, image_tag, match_talos_node};
use crate::rollout::StepPhase;
use crate::rollout::StepReport;
use crate::talos::{ApplyMode, ImageNamespace, TalosError};
use crate::upgrade::downtime::kubernetes_api_down;
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::runner::KindStep;
use crate::versions::{KubeVersion, Version};

/// Whether an image tag (`v1.35.0`, `v1.35.0-custom`) is the target release.
pub fn runs_target(tag: &str, target: &KubeVersion) -> bool {
    let core = tag.split('-').next().unwrap_or(tag);
    Version::parse(core)
        .is_ok_and(|v| (v.major, v.minor, v.patch) == (target.major, target.minor, target.patch))
}

/// One component on one node.
pub struct ComponentStep<'a> {
    pub observer: &'a ClusterObserver,
    pub plan: &'a KubernetesUpgradePlan,
    pub step: &'a KubeStep,
    pub poll_interval: Duration,
}

impl ComponentStep<'_> {
    fn what(&self) -> String {
        format!("{} on {}", self.step.component.as_str(), self.step.node)
    }

    async fn read_config(&self) -> Result<String, String> {
        self.observer
            .talos
            .machine_config(&self.step.address)
            .await
            .map(|r| r.spec)
            .map_err(|e| format!("cannot read the machine config: {e}"))
    }

    /// Waits until the component runs the target. `image` is the one the machine config names;
    /// `config_version` the component config version a static pod must carry.
    async fn wait_done(
        &self,
        report: &StepReport,
        image: &str,
        config_version: Option<&str>,
    ) -> Result<(), String> {
        loop {
            let done = match (self.step.component, config_version) {
                (Component::KubeProxy, _) => self.kube_proxy_rolled_out(image).await,
                (_, Some(version)) => self.static_pod_runs(version).await,
                _ => self.kubelet_runs_target().await,
            };
            match done {
                Ok(()) => return Ok(()),
                Err(why) => report.detail(why),
            }
            tokio::time::sleep(self.poll_interval).await;
        }
    }

    /// The version of this component's config resource on the node (`APIServerConfigs` …,
    /// namespace `controlplane`), read as upstream watches it before patching.
    async fn config_version(&self) -> Result<String, String> {
        self.observer
            .talos
            .component_config_version(&self.step.address, self.step.component.as_str())
            .await
            .map_err(|e| format!("cannot read the {} config resource: {e}", self.what()))
    }

    /// After an applied config: the new version of the component config resource, once
    /// Talos has rendered the change (upstream waits for its `Updated` event).
    async fn wait_config_change(&self, report: &StepReport, before: &str) -> String {
        loop {
            match self.config_version().await {
                Ok(now) if now != before => return now,
                Ok(_) => report.detail(format!(
                    "waiting for Talos to render the {} config (version {before})",
                    self.what()
                )),
                // A node busy restarting a component may not answer: ask again.
                Err(why) => report.detail(why),
            }
            tokio::time::sleep(self.poll_interval).await;
        }
    }

    /// `Ok` when the static pod on this node (`status.hostIP`) carries `config_version` in its
    /// `talos.dev/config-version` annotation and is ready, as upstream's checkPodStatus
    /// (pkg/cluster/kubernetes/talos_managed.go); otherwise what it waits for.
    async fn static_pod_runs(&self, config_version: &str) -> Result<(), String> {
        let Some(kube) = &self.observer.kube else {
            return Err("no kube context: the component cannot be seen".into());
        };
        let (nodes, pods) = tokio::join!(kube.nodes(), kube.control_plane_components());
        let pods = pods.map_err(|e| kubernetes_api_down(&e.to_string()))?;
        // The node's address as Kubernetes knows it, besides the one Talos is reached at.
        let mut addresses = vec![self.step.address.clone()];
        if let Ok(nodes) = &nodes
            && let Some(node) = match_talos_node(&self.step.address, &self.step.node, nodes)
        {
            addresses.extend(node.internal_ips.iter().cloned());
        }
        let component = self.step.component.as_str();
        let pod = pods
            .iter()
            .find(|p| p.name == component && addresses.contains(&p.host_ip))
            .ok_or_else(|| format!("no {} static pod yet", self.what()))?;
        let seen = pod.config_version.as_deref().unwrap_or("none");
        if seen != config_version {
            return Err(format!(
                "{}: config version {seen}, waiting for {config_version}",
                self.what()
            ));
        }
        if !pod.ready {
            return Err(format!("{} {} not ready", self.what(), pod.version));
        }
        Ok(())
    }

    /// `Ok` when the node's kubelet reports the target and the node is ready.
    async fn kubelet_runs_target(&self) -> Result<(), String> {
        let Some(kube) = &self.observer.kube else {
            return Err("no kube context: the component cannot be seen".into());
        };
        let facts = collect_kubernetes(kube).await;
        if let Some(error) = &facts.report.error {
            return Err(kubernetes_api_down(error));
        }
        let node = match_talos_node(&self.step.address, &self.step.node, &facts.nodes)
            .ok_or_else(|| format!("Kubernetes node {} not seen", self.step.node))?;
        if !runs_target(&node.kubelet_version, &self.plan.target) {
            return Err(format!("kubelet reports {}", node.kubelet_version));
        }
        if !node.ready {
            return Err("Kubernetes node NotReady".into());
        }
        Ok(())
    }
}

impl ComponentStep<'_> {
    /// kube-proxy: Talos only creates the bootstrap manifests and never updates the DaemonSet
    /// (internal/app/machined/pkg/controllers/k8s/manifest_apply.go), so the DaemonSet's image
    /// is set here, as upstream's manifest sync does (pkg/cluster/kubernetes/talos_managed.go),
    /// then its rollout awaited. A failed patch is tried again on the next poll.
    async fn kube_proxy_rolled_out(&self, image: &str) -> Result<(), String> {
        let Some(kube) = &self.observer.kube else {
            return Err("no kube context: the kube-proxy DaemonSet cannot be seen".into());
        };
        let ds = kube
            .daemonset(KUBE_SYSTEM, KUBE_PROXY)
            .await
            .map_err(|e| format!("reading the kube-proxy DaemonSet: {e}"))?
            .ok_or("no kube-proxy DaemonSet")?;
        if !runs_target(image_tag(&ds.image), &self.plan.target) {
            kube.set_daemonset_image(KUBE_SYSTEM, KUBE_PROXY, image)
                .await
                .map_err(|e| format!("setting the kube-proxy DaemonSet image: {e}"))?;
            return Err(format!("kube-proxy DaemonSet set to {image}; rolling out"));
        }
        ds.rolled_out()
            .map_err(|why| format!("kube-proxy DaemonSet on {}: {why}", image_tag(&ds.image)))
    }
}

impl KindStep for ComponentStep<'_> {
    /// Patch, apply without reboot, wait until the component runs the target and is ready.
    async fn run(&self, report: &StepReport) -> Result<(), String> {
        let component = self.step.component.as_str();
        report.phase(StepPhase::Installing, "reading the machine config");
        let config = self.read_config().await?;
        let before = match self.step.component.is_static_pod() {
            true => Some(self.config_version().await?),
            false => None,
        };
        let patched = patch_image(
            &self.step.node,
            &config,
            self.step.component,
            &self.plan.target,
        )
        .map_err(|e| e.to_string())?;
        match &patched.text {
            Some(text) => {
                report.log(format!(
                    "update {component}: {} -> {}",
                    patched.old_image.as_deref().unwrap_or("(unset)"),
                    patched.new_image
                ));
                report.phase(
                    StepPhase::Installing,
                    "applying the machine config without reboot",
                );
                let applied = self
                    .observer
                    .talos
                    .apply_configuration(
                        &self.step.address,
                        text.as_bytes(),
                        ApplyMode::NoReboot,
                        false,
                        None,
                    )
                    .await
                    .map_err(|e| e.to_string())?;
                for warning in applied.warnings {
                    report.log(format!("warning: {warning}"));
                }
            }
            None => report.log(format!(
                "{component} image already {}; waiting for it to run",
                patched.new_image
            )),
        }
        report.phase(
            StepPhase::WaitingForReady,
            format!("waiting for {component} {} and ready", self.plan.target),
        );
        // Upstream skips the wait for a new config version when nothing was patched.
        let expected = match (&before, &patched.text) {
            (Some(before), Some(_)) => Some(self.wait_config_change(report, before).await),
            (before, _) => before.clone(),
        };
        self.wait_done(report, &patched.new_image, expected.as_deref())
            .await
    }

    /// A step a killed run left in progress: done once the component runs the target, when
    /// the node's config already names it; `false` when the config was never changed.
    async fn settle(&self) -> Result<bool, String> {
        let config = self.read_config().await?;
        let image = current_image(&self.step.node, &config, self.step.component)
            .map_err(|e| e.to_string())?
            .unwrap_or_default();
        let tag = image_tag(&image);
        if !runs_target(tag, &self.plan.target) {
            return Ok(false);
        }
        let expected = match self.step.component.is_static_pod() {
            true => Some(self.config_version().await?),
            false => None,
        };
        let (report, _rx) = StepReport::channel(0, &self.step.node);
        self.wait_done(&report, &image, expected.as_deref())
            .await
            .map(|()| true)
    }
}

/// The most one image pull may take before the node answers.
const PRE_PULL_BOUND: Duration = Duration::from_secs(5 * 60);

/// A step of the Kubernetes upgrade: a pre-pull or a component's.
pub enum KubeLiveStep<'a> {
    PrePull(PrePullStep<'a>),
    Component(ComponentStep<'a>),
}

impl KindStep for KubeLiveStep<'_> {
    async fn settle(&self) -> Result<bool, String> {
        match self {
            KubeLiveStep::PrePull(step) => step.settle().await,
            KubeLiveStep::Component(step) => step.settle().await,
        }
    }

    async fn run(&self, report: &StepReport) -> Result<(), String> {
        match self {
            KubeLiveStep::PrePull(step) => step.run(report).await,
            KubeLiveStep::Component(step) => step.run(report).await,
        }
    }
}

/// One image pulled on one node before the component steps, as upstream's pre-pull does
/// (pkg/cluster/kubernetes/talos_managed.go, prePullImages): `MachineService.ImagePull`,
/// falling back to `ImageService.Pull` where the node has no ImagePull; a node with neither is
/// passed over, as upstream passes over `Unimplemented`.
pub struct PrePullStep<'a> {
    pub observer: &'a ClusterObserver,
    pub pull: PrePull,
}

impl KindStep for PrePullStep<'_> {
    /// A pull a killed run left in progress is pulled again: it changes nothing on the node.
    async fn settle(&self) -> Result<bool, String> {
        Ok(false)
    }

    async fn run(&self, report: &StepReport) -> Result<(), String> {
        let p = &self.pull;
        let namespace = match p.component {
            Component::Kubelet => ImageNamespace::System,
            _ => ImageNamespace::Cri,
        };
        report.phase(StepPhase::Pulling, format!("pulling {}", p.image));
        let talos = &self.observer.talos;
        let mut result = talos
            .machine_image_pull(&p.address, &p.image, namespace, PRE_PULL_BOUND)
            .await;
        if is_unimplemented(&result) {
            result = image_service_pull(self.observer, p, namespace).await;
        }
        match result {
            Ok(()) => {
                report.log(format!("pulled {}", p.image));
                report.detail(format!("pulled {}", p.image));
                Ok(())
            }
            Err(e) if is_unimplemented::<()>(&Err(e.clone())) => {
                let note = format!("the node offers no image pull, {} not pre-pulled", p.image);
                report.log(&note);
                report.detail(note);
                Ok(())
            }
            Err(e) => Err(format!("pre-pulling {} on {}: {e}", p.image, p.node)),
        }
    }
}

fn is_unimplemented<T>(result: &Result<T, TalosError>) -> bool {
    matches!(
        result,
        Err(TalosError::Rpc {
            code: tonic::Code::Unimplemented,
            ..
        })
    )
}

/// `ImageService.Pull` (Talos ≥ 1.13) to the end of its progress stream.
async fn image_service_pull(
    observer: &ClusterObserver,
    p: &PrePull,
    namespace: ImageNamespace,
) -> Result<(), TalosError> {
    let mut stream = observer
        .talos
        .image_pull(&p.address, &p.image, namespace)
        .await?;
    while let Some(item) = stream.next().await {
        item?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_tags() {
        let target = Version::parse("1.35.0").expect("version");
        assert!(runs_target("v1.35.0", &target));
        assert!(runs_target("v1.35.0-custom", &target));
        assert!(!runs_target("v1.34.1", &target));
        assert!(!runs_target("", &target));
    }
}
