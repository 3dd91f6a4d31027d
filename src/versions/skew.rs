//! Skew warnings for the versions pane: from what each node reports (Talos, kubelet, its
//! control-plane static pods), the ways a cluster's versions disagree with each other, with the
//! Kubernetes version-skew policy, or with the Talos support matrix.

use std::collections::BTreeMap;

use serde::Serialize;

use super::explain::VersionRule;
use super::matrix::supported_kubernetes_range;
use super::version::{KubeVersion, Minor, TalosVersion, Version};

/// A control-plane component Talos runs as a static pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ControlPlaneComponent {
    ApiServer,
    ControllerManager,
    Scheduler,
}

impl ControlPlaneComponent {
    pub const ALL: [ControlPlaneComponent; 3] = [
        ControlPlaneComponent::ApiServer,
        ControlPlaneComponent::ControllerManager,
        ControlPlaneComponent::Scheduler,
    ];

    /// The name Kubernetes uses (`k8s-app` label, image name).
    pub fn name(self) -> &'static str {
        match self {
            ControlPlaneComponent::ApiServer => "kube-apiserver",
            ControlPlaneComponent::ControllerManager => "kube-controller-manager",
            ControlPlaneComponent::Scheduler => "kube-scheduler",
        }
    }
}

/// What one node reports; `None` where the node did not answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeVersions {
    pub node: String,
    pub talos: Option<TalosVersion>,
    pub kubelet: Option<KubeVersion>,
    /// The control-plane static pods running on this node, with their versions.
    pub control_plane: Vec<(ControlPlaneComponent, KubeVersion)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Severity {
    Warn,
    Error,
}

/// One finding: a one-line message naming the nodes and versions, and the rule it comes from
/// (whose `explain()` the UI shows on `?`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkewWarning {
    pub rule: VersionRule,
    pub severity: Severity,
    pub message: String,
    /// Every node concerned (the message names at most a few).
    pub nodes: Vec<String>,
}

/// How many minors a kubelet may lag kube-apiserver: three since Kubernetes 1.28, two before.
pub fn max_kubelet_minors_behind(apiserver: Minor) -> u32 {
    if apiserver >= Minor::new(1, 28) { 3 } else { 2 }
}

const NAMED_NODES: usize = 3;

/// `cp1, cp2, cp3 +4 more`: long fleets stay on one line.
fn name_nodes(nodes: &[String]) -> String {
    let shown = nodes
        .iter()
        .take(NAMED_NODES)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    match nodes.len().saturating_sub(NAMED_NODES) {
        0 => shown,
        more => format!("{shown} +{more} more"),
    }
}

/// Nodes grouped by a version, in version order; node names keep their input order.
fn group_by_version<'a>(
    entries: impl IntoIterator<Item = (&'a Version, &'a str)>,
) -> BTreeMap<&'a Version, Vec<String>> {
    let mut groups: BTreeMap<&Version, Vec<String>> = BTreeMap::new();
    for (version, node) in entries {
        let names = groups.entry(version).or_default();
        if !names.iter().any(|n| n == node) {
            names.push(node.to_owned());
        }
    }
    groups
}

fn describe_groups(groups: &BTreeMap<&Version, Vec<String>>) -> String {
    groups
        .iter()
        .map(|(version, nodes)| format!("{version} on {}", name_nodes(nodes)))
        .collect::<Vec<_>>()
        .join("; ")
}

fn all_nodes(groups: &BTreeMap<&Version, Vec<String>>) -> Vec<String> {
    let mut nodes: Vec<String> = Vec::new();
    for name in groups.values().flatten() {
        if !nodes.contains(name) {
            nodes.push(name.clone());
        }
    }
    nodes
}

fn minors_word(n: u32) -> &'static str {
    if n == 1 { "minor" } else { "minors" }
}

/// Every skew finding for a cluster, errors first, then in rule order.
pub fn skew_warnings(nodes: &[NodeVersions]) -> Vec<SkewWarning> {
    let mut out = Vec::new();
    talos_minors(nodes, &mut out);
    kubelets(nodes, &mut out);
    control_plane(nodes, &mut out);
    support_matrix(nodes, &mut out);
    out.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.rule.cmp(&b.rule)));
    out
}

fn talos_minors(nodes: &[NodeVersions], out: &mut Vec<SkewWarning>) {
    let groups = group_by_version(
        nodes
            .iter()
            .filter_map(|n| n.talos.as_ref().map(|t| (t, n.node.as_str()))),
    );
    let (Some(lowest), Some(highest)) = (groups.keys().next(), groups.keys().next_back()) else {
        return;
    };
    if lowest.minor_key() == highest.minor_key() {
        return;
    }
    let apart = lowest.minor_key().minors_until(highest.minor_key());
    let severity = if apart == Some(1) {
        Severity::Warn
    } else {
        Severity::Error
    };
    out.push(SkewWarning {
        rule: VersionRule::TalosMinorsDiffer,
        severity,
        message: format!(
            "nodes on different Talos minors: {}",
            describe_groups(&groups)
        ),
        nodes: all_nodes(&groups),
    });
}

fn apiservers(nodes: &[NodeVersions]) -> BTreeMap<&Version, Vec<String>> {
    group_by_version(nodes.iter().flat_map(|n| {
        n.control_plane
            .iter()
            .filter(|(c, _)| *c == ControlPlaneComponent::ApiServer)
            .map(|(_, v)| (v, n.node.as_str()))
    }))
}

fn kubelets(nodes: &[NodeVersions], out: &mut Vec<SkewWarning>) {
    let servers = apiservers(nodes);
    let (Some(oldest_api), Some(newest_api)) = (servers.keys().next(), servers.keys().next_back())
    else {
        return;
    };
    let kubelets = group_by_version(
        nodes
            .iter()
            .filter_map(|n| n.kubelet.as_ref().map(|k| (k, n.node.as_str()))),
    );
    let allowed = max_kubelet_minors_behind(newest_api.minor_key());
    for (kubelet, names) in &kubelets {
        let (k, old, new) = (
            kubelet.minor_key(),
            oldest_api.minor_key(),
            newest_api.minor_key(),
        );
        if k > old {
            out.push(SkewWarning {
                rule: VersionRule::KubeletNewerThanApiServer,
                severity: Severity::Error,
                message: format!(
                    "kubelet {kubelet} on {} is newer than kube-apiserver {oldest_api}",
                    name_nodes(names)
                ),
                nodes: names.clone(),
            });
        } else if k.major != new.major || k.minors_until(new).is_some_and(|behind| behind > allowed)
        {
            let behind = k.minors_until(new).map_or_else(
                || "a major version".to_owned(),
                |b| format!("{b} {}", minors_word(b)),
            );
            out.push(SkewWarning {
                rule: VersionRule::KubeletTooOld,
                severity: Severity::Error,
                message: format!(
                    "kubelet {kubelet} on {} is {behind} behind kube-apiserver {newest_api} (at most {allowed} allowed)",
                    name_nodes(names)
                ),
                nodes: names.clone(),
            });
        }
    }
}

fn control_plane(nodes: &[NodeVersions], out: &mut Vec<SkewWarning>) {
    let mut uniform: Vec<(ControlPlaneComponent, &Version)> = Vec::new();
    let mut any_mixed = false;
    let servers = apiservers(nodes);
    for component in ControlPlaneComponent::ALL {
        let groups = group_by_version(nodes.iter().flat_map(|n| {
            n.control_plane
                .iter()
                .filter(move |(c, _)| *c == component)
                .map(|(_, v)| (v, n.node.as_str()))
        }));
        let (Some(oldest), Some(newest)) = (groups.keys().next(), groups.keys().next_back()) else {
            continue;
        };
        if oldest == newest {
            uniform.push((component, oldest));
        } else {
            any_mixed = true;
            out.push(SkewWarning {
                rule: VersionRule::ControlPlaneSkew,
                severity: Severity::Warn,
                message: format!(
                    "{} on mixed versions: {}",
                    component.name(),
                    describe_groups(&groups)
                ),
                nodes: all_nodes(&groups),
            });
        }
        if component == ControlPlaneComponent::ApiServer {
            if !matches!(
                oldest.minor_key().minors_until(newest.minor_key()),
                Some(0 | 1)
            ) {
                out.push(SkewWarning {
                    rule: VersionRule::ControlPlaneSkew,
                    severity: Severity::Error,
                    message: format!(
                        "kube-apiserver instances span {oldest} to {newest}; they must be within one minor"
                    ),
                    nodes: all_nodes(&groups),
                });
            }
            continue;
        }
        let (Some(oldest_api), Some(newest_api)) =
            (servers.keys().next(), servers.keys().next_back())
        else {
            continue;
        };
        for (version, names) in &groups {
            let problem = if version.minor_key() > oldest_api.minor_key() {
                Some(format!("is newer than kube-apiserver {oldest_api}"))
            } else {
                match version.minor_key().minors_until(newest_api.minor_key()) {
                    Some(behind) if behind <= 1 => None,
                    Some(behind) => Some(format!(
                        "is {behind} minors behind kube-apiserver {newest_api} (at most 1 allowed)"
                    )),
                    None => Some(format!(
                        "is a major version behind kube-apiserver {newest_api}"
                    )),
                }
            };
            if let Some(problem) = problem {
                out.push(SkewWarning {
                    rule: VersionRule::ControlPlaneSkew,
                    severity: Severity::Error,
                    message: format!(
                        "{} {version} on {} {problem}",
                        component.name(),
                        name_nodes(names)
                    ),
                    nodes: names.clone(),
                });
            }
        }
    }
    let first = uniform.first().map(|(_, v)| *v);
    if !any_mixed && uniform.iter().any(|(_, v)| Some(*v) != first) {
        let listed = uniform
            .iter()
            .map(|(c, v)| format!("{} {v}", c.name()))
            .collect::<Vec<_>>()
            .join(", ");
        let names = group_by_version(
            nodes
                .iter()
                .flat_map(|n| n.control_plane.iter().map(|(_, v)| (v, n.node.as_str()))),
        );
        out.push(SkewWarning {
            rule: VersionRule::ControlPlaneSkew,
            severity: Severity::Warn,
            message: format!("control-plane components on different versions: {listed}"),
            nodes: all_nodes(&names),
        });
    }
}

fn support_matrix(nodes: &[NodeVersions], out: &mut Vec<SkewWarning>) {
    // (Talos version, Kubernetes version) -> nodes, so a fleet of 250 gives one line per pair.
    let mut unsupported: BTreeMap<(&TalosVersion, &KubeVersion), Vec<String>> = BTreeMap::new();
    let mut unknown: BTreeMap<&TalosVersion, Vec<String>> = BTreeMap::new();
    for node in nodes {
        let Some(talos) = &node.talos else { continue };
        let running = node
            .kubelet
            .iter()
            .chain(node.control_plane.iter().map(|(_, v)| v));
        match supported_kubernetes_range(talos.minor_key()) {
            None => {
                if node.kubelet.is_some() || !node.control_plane.is_empty() {
                    unknown.entry(talos).or_default().push(node.node.clone());
                }
            }
            Some(range) => {
                for kube in running.filter(|k| !range.contains(k)) {
                    let names = unsupported.entry((talos, kube)).or_default();
                    if !names.contains(&node.node) {
                        names.push(node.node.clone());
                    }
                }
            }
        }
    }
    for ((talos, kube), names) in unsupported {
        let range = supported_kubernetes_range(talos.minor_key())
            .map_or_else(String::new, |r| r.to_string());
        out.push(SkewWarning {
            rule: VersionRule::SupportMatrix,
            severity: Severity::Error,
            message: format!(
                "Talos {talos} on {} does not support Kubernetes {kube} (it runs Kubernetes {range})",
                name_nodes(&names)
            ),
            nodes: names,
        });
    }
    for (talos, names) in unknown {
        out.push(SkewWarning {
            rule: VersionRule::SupportMatrix,
            severity: Severity::Warn,
            message: format!(
                "Talos {talos} on {} is not in the built-in support matrix; its Kubernetes support is unchecked",
                name_nodes(&names)
            ),
            nodes: names,
        });
    }
}

#[cfg(test)]
#[path = "skew_tests.rs"]
mod tests;
