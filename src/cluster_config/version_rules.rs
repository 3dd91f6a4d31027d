//! Which Talos versions taloscope generates configs for, and what each version's config
//! contains: upstream's `VersionContract` (pkg/machinery/config/contract.go at v1.14.0-rc.1),
//! the switches that `generate` and the secrets bundle read.
use crate::versions::{KubeVersion, Minor, TalosVersion, check_kubernetes_supported};

/// The oldest and newest Talos minors whose `pkg/machinery/config/generate` taloscope follows
/// (read at v1.9.6, v1.10.9, v1.11.3, v1.12.11, v1.13.9 and v1.14.0-rc.1).
pub const OLDEST_GENERATED: Minor = Minor::new(1, 9);
pub const NEWEST_GENERATED: Minor = Minor::new(1, 14);

/// A Talos version taloscope cannot generate configs for, or a Kubernetes version it does not
/// run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnsupportedTalos {
    #[error(
        "taloscope generates machine configs for stable Talos v1.9 to v1.14 releases; {talos} is not one (pick a released version such as v1.11.3)"
    )]
    Talos { talos: String },
    #[error("{0}")]
    Kubernetes(String),
}

/// The generation switches of one Talos minor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigContract {
    minor: Minor,
}

impl ConfigContract {
    /// The contract of a stable Talos version in the supported range. Whether that patch was
    /// released is the caller's question: the built-in table or a registry's listing answers it.
    pub fn for_talos(talos: &TalosVersion) -> Result<ConfigContract, UnsupportedTalos> {
        let minor = talos.minor_key();
        if talos.is_pre_release() || minor < OLDEST_GENERATED || minor > NEWEST_GENERATED {
            return Err(UnsupportedTalos::Talos {
                talos: talos.to_string(),
            });
        }
        Ok(ConfigContract { minor })
    }

    /// The pair must be one the support matrix lists (src/versions).
    pub fn check_kubernetes(
        talos: &TalosVersion,
        kube: &KubeVersion,
    ) -> Result<(), UnsupportedTalos> {
        check_kubernetes_supported(talos, kube)
            .map_err(|e| UnsupportedTalos::Kubernetes(e.to_string()))
    }

    fn greater(self, major: u32, minor: u32) -> bool {
        self.minor > Minor::new(major, minor)
    }

    pub fn secretbox_encryption(self) -> bool {
        self.greater(1, 2)
    }
    pub fn rsa_service_account_key(self) -> bool {
        self.greater(1, 6)
    }
    pub fn stable_hostname(self) -> bool {
        self.greater(1, 1)
    }
    pub fn apid_ext_key_usage_check(self) -> bool {
        self.greater(1, 2)
    }
    pub fn disk_quota_support(self) -> bool {
        self.greater(1, 4)
    }
    pub fn kube_prism(self) -> bool {
        self.greater(1, 5)
    }
    pub fn host_dns(self) -> bool {
        self.greater(1, 6)
    }
    pub fn host_dns_forward_kube_dns_to_host(self) -> bool {
        self.greater(1, 7)
    }
    pub fn exclude_from_external_load_balancer(self) -> bool {
        self.greater(1, 7)
    }
    pub fn cluster_name_for_workers(self) -> bool {
        self.greater(1, 7)
    }
    pub fn multidoc_network_config(self) -> bool {
        self.greater(1, 11)
    }
    pub fn hide_disable_psp(self) -> bool {
        self.greater(1, 11)
    }
    pub fn hide_rbac_and_key_usage(self) -> bool {
        self.greater(1, 11)
    }
    pub fn populate_cluster_sans_from_endpoint(self) -> bool {
        !self.greater(1, 11)
    }
    pub fn grub_use_uki_cmdline(self) -> bool {
        self.greater(1, 11)
    }
    pub fn kubespan_multidoc_config(self) -> bool {
        self.greater(1, 12)
    }
    /// `HostDNSMultidocConfig`: host DNS in a `ResolverConfig` document.
    pub fn host_dns_multidoc_config(self) -> bool {
        self.greater(1, 13)
    }
    /// `DiscoveryServiceMultidocConfig` and `DiscoveryIdentityMultidocConfig`: the discovery
    /// service and the cluster's id and secret in documents of their own.
    pub fn discovery_multidoc_config(self) -> bool {
        self.greater(1, 13)
    }
    /// `UnattendedInstallConfig`: the install disk and image in an `UnattendedInstallConfig`
    /// document instead of `machine.install`.
    pub fn unattended_install_config(self) -> bool {
        self.greater(1, 13)
    }
    /// `MultidocKubernetesConfigSupported`: every Kubernetes setting in `Kube*` documents.
    pub fn multidoc_kubernetes_config(self) -> bool {
        self.greater(1, 13)
    }
    /// `FilesystemTrimEnabledByDefault`: a secure EPHEMERAL `VolumeConfig` and a weekly
    /// `FilesystemTrimConfig`.
    pub fn filesystem_trim_by_default(self) -> bool {
        self.greater(1, 13)
    }
    /// `WorkloadIsolationEnabledByDefault`: a `SecurityProfileConfig` with workload isolation.
    pub fn workload_isolation_by_default(self) -> bool {
        self.greater(1, 13)
    }
    // `MultidocSysctlConfigSupported` and `MultidocKernelModuleConfigSupported` (also > 1.13)
    // move sysctls and kernel modules given to generate; a create passes neither, so its
    // configs are the same either way. `DisableKubernetes` / `DisableEtcd` are options of the
    // experimental k8s-less mode, never set by `talosctl gen config`'s defaults.
}

#[cfg(test)]
mod tests {
    use super::*;

    fn talos(v: &str) -> TalosVersion {
        TalosVersion::parse(v).unwrap()
    }

    #[test]
    fn range_is_stable_1_9_to_1_14() {
        assert!(ConfigContract::for_talos(&talos("v1.9.0")).is_ok());
        assert!(ConfigContract::for_talos(&talos("v1.13.9")).is_ok());
        assert!(ConfigContract::for_talos(&talos("v1.14.0")).is_ok());
        let old = ConfigContract::for_talos(&talos("v1.8.4")).unwrap_err();
        assert!(old.to_string().contains("v1.8.4"), "{old}");
        assert!(ConfigContract::for_talos(&talos("v1.15.0")).is_err());
        assert!(ConfigContract::for_talos(&talos("v1.14.0-rc.1")).is_err());
        assert!(ConfigContract::for_talos(&talos("v1.11.0-beta.1")).is_err());
    }

    #[test]
    fn switches_follow_the_contract() {
        let c11 = ConfigContract::for_talos(&talos("v1.11.3")).unwrap();
        let c12 = ConfigContract::for_talos(&talos("v1.12.0")).unwrap();
        let c13 = ConfigContract::for_talos(&talos("v1.13.0")).unwrap();
        assert!(!c11.multidoc_network_config() && c12.multidoc_network_config());
        assert!(c11.populate_cluster_sans_from_endpoint());
        assert!(!c12.populate_cluster_sans_from_endpoint());
        assert!(!c12.kubespan_multidoc_config() && c13.kubespan_multidoc_config());
        assert!(c11.rsa_service_account_key() && c11.secretbox_encryption());
        let c14 = ConfigContract::for_talos(&talos("v1.14.0")).unwrap();
        for (name, switch) in [
            (
                "host DNS",
                ConfigContract::host_dns_multidoc_config as fn(_) -> bool,
            ),
            ("discovery", ConfigContract::discovery_multidoc_config),
            (
                "unattended install",
                ConfigContract::unattended_install_config,
            ),
            ("kubernetes", ConfigContract::multidoc_kubernetes_config),
            ("trim", ConfigContract::filesystem_trim_by_default),
            ("isolation", ConfigContract::workload_isolation_by_default),
        ] {
            assert!(!switch(c13) && switch(c14), "{name} switches at 1.14");
        }
    }

    #[test]
    fn kubernetes_pair_comes_from_the_matrix() {
        let ok = ConfigContract::check_kubernetes(
            &talos("v1.11.3"),
            &KubeVersion::parse("1.34.1").unwrap(),
        );
        assert!(ok.is_ok());
        let bad = ConfigContract::check_kubernetes(
            &talos("v1.9.0"),
            &KubeVersion::parse("1.34.1").unwrap(),
        );
        assert!(bad.is_err());
    }
}
