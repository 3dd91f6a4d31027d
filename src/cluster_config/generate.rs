//! `controlplane.yaml` and `worker.yaml` for a Talos version, as `talosctl gen config` writes
//! them without comments (upstream pkg/machinery/config/generate/{generate,init,controlplane,
//! worker,registry,network,block,security_profile}.go at v1.9.6 … v1.14.0-rc.1; field order
//! from types/*), then the operator's config patches applied.
use base64::Engine as _;

use super::patch::{ConfigPatches, PatchError};
use super::pki::CertAndKey;
use super::secrets::{EncryptionSecret, SecretsBundle};
use super::tree::ConfigNode;
use super::version_rules::{ConfigContract, UnsupportedTalos};
use crate::versions::{KubeVersion, TalosVersion};

/// Upstream constants (pkg/machinery/constants/constants.go).
pub(super) const KUBELET_IMAGE: &str = "ghcr.io/siderolabs/kubelet";
const INSTALLER_IMAGE: &str = "ghcr.io/siderolabs/installer";
pub(super) const APISERVER_IMAGE: &str = "registry.k8s.io/kube-apiserver";
pub(super) const CONTROLLER_MANAGER_IMAGE: &str = "registry.k8s.io/kube-controller-manager";
pub(super) const PROXY_IMAGE: &str = "registry.k8s.io/kube-proxy";
pub(super) const SCHEDULER_IMAGE: &str = "registry.k8s.io/kube-scheduler";
pub(super) const KUBE_PRISM_PORT: i64 = 7445;
pub(super) const EXCLUDE_FROM_EXTERNAL_LB: &str =
    "node.kubernetes.io/exclude-from-external-load-balancers";
/// constants.DefaultDiscoveryServiceEndpoint.
const DISCOVERY_SERVICE: &str = "https://discovery.talos.dev/";
/// talosctl gen config's `--install-disk` default.
pub const DEFAULT_INSTALL_DISK: &str = "/dev/sda";

/// What a cluster's machine configs are made from.
#[derive(Clone, Debug)]
pub struct GenerateInput {
    pub cluster_name: String,
    /// The Kubernetes API endpoint, `https://ADDR:6443`.
    pub endpoint: String,
    pub talos: TalosVersion,
    pub kubernetes: KubeVersion,
    pub bundle: SecretsBundle,
    /// `machine.install.disk`.
    pub install_disk: String,
    /// `machine.install.image`; `None` for `ghcr.io/siderolabs/installer:v<talos>`.
    pub install_image: Option<String>,
    /// Extra SANs of the API server certificate and of every machine's certificate.
    pub additional_sans: Vec<String>,
    /// `--config-patch`, `--config-patch-control-plane`, `--config-patch-worker`, in order.
    pub patches: ConfigPatches,
}

impl GenerateInput {
    /// An input with talosctl's defaults for everything else.
    pub fn new(
        cluster_name: &str,
        endpoint: &str,
        talos: TalosVersion,
        kubernetes: KubeVersion,
        bundle: SecretsBundle,
    ) -> GenerateInput {
        GenerateInput {
            cluster_name: cluster_name.to_string(),
            endpoint: endpoint.to_string(),
            talos,
            kubernetes,
            bundle,
            install_disk: DEFAULT_INSTALL_DISK.to_string(),
            install_image: None,
            additional_sans: Vec::new(),
            patches: ConfigPatches::default(),
        }
    }

    fn installer_image(&self) -> String {
        self.install_image
            .clone()
            .unwrap_or_else(|| format!("{INSTALLER_IMAGE}:{}", self.talos))
    }
}

/// Why configs could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error(transparent)]
    Version(#[from] UnsupportedTalos),
    #[error("cluster name {0:?} is not usable: {1}")]
    ClusterName(String, &'static str),
    #[error("endpoint {0:?} is not usable: {1} (expected https://ADDRESS:6443)")]
    Endpoint(String, &'static str),
    #[error(transparent)]
    Patch(#[from] PatchError),
    #[error("cannot write the {role} config: {reason}")]
    Encode { role: &'static str, reason: String },
}

/// The two machine configs, YAML (multi-document where the version appends documents).
#[derive(Clone, PartialEq, Eq)]
pub struct MachineConfigs {
    pub controlplane: String,
    pub worker: String,
}

impl std::fmt::Debug for MachineConfigs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MachineConfigs { <redacted: they hold the cluster's keys> }")
    }
}

/// Which machine a config is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    ControlPlane,
    Worker,
}

impl MachineConfigs {
    pub fn generate(input: &GenerateInput) -> Result<MachineConfigs, GenerateError> {
        let contract = ConfigContract::for_talos(&input.talos)?;
        ConfigContract::check_kubernetes(&input.talos, &input.kubernetes)?;
        check_cluster_name(&input.cluster_name)?;
        let host = endpoint_host(&input.endpoint)?;
        let render = |role: Role| -> Result<String, GenerateError> {
            let mut documents = documents(input, contract, role, &host);
            input.patches.apply(&mut documents, role.patch_target())?;
            encode(&documents).map_err(|reason| GenerateError::Encode {
                role: role.name(),
                reason,
            })
        };
        Ok(MachineConfigs {
            controlplane: render(Role::ControlPlane)?,
            worker: render(Role::Worker)?,
        })
    }
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::ControlPlane => "controlplane",
            Role::Worker => "worker",
        }
    }
    fn patch_target(self) -> super::patch::PatchTarget {
        match self {
            Role::ControlPlane => super::patch::PatchTarget::ControlPlane,
            Role::Worker => super::patch::PatchTarget::Worker,
        }
    }
}

/// Upstream leaves the name to Kubernetes; taloscope names contexts and files after it, so it
/// must be a plain DNS-ish label.
fn check_cluster_name(name: &str) -> Result<(), GenerateError> {
    let bad = |why| Err(GenerateError::ClusterName(name.to_string(), why));
    if name.is_empty() || name.len() > 63 {
        return bad("it must be 1 to 63 characters");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        || name.starts_with('-')
        || name.ends_with('-')
    {
        return bad("use lower-case letters, digits and '-' (not first or last)");
    }
    Ok(())
}

/// The host of `https://HOST:PORT` (IPv6 without brackets), as Go's `url.Hostname()`.
fn endpoint_host(endpoint: &str) -> Result<String, GenerateError> {
    let bad = |why| Err(GenerateError::Endpoint(endpoint.to_string(), why));
    let Some(rest) = endpoint.strip_prefix("https://") else {
        return bad("it must start with https://");
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        authority.split(':').next().unwrap_or_default()
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return bad("it has no host");
    }
    Ok(host.to_string())
}

/// The documents of one machine's config, before patches.
fn documents(
    input: &GenerateInput,
    contract: ConfigContract,
    role: Role,
    host: &str,
) -> Vec<ConfigNode> {
    let config = ConfigNode::map()
        .with("version", ConfigNode::str("v1alpha1"))
        .with("debug", ConfigNode::Bool(false))
        .with("persist", ConfigNode::Bool(true))
        .with("machine", machine(input, contract, role))
        .with("cluster", cluster(input, contract, role, host));
    let mut docs = vec![config];
    if contract.discovery_multidoc_config() {
        docs.push(
            document("DiscoveryServiceConfig")
                .with("name", ConfigNode::str("default"))
                .with("endpoint", ConfigNode::str(DISCOVERY_SERVICE)),
        );
        docs.push(
            document("DiscoveryIdentityConfig")
                .with("clusterID", ConfigNode::str(&input.bundle.cluster.id))
                .with(
                    "clusterSecret",
                    ConfigNode::str(&input.bundle.cluster.secret),
                ),
        );
    }
    if contract.unattended_install_config() {
        docs.push(unattended_install(input));
    }
    if contract.host_dns() && contract.host_dns_multidoc_config() {
        docs.push(document("ResolverConfig").with("hostDNS", host_dns(contract)));
    }
    if contract.filesystem_trim_by_default() {
        // generate/block.go: EPHEMERAL mounted secure, trimmed every
        // constants.DefaultFilesystemTrimInterval (a week, Go's `168h0m0s`).
        docs.push(
            document("VolumeConfig")
                .with("name", ConfigNode::str("EPHEMERAL"))
                .with(
                    "mount",
                    ConfigNode::map().with("secure", ConfigNode::Bool(true)),
                ),
        );
        docs.push(document("FilesystemTrimConfig").with("interval", ConfigNode::str("168h0m0s")));
    }
    if contract.workload_isolation_by_default() {
        docs.push(
            document("SecurityProfileConfig").with("workloadIsolation", ConfigNode::Bool(true)),
        );
    }
    if contract.multidoc_network_config() {
        docs.push(document("HostnameConfig").with("auto", ConfigNode::str("stable")));
    }
    if contract.multidoc_kubernetes_config() {
        let control_plane = role == Role::ControlPlane;
        docs.extend(super::kubernetes_documents::node_documents(
            input,
            control_plane,
        ));
        if control_plane {
            docs.extend(super::kubernetes_documents::control_plane_documents(
                input, contract, host,
            ));
        }
    }
    docs
}

/// The head of a document of `kind` (every kind taloscope writes is at `v1alpha1`).
pub(super) fn document(kind: &str) -> ConfigNode {
    ConfigNode::map()
        .with("apiVersion", ConfigNode::str("v1alpha1"))
        .with("kind", ConfigNode::str(kind))
}

/// init.go `unattendedInstallConfig`: the installer image and the install disk as a CEL
/// selector on the disk's device path (`disk.dev_path == "<disk>"`, Go's `%q`), never wiped
/// (types/runtime/unattended_install.go field order).
fn unattended_install(input: &GenerateInput) -> ConfigNode {
    let quoted = format!("{:?}", input.install_disk);
    document("UnattendedInstallConfig")
        .with(
            "installer",
            ConfigNode::map().with("image", ConfigNode::str(input.installer_image())),
        )
        .with(
            "provisioning",
            ConfigNode::map()
                .with(
                    "diskSelector",
                    ConfigNode::map().with(
                        "match",
                        ConfigNode::str(format!("disk.dev_path == {quoted}")),
                    ),
                )
                .with("wipe", ConfigNode::Bool(false)),
        )
}

fn machine(input: &GenerateInput, contract: ConfigContract, role: Role) -> ConfigNode {
    let b = &input.bundle;
    let ca = match role {
        Role::ControlPlane => pem_pair(&b.certs.os),
        Role::Worker => crt_only(&b.certs.os),
    };
    let kubelet = ConfigNode::map()
        .with(
            "image",
            ConfigNode::str(format!("{KUBELET_IMAGE}:{}", input.kubernetes)),
        )
        .with(
            "defaultRuntimeSeccompProfileEnabled",
            ConfigNode::Bool(true),
        )
        .with("disableManifestsDirectory", ConfigNode::Bool(true));
    let install = ConfigNode::map()
        .with("disk", ConfigNode::str(&input.install_disk))
        .with("image", ConfigNode::str(input.installer_image()))
        .with("wipe", ConfigNode::Bool(false))
        .with_some(
            "grubUseUKICmdline",
            contract
                .grub_use_uki_cmdline()
                .then_some(ConfigNode::Bool(true)),
        );
    let legacy_kubernetes = !contract.multidoc_kubernetes_config();
    let mut machine = ConfigNode::map()
        .with("type", ConfigNode::str(role.name()))
        .with("token", ConfigNode::str(&b.trustd_token))
        .with("ca", ca)
        .with("certSANs", ConfigNode::strings(&input.additional_sans))
        .with_some("kubelet", legacy_kubernetes.then_some(kubelet))
        .with_some(
            "network",
            (!contract.kubespan_multidoc_config()).then(ConfigNode::map),
        )
        .with_some(
            "install",
            (!contract.unattended_install_config()).then_some(install),
        )
        .with_some(
            "registries",
            (!contract.multidoc_network_config()).then(ConfigNode::map),
        )
        .with("features", features(contract));
    if role == Role::ControlPlane
        && legacy_kubernetes
        && contract.exclude_from_external_load_balancer()
    {
        machine.set(
            "nodeLabels",
            ConfigNode::map().with(EXCLUDE_FROM_EXTERNAL_LB, ConfigNode::str("")),
        );
    }
    machine
}

fn features(contract: ConfigContract) -> ConfigNode {
    let yes = || Some(ConfigNode::Bool(true));
    let legacy_rbac = !contract.hide_rbac_and_key_usage();
    ConfigNode::map()
        .with_some("rbac", if legacy_rbac { yes() } else { None })
        .with_some(
            "stableHostname",
            if contract.stable_hostname() && !contract.multidoc_network_config() {
                yes()
            } else {
                None
            },
        )
        .with_some(
            "apidCheckExtKeyUsage",
            if legacy_rbac && contract.apid_ext_key_usage_check() {
                yes()
            } else {
                None
            },
        )
        .with_some(
            "diskQuotaSupport",
            if contract.disk_quota_support() {
                yes()
            } else {
                None
            },
        )
        .with_some(
            "kubePrism",
            (contract.kube_prism() && !contract.multidoc_kubernetes_config()).then(|| {
                ConfigNode::map()
                    .with("enabled", ConfigNode::Bool(true))
                    .with("port", ConfigNode::Int(KUBE_PRISM_PORT))
            }),
        )
        .with_some(
            "hostDNS",
            (contract.host_dns() && !contract.host_dns_multidoc_config())
                .then(|| host_dns(contract)),
        )
}

/// Host DNS, on, forwarding the cluster's DNS to the host from 1.8 (`machine.features.hostDNS`
/// up to 1.13, a `ResolverConfig` document's `hostDNS` from 1.14).
fn host_dns(contract: ConfigContract) -> ConfigNode {
    ConfigNode::map()
        .with("enabled", ConfigNode::Bool(true))
        .with_some(
            "forwardKubeDNSToHost",
            contract
                .host_dns_forward_kube_dns_to_host()
                .then_some(ConfigNode::Bool(true)),
        )
}

/// The cluster's DNS domain and pod and service nets (`cluster.network` up to 1.13, a
/// `KubeNetworkConfig` document from 1.14).
pub(super) fn kube_network(input: &GenerateInput, into: ConfigNode) -> ConfigNode {
    into.with("dnsDomain", ConfigNode::str("cluster.local"))
        .with(
            "podSubnets",
            ConfigNode::strings(&[pod_net(&input.endpoint)]),
        )
        .with(
            "serviceSubnets",
            ConfigNode::strings(&[service_net(&input.endpoint)]),
        )
}

fn cluster(input: &GenerateInput, contract: ConfigContract, role: Role, host: &str) -> ConfigNode {
    let b = &input.bundle;
    let legacy_identity = !contract.discovery_multidoc_config();
    let legacy_kubernetes = !contract.multidoc_kubernetes_config();
    let control_plane = role == Role::ControlPlane;
    let network = kube_network(input, ConfigNode::map());
    let discovery = ConfigNode::map()
        .with("enabled", ConfigNode::Bool(true))
        .with(
            "registries",
            ConfigNode::map()
                .with(
                    "kubernetes",
                    ConfigNode::map().with("disabled", ConfigNode::Bool(true)),
                )
                .with("service", ConfigNode::map()),
        );
    let cluster_name = if control_plane {
        legacy_kubernetes
    } else {
        legacy_kubernetes && contract.cluster_name_for_workers()
    };
    let legacy = |keep: bool, node: ConfigNode| keep.then_some(node);
    let base = ConfigNode::map()
        .with_some(
            "id",
            legacy(legacy_identity, ConfigNode::str(&b.cluster.id)),
        )
        .with_some(
            "secret",
            legacy(legacy_identity, ConfigNode::str(&b.cluster.secret)),
        )
        .with_some(
            "controlPlane",
            legacy(
                legacy_kubernetes,
                ConfigNode::map().with("endpoint", ConfigNode::str(&input.endpoint)),
            ),
        )
        .with_some(
            "clusterName",
            legacy(cluster_name, ConfigNode::str(&input.cluster_name)),
        )
        .with_some("network", legacy(legacy_kubernetes, network))
        .with("token", ConfigNode::str(&b.bootstrap_token));
    if !control_plane {
        return base
            .with_some("ca", legacy(legacy_kubernetes, crt_only(&b.certs.k8s)))
            .with_some("discovery", legacy(legacy_identity, discovery));
    }
    let etcd = ConfigNode::map().with("ca", pem_pair(&b.certs.etcd));
    if !legacy_kubernetes {
        return base.with("etcd", etcd);
    }
    let (encryption_key, encryption) = match &b.encryption {
        EncryptionSecret::Secretbox(s) => ("secretboxEncryptionSecret", s),
        EncryptionSecret::AesCbc(s) => ("aescbcEncryptionSecret", s),
    };
    let image = |name: &str| ConfigNode::str(format!("{name}:{}", input.kubernetes));
    base.with(encryption_key, ConfigNode::str(encryption))
        .with("ca", pem_pair(&b.certs.k8s))
        .with("aggregatorCA", pem_pair(&b.certs.k8s_aggregator))
        .with(
            "serviceAccount",
            ConfigNode::map().with("key", base64_node(&b.certs.k8s_service_account_key)),
        )
        .with("apiServer", api_server(input, contract, host))
        .with(
            "controllerManager",
            ConfigNode::map().with("image", image(CONTROLLER_MANAGER_IMAGE)),
        )
        .with("proxy", ConfigNode::map().with("image", image(PROXY_IMAGE)))
        .with(
            "scheduler",
            ConfigNode::map().with("image", image(SCHEDULER_IMAGE)),
        )
        .with_some("discovery", legacy(legacy_identity, discovery))
        .with("etcd", etcd)
        .with("extraManifests", ConfigNode::Seq(Vec::new()))
        .with("inlineManifests", ConfigNode::Seq(Vec::new()))
}

/// The API server's extra SANs: the endpoint's host up to 1.11, then the operator's.
pub(super) fn api_server_sans(
    input: &GenerateInput,
    contract: ConfigContract,
    host: &str,
) -> Vec<String> {
    let mut sans = Vec::new();
    if contract.populate_cluster_sans_from_endpoint() {
        sans.push(host.to_string());
    }
    sans.extend(input.additional_sans.iter().cloned());
    sans
}

fn api_server(input: &GenerateInput, contract: ConfigContract, host: &str) -> ConfigNode {
    let sans = api_server_sans(input, contract, host);
    let pod_security = ConfigNode::map()
        .with("name", ConfigNode::str("PodSecurity"))
        .with("configuration", pod_security_configuration());
    ConfigNode::map()
        .with(
            "image",
            ConfigNode::str(format!("{APISERVER_IMAGE}:{}", input.kubernetes)),
        )
        .with_some(
            "certSANs",
            (!sans.is_empty()).then(|| ConfigNode::strings(&sans)),
        )
        .with_some(
            "disablePodSecurityPolicy",
            (!contract.hide_disable_psp()).then_some(ConfigNode::Bool(true)),
        )
        .with("admissionControl", ConfigNode::Seq(vec![pod_security]))
        .with("auditPolicy", audit_policy())
}

/// The PodSecurity admission plugin's defaults (pkg/machinery/config/types/k8s
/// `DefaultPodSecurityAdmissionControlConfig`). Upstream writes it as a Go map, so its keys
/// come out sorted.
pub(super) fn pod_security_configuration() -> ConfigNode {
    let s = ConfigNode::str;
    ConfigNode::map()
        .with(
            "apiVersion",
            s("pod-security.admission.config.k8s.io/v1alpha1"),
        )
        .with(
            "defaults",
            ConfigNode::map()
                .with("audit", s("restricted"))
                .with("audit-version", s("latest"))
                .with("enforce", s("baseline"))
                .with("enforce-version", s("latest"))
                .with("warn", s("restricted"))
                .with("warn-version", s("latest")),
        )
        .with(
            "exemptions",
            ConfigNode::map()
                .with("namespaces", ConfigNode::strings(&["kube-system"]))
                .with("runtimeClasses", ConfigNode::Seq(Vec::new()))
                .with("usernames", ConfigNode::Seq(Vec::new())),
        )
        .with("kind", s("PodSecurityConfiguration"))
}

/// The API server's default audit policy (types/v1alpha1 `APIServerDefaultAuditPolicy`).
pub(super) fn audit_policy() -> ConfigNode {
    let s = ConfigNode::str;
    ConfigNode::map()
        .with("apiVersion", s("audit.k8s.io/v1"))
        .with("kind", s("Policy"))
        .with(
            "rules",
            ConfigNode::Seq(vec![ConfigNode::map().with("level", s("Metadata"))]),
        )
}

/// Upstream picks IPv6 nets only when the endpoint string itself is an IPv6 address.
fn pod_net(endpoint: &str) -> &'static str {
    if is_ipv6(endpoint) {
        "fc00:db8:10::/56"
    } else {
        "10.244.0.0/16"
    }
}

fn service_net(endpoint: &str) -> &'static str {
    if is_ipv6(endpoint) {
        "fc00:db8:20::/112"
    } else {
        "10.96.0.0/12"
    }
}

fn is_ipv6(endpoint: &str) -> bool {
    endpoint.parse::<std::net::Ipv6Addr>().is_ok()
}

fn base64_node(pem: &str) -> ConfigNode {
    ConfigNode::str(base64::engine::general_purpose::STANDARD.encode(pem.as_bytes()))
}

fn pem_pair(c: &CertAndKey) -> ConfigNode {
    ConfigNode::map()
        .with("crt", base64_node(&c.crt_pem))
        .with("key", base64_node(&c.key_pem))
}

/// A CA without its key (workers): upstream marshals the empty key as `key: ""`.
fn crt_only(c: &CertAndKey) -> ConfigNode {
    ConfigNode::map()
        .with("crt", base64_node(&c.crt_pem))
        .with("key", ConfigNode::str(""))
}

/// Documents joined by `---`, as upstream's container encoder writes them.
fn encode(documents: &[ConfigNode]) -> Result<String, String> {
    let mut out = String::new();
    for (i, doc) in documents.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&doc.to_yaml().map_err(|e| e.to_string())?);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "generate_tests.rs"]
mod tests;
