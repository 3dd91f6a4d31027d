//! Which machine-config documents a Talos version loads: the kinds its config registry holds
//! (siderolabs/talos pkg/machinery/config/types/**, each `registry.Register` in an `init`, read
//! at v1.9.6, v1.10.9, v1.11.3, v1.12.11, v1.13.9 and v1.14.0-rc.1). Another kind fails the whole load as
//! upstream's decoder fails it.
use serde::Deserialize;

/// Registered by v1.9 (besides v1alpha1 itself).
const SINCE_1_9: &[&str] = &[
    "EventSinkConfig",
    "ExtensionServiceConfig",
    "KmsgLogConfig",
    "KubeSpanEndpointsConfig",
    "NetworkDefaultActionConfig",
    "NetworkRuleConfig",
    "SideroLinkConfig",
    "TrustedRootsConfig",
    "VolumeConfig",
    "WatchdogTimerConfig",
];
const SINCE_1_10: &[&str] = &[
    "EthernetConfig",
    "PCIDriverRebindConfig",
    "UserVolumeConfig",
];
const SINCE_1_11: &[&str] = &[
    "ExistingVolumeConfig",
    "RawVolumeConfig",
    "SwapVolumeConfig",
    "ZswapConfig",
];
/// v1.12 moved network and registry settings into documents of their own.
const SINCE_1_12: &[&str] = &[
    "BondConfig",
    "BridgeConfig",
    "DHCPv4Config",
    "DHCPv6Config",
    "DummyLinkConfig",
    "HCloudVIPConfig",
    "HostnameConfig",
    "Layer2VIPConfig",
    "LinkAliasConfig",
    "LinkConfig",
    "OOMConfig",
    "RegistryAuthConfig",
    "RegistryMirrorConfig",
    "RegistryTLSConfig",
    "ResolverConfig",
    "StaticHostConfig",
    "TimeSyncConfig",
    "VLANConfig",
    "WireguardConfig",
];
const SINCE_1_13: &[&str] = &[
    "BlackholeRouteConfig",
    "EnvironmentConfig",
    "ExternalVolumeConfig",
    "ImageVerificationConfig",
    "KubeSpanConfig",
    "RoutingRuleConfig",
    "TCPProbeConfig",
    "VRFConfig",
];
/// v1.14 moved the Kubernetes, discovery, install, sysctl and kernel-module settings into
/// documents of their own (types/k8s, types/cluster, types/runtime, types/block, types/network).
const SINCE_1_14: &[&str] = &[
    "BGPInstanceConfig",
    "CRIBaseRuntimeSpecConfig",
    "CRICustomizationConfig",
    "ContainerConfig",
    "DiscoveryIdentityConfig",
    "DiscoveryServiceConfig",
    "EtcFileConfig",
    "FilesystemScrubConfig",
    "FilesystemTrimConfig",
    "HTTPProbeConfig",
    "KernelModuleConfig",
    "KubeAPIServerCAConfig",
    "KubeAPIServerConfig",
    "KubeAdmissionControlConfig",
    "KubeAggregatorCAConfig",
    "KubeAuditPolicyConfig",
    "KubeAuthenticationConfig",
    "KubeAuthorizerConfig",
    "KubeClusterConfig",
    "KubeControllerManagerConfig",
    "KubeCoreDNSConfig",
    "KubeCredentialProviderConfig",
    "KubeEtcdEncryptionConfig",
    "KubeExternalManifestConfig",
    "KubeFlannelCNIConfig",
    "KubeInlineManifestConfig",
    "KubeNetworkConfig",
    "KubeNodeConfig",
    "KubePrismConfig",
    "KubeProxyConfig",
    "KubeSchedulerConfig",
    "KubeServiceAccountConfig",
    "KubeStaticPodConfig",
    "KubeTalosAPIAccessConfig",
    "KubeletConfig",
    "LVMLogicalVolumeConfig",
    "LVMVolumeGroupConfig",
    "RAIDArrayConfig",
    "SecurityProfileConfig",
    "SysctlConfig",
    "SysfsConfig",
    "UdevRulesConfig",
    "UnattendedInstallConfig",
    "VethConfig",
];
const BY_MINOR: [(u32, &[&str]); 6] = [
    (9, SINCE_1_9),
    (10, SINCE_1_10),
    (11, SINCE_1_11),
    (12, SINCE_1_12),
    (13, SINCE_1_13),
    (14, SINCE_1_14),
];

/// The keys configloader/internal/decoder/decoder.go `decode` reads of each document.
#[derive(Deserialize)]
struct Head {
    #[serde(rename = "apiVersion")]
    api_version: Option<String>,
    kind: Option<String>,
}

/// The minor of `v1.X.Y` when it is one whose registry the sim read.
fn read_minor(talos: &str) -> Option<u32> {
    let mut parts = talos.strip_prefix('v')?.split('.');
    let (major, minor) = (parts.next()?, parts.next()?.parse::<u32>().ok()?);
    (major == "1" && BY_MINOR.iter().any(|(m, _)| *m == minor)).then_some(minor)
}

fn registered(minor: u32, kind: &str) -> bool {
    BY_MINOR
        .iter()
        .filter(|(m, _)| *m <= minor)
        .any(|(_, kinds)| kinds.contains(&kind))
}

/// Checks every document of a multi-document config as Talos `talos` decodes it: the v1alpha1
/// one (a document with `machine`, `cluster`, `debug` or `persist` at the top), and others by
/// `kind` and `apiVersion` (all `v1alpha1` in these releases) in that version's registry, with
/// upstream's error (internal/registry/registry.go `"%q %q: not registered"`, decoder.go
/// `missing kind`). Versions whose registry the sim did not read are not checked.
pub(crate) fn check(text: &str, talos: Option<&str>) -> Result<(), String> {
    let Some(minor) = talos.and_then(read_minor) else {
        return Ok(());
    };
    for doc in text.split("\n---").map(|d| d.trim_start_matches("---")) {
        let top_level_v1alpha1 = doc.lines().any(|l| {
            ["machine:", "cluster:", "debug:", "persist:"]
                .iter()
                .any(|k| l.starts_with(k))
        });
        let empty = doc
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
        if top_level_v1alpha1 || empty {
            continue;
        }
        let head: Head = serde_saphyr::from_str(doc).map_err(|e| format!("decode error: {e}"))?;
        let kind = head.kind.ok_or("missing kind")?;
        let api = head.api_version.unwrap_or_default();
        if api != "v1alpha1" || !registered(minor, &kind) {
            return Err(format!("{kind:?} {api:?}: not registered"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1ALPHA1: &str = "version: v1alpha1\nmachine:\n  type: controlplane\n";

    #[test]
    fn a_hostname_document_loads_from_v1_12_only() {
        let text =
            format!("{V1ALPHA1}---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: stable\n");
        assert_eq!(
            check(&text, Some("v1.11.3")),
            Err("\"HostnameConfig\" \"v1alpha1\": not registered".into())
        );
        assert_eq!(check(&text, Some("v1.12.0")), Ok(()));
        assert_eq!(check(&text, Some("v1.13.9")), Ok(()));
    }

    #[test]
    fn kinds_arrive_with_their_minor_and_stay() {
        let doc = |kind: &str| format!("{V1ALPHA1}---\napiVersion: v1alpha1\nkind: {kind}\n");
        assert!(check(&doc("UserVolumeConfig"), Some("v1.9.6")).is_err());
        assert!(check(&doc("UserVolumeConfig"), Some("v1.10.0")).is_ok());
        assert!(check(&doc("KubeSpanConfig"), Some("v1.12.11")).is_err());
        assert!(check(&doc("KubeSpanConfig"), Some("v1.13.0")).is_ok());
        assert!(check(&doc("VolumeConfig"), Some("v1.13.0")).is_ok());
        assert!(check(&doc("KubeletConfig"), Some("v1.13.9")).is_err());
        assert!(check(&doc("KubeletConfig"), Some("v1.14.0")).is_ok());
        let other_version = format!("{V1ALPHA1}---\napiVersion: v1alpha2\nkind: VolumeConfig\n");
        assert!(check(&other_version, Some("v1.13.0")).is_err());
        let no_kind = format!("{V1ALPHA1}---\napiVersion: v1alpha1\nname: x\n");
        assert_eq!(check(&no_kind, Some("v1.13.0")), Err("missing kind".into()));
    }

    #[test]
    fn versions_whose_registry_was_not_read_are_not_checked() {
        let text = format!("{V1ALPHA1}---\napiVersion: v1alpha1\nkind: HostnameConfig\n");
        assert_eq!(check(&text, Some("v1.8.4")), Ok(()));
        assert_eq!(check(&text, None), Ok(()));
        assert_eq!(check(V1ALPHA1, Some("v1.9.0")), Ok(()));
    }
}
