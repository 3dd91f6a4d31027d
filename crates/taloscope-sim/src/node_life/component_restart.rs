//! A node's Kubernetes components restarting on a config applied without a reboot: each
//! component whose image or flags changed stops, then runs again, ready, some simulated seconds
//! later (model/kube_components.rs holds what each component runs).
use std::sync::Arc;

use crate::model::component_specs::changed_args;
use crate::model::core::Core;
use crate::model::kube_components::{
    COMPONENT_RESTART_SECONDS, COMPONENT_STOP_SECONDS, ConfigImages, KUBE_PROXY, KUBELET,
    image_tag, parse_config_images,
};
use crate::model::state::SimNode;

/// A config applied without a reboot: every component whose image tag or `extraArgs`
/// (`args_changed`) changed restarts on it, its config resource version bumped as Talos's
/// ControlPlaneController / KubeletSpecController rewrite the resource only when its spec
/// changes (internal/app/machined/pkg/controllers/k8s/control_plane.go, kubelet_spec.go).
/// The kube-proxy image only changes the node's config: the DaemonSet Talos created at
/// bootstrap is never updated from it (kube_api::manifests).
pub(crate) fn apply_images(
    core: &Arc<Core>,
    node: &Arc<SimNode>,
    images: &ConfigImages,
    args_changed: &[&'static str],
) {
    let current = node.status().kubernetes;
    let mut restarts: Vec<(&'static str, String)> = Vec::new();
    for (component, image) in images.by_component() {
        let tag = image_tag(image).to_string();
        if tag.is_empty() {
            continue;
        }
        if component == KUBE_PROXY {
            continue;
        }
        if current
            .component(component)
            .is_some_and(|c| c.version != tag)
        {
            restarts.push((component, tag));
        }
    }
    for component in args_changed {
        if let Some(c) = current.component(component)
            && !restarts.iter().any(|(r, _)| r == component)
        {
            restarts.push((component, c.version.clone()));
        }
    }
    let proxy = images
        .proxy
        .as_deref()
        .map(image_tag)
        .filter(|t| !t.is_empty())
        .map(str::to_string);
    core.fleet.update(node, |s| {
        s.kubernetes.config_generation += 1;
        for (component, _) in &restarts {
            if let Some(c) = s.kubernetes.component_mut(component) {
                c.config_resource_version += 1;
            }
        }
        if let Some(proxy) = proxy
            && proxy != s.kubernetes.proxy_version
        {
            s.kubernetes.proxy_version = proxy;
        }
    });
    for (component, version) in restarts {
        tokio::spawn(restart(core.clone(), node.clone(), component, version));
    }
}

/// A config replacing `before` as the running one: its images and changed `extraArgs` restart
/// what they touch (`apply_images`).
pub(crate) fn apply_config(core: &Arc<Core>, node: &Arc<SimNode>, before: &[u8], after: &[u8]) {
    let images = parse_config_images(after).unwrap_or_default();
    let args_changed = changed_args(before, after);
    apply_images(core, node, &images, &args_changed);
}

/// One component restarting on a new version: the old container stops (a static pod shows the
/// new image, not ready; the kubelet's node goes NotReady), then it comes back ready on the new
/// version, unless the node's `component_never_ready` fault names it.
async fn restart(core: Arc<Core>, node: Arc<SimNode>, component: &'static str, version: String) {
    let clock = core.clock;
    clock.sleep(COMPONENT_STOP_SECONDS).await;
    if *core.stop.borrow() {
        return;
    }
    let is_kubelet = component == KUBELET;
    core.fleet.update(&node, |s| {
        if let Some(c) = s.kubernetes.component_mut(component) {
            c.ready = false;
            c.config_version = c.config_resource_version;
            if !is_kubelet {
                c.version = version.clone();
            }
        }
    });
    clock.sleep(COMPONENT_RESTART_SECONDS).await;
    if *core.stop.borrow() {
        return;
    }
    let stuck = node.faults().component_never_ready.as_deref() == Some(component);
    core.fleet.update(&node, |s| {
        if let Some(c) = s.kubernetes.component_mut(component) {
            c.version = version;
            c.ready = !stuck;
        }
    });
}
