//! The component flags, feature gates and admission plugins each Kubernetes minor removes, and
//! the check upstream runs before an upgrade crosses one: every control plane's static pods and
//! every kubelet, as Talos renders them, must not use any (a removed flag stops the component).
use serde::Serialize;

use super::plan::{Component, KubernetesUpgradePlan};
use crate::upgrade::observe::ClusterObserver;

/// What one Kubernetes minor removes. The table is upstream's
/// (siderolabs/go-kubernetes kubernetes/upgrade/checks.go, `upgradeVersionCheck`, at v0.2.36,
/// which siderolabs/talos v1.13.0 pins; v1.10.0 .. v1.12.0 pin earlier releases holding the
/// same entries up to their newest minor).
struct MinorRemovals {
    /// The minor (1.x) that removes them.
    minor: u32,
    /// Common to kube-apiserver, kube-controller-manager and kube-scheduler.
    feature_gates: &'static [&'static str],
    apiserver_flags: &'static [&'static str],
    admission_plugins: &'static [&'static str],
    controller_manager_flags: &'static [&'static str],
    scheduler_flags: &'static [&'static str],
    kubelet_flags: &'static [&'static str],
}

const NONE: &[&str] = &[];

const fn minor(minor: u32) -> MinorRemovals {
    MinorRemovals {
        minor,
        feature_gates: NONE,
        apiserver_flags: NONE,
        admission_plugins: NONE,
        controller_manager_flags: NONE,
        scheduler_flags: NONE,
        kubelet_flags: NONE,
    }
}

#[rustfmt::skip]
const REMOVALS: &[MinorRemovals] = &[
    MinorRemovals {
        apiserver_flags: &["service-account-api-audiences"],
        admission_plugins: &["PodSecurityPolicy"],
        controller_manager_flags: &["deleting-pods-qps", "deleting-pods-burst", "register-retry-count"],
        feature_gates: &["CSIVolumeFSGroupPolicy", "ConfigurableFSGroupPolicy", "PodDisruptionBudget", "SelectorIndex"],
        ..minor(25)
    },
    MinorRemovals {
        apiserver_flags: &["master-service-namespace"],
        feature_gates: &["DynamicKubeletConfig"],
        ..minor(26)
    },
    MinorRemovals {
        controller_manager_flags: &["enable-taint-manager", "pod-eviction-timeout"],
        kubelet_flags: &["container-runtime", "master-service-namespace"],
        feature_gates: &[
            "ExpandCSIVolumes", "ExpandInUsePersistentVolumes", "ExpandPersistentVolumes",
            "ControllerManagerLeaderMigration", "CSIMigration", "CSIInlineVolume",
            "EphemeralContainers", "LocalStorageCapacityIsolation", "NetworkPolicyEndPort",
            "StatefulSetMinReadySeconds", "IdentifyPodOS", "DaemonSetUpdateSurge",
        ],
        ..minor(27)
    },
    MinorRemovals {
        feature_gates: &[
            "AdvancedAuditing", "DelegateFSGroupToCSIDriver", "DevicePlugins",
            "DisableAcceleratorUsageMetrics", "EndpointSliceTerminatingCondition",
            "CSIStorageCapacity", "CSIMigrationGCE", "KubeletCredentialProviders",
            "MixedProtocolLBService", "ServiceInternalTrafficPolicy", "ServiceIPStaticSubrange",
            "WindowsHostProcessContainers",
        ],
        ..minor(28)
    },
    MinorRemovals {
        feature_gates: &[
            "ExpandedDNSConfig", "ExperimentalHostUserNamespaceDefaultingGate",
            "IPTablesOwnershipCleanup", "KubeletPodResources", "KubeletPodResourcesGetAllocatable",
            "MinimizeIPTablesRestore", "ProxyTerminatingEndpoints", "RemoveSelfLink",
        ],
        admission_plugins: &["SecurityContextDeny"],
        ..minor(30)
    },
    MinorRemovals {
        feature_gates: &[
            "APIPriorityAndFairness", "CSINodeExpandSecret", "ConsistentHTTPGetHandlers",
            "DefaultHostNetworkHostPortsInPodTemplates", "ServiceNodePortStaticSubrange",
            "SkipReadOnlyValidationGCE",
        ],
        kubelet_flags: &["keep-terminated-pod-volumes", "iptables-masquerade-bit", "iptables-drop-bit"],
        controller_manager_flags: &[
            "volume-host-cidr-denylist", "volume-host-allow-local-loopback",
            "horizontal-pod-autoscaler-upscale-delay", "horizontal-pod-autoscaler-downscale-delay",
        ],
        ..minor(31)
    },
    MinorRemovals {
        feature_gates: &[
            "AllowServiceLBStatusOnNonLB", "CloudDualStackNodeIPs", "DRAControlPlaneController",
            "HPAContainerMetrics", "KMSv2", "KMSv2KDF", "LegacyServiceAccountTokenCleanUp",
            "MinDomainsInPodTopologySpread", "NewVolumeManagerReconstruction",
            "NodeOutOfServiceVolumeDetach", "ServerSideApply", "ServerSideFieldValidation",
            "StableLoadBalancerNodeSet", "ValidatingAdmissionPolicy",
            "ZeroLimitedNominalConcurrencyShares",
        ],
        ..minor(32)
    },
    MinorRemovals {
        feature_gates: &[
            "AppArmor", "AppArmorFields", "CPUManager", "DisableCloudProviders",
            "DisableKubeletCloudCredentialProviders", "JobPodFailurePolicy",
            "KubeProxyDrainingTerminatingNodes", "PDBUnhealthyPodEvictionPolicy",
            "PersistentVolumeLastPhaseTransitionTime", "VolumeCapacityPriority",
        ],
        apiserver_flags: &["cloud-config"],
        ..minor(33)
    },
    MinorRemovals {
        feature_gates: &["DevicePluginCDIDevices", "LegacySidecarContainers", "PodDisruptionConditions"],
        kubelet_flags: &["cloud-config"],
        ..minor(34)
    },
    MinorRemovals {
        kubelet_flags: &["pod-infra-container-image"],
        feature_gates: &["SizeMemoryBackedVolumes", "UserNamespacesHostNetworkSupport"],
        ..minor(35)
    },
    MinorRemovals {
        feature_gates: &[
            "CSIMigrationPortworx", "HonorPVReclaimPolicy", "InTreePluginPortworxUnregister",
            "WatchFromStorageWithoutResourceVersion",
        ],
        ..minor(36)
    },
];

/// What kind of thing a component still uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RemovedKind {
    Flag,
    FeatureGate,
    AdmissionPlugin,
}

/// One removed flag, feature gate or admission plugin a component on a node still uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RemovedItem {
    pub node: String,
    pub component: String,
    pub kind: RemovedKind,
    pub value: String,
}

impl std::fmt::Display for RemovedItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, shown) = match self.kind {
            RemovedKind::Flag => ("flag", format!("--{}", self.value)),
            RemovedKind::FeatureGate => ("feature gate", self.value.clone()),
            RemovedKind::AdmissionPlugin => ("admission plugin", self.value.clone()),
        };
        write!(f, "{} {} {what} {shown}", self.node, self.component)
    }
}

/// The removals an upgrade from minor `from` to minor `to` crosses (none within a minor).
fn crossed(from: u32, to: u32) -> impl Iterator<Item = &'static MinorRemovals> {
    REMOVALS
        .iter()
        .filter(move |r| r.minor > from && r.minor <= to)
}

/// Whether the upgrade crosses any removal at all.
pub fn crosses_removals(plan: &KubernetesUpgradePlan) -> bool {
    crossed(plan.from.minor, plan.target.minor).next().is_some()
}

/// The removed items `args` (a component's command line) uses, as upstream's
/// `PopulateRemovedCLIFlags`, `PopulateRemovedFeatureGates` and
/// `PopulateRemovedAdmissionPlugins` find them: a flag by its `--name`, gates and plugins in
/// the first `--feature-gates` / `--enable-admission-plugins` flag.
pub fn removed_in_args(
    node: &str,
    component: Component,
    args: &[String],
    from_minor: u32,
    to_minor: u32,
) -> Vec<RemovedItem> {
    let item = |kind, value: &str| RemovedItem {
        node: node.to_string(),
        component: component.as_str().to_string(),
        kind,
        value: value.to_string(),
    };
    let list_in = |prefix: &str| -> Vec<String> {
        args.iter()
            .find(|a| a.starts_with(prefix))
            .map(|a| a.trim_start_matches(prefix).trim_start_matches('='))
            .map(|v| v.split(',').map(str::to_string).collect())
            .unwrap_or_default()
    };
    let gates: Vec<String> = list_in("--feature-gates")
        .into_iter()
        .map(|g| g.split('=').next().unwrap_or("").to_string())
        .collect();
    let plugins = list_in("--enable-admission-plugins");
    let mut found = Vec::new();
    for r in crossed(from_minor, to_minor) {
        let (flags, admission) = match component {
            Component::KubeApiserver => (r.apiserver_flags, r.admission_plugins),
            Component::KubeControllerManager => (r.controller_manager_flags, NONE),
            Component::KubeScheduler => (r.scheduler_flags, NONE),
            Component::Kubelet => (r.kubelet_flags, NONE),
            Component::KubeProxy => (NONE, NONE),
        };
        for plugin in admission.iter().filter(|p| plugins.iter().any(|x| x == *p)) {
            found.push(item(RemovedKind::AdmissionPlugin, plugin));
        }
        // Upstream checks feature gates on the three static pods only.
        if component.is_static_pod() {
            for gate in r
                .feature_gates
                .iter()
                .filter(|g| gates.iter().any(|x| x == *g))
            {
                found.push(item(RemovedKind::FeatureGate, gate));
            }
        }
        for flag in flags.iter().filter(|f| {
            args.iter()
                .any(|a| a.split('=').next() == Some(&format!("--{f}")))
        }) {
            found.push(item(RemovedKind::Flag, flag));
        }
    }
    found
}

/// Every removed item the plan's nodes still use: the static pods of each control plane and
/// every kubelet, read over COSI (`StaticPods`, `KubeletSpecs`, namespace `k8s`) as upstream's
/// `Checks.Run` reads them. Nothing is read when the upgrade crosses no removal.
pub async fn check_removed_flags(
    observer: &ClusterObserver,
    plan: &KubernetesUpgradePlan,
) -> Result<Vec<RemovedItem>, String> {
    if !crosses_removals(plan) {
        return Ok(Vec::new());
    }
    let (from, to) = (plan.from.minor, plan.target.minor);
    let talos = &observer.talos;
    let mut found = Vec::new();
    let components = plan
        .steps
        .iter()
        .filter(|s| s.component.is_static_pod() || s.component == Component::Kubelet);
    for step in components {
        let read = match step.component {
            Component::Kubelet => talos.kubelet_args(&step.address).await,
            c => talos.static_pod_command(&step.address, c.as_str()).await,
        };
        let args = read.map_err(|e| {
            format!(
                "cannot read the {} flags on {}: {e}",
                step.component.as_str(),
                step.node
            )
        })?;
        let args = args.unwrap_or_default();
        found.extend(removed_in_args(&step.node, step.component, &args, from, to));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn finds_flags_gates_and_plugins_the_target_removes() {
        let command = args(&[
            "/usr/local/bin/kube-apiserver",
            "--cloud-config=/etc/cloud.conf",
            "--enable-admission-plugins=NodeRestriction,SecurityContextDeny",
            "--feature-gates=AppArmor=true,Other=false",
        ]);
        let found = removed_in_args("cp-1", Component::KubeApiserver, &command, 32, 33);
        let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            vec![
                "cp-1 kube-apiserver feature gate AppArmor",
                "cp-1 kube-apiserver flag --cloud-config"
            ]
        );
        // 1.29 -> 1.30 removes the admission plugin; nothing within a minor.
        let found = removed_in_args("cp-1", Component::KubeApiserver, &command, 29, 30);
        assert_eq!(found[0].kind, RemovedKind::AdmissionPlugin);
        assert!(removed_in_args("cp-1", Component::KubeApiserver, &command, 33, 33).is_empty());
    }

    #[test]
    fn a_flag_matches_by_whole_name_and_kubelets_skip_gates() {
        let command = args(&["--cloud-config-extra=x", "--feature-gates=AppArmor=true"]);
        assert!(removed_in_args("w-1", Component::Kubelet, &command, 32, 33).is_empty());
        let kubelet = args(&["--cloud-config=/x"]);
        let found = removed_in_args("w-1", Component::Kubelet, &kubelet, 33, 34);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].to_string(), "w-1 kubelet flag --cloud-config");
    }
}
