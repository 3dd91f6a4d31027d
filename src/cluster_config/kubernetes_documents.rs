//! The `Kube*` documents of a Talos 1.14+ config, which carry every Kubernetes setting the
//! v1alpha1 document held before (upstream pkg/machinery/config/generate/kubernetes.go at
//! v1.14.0-rc.1; each document's fields in the order of pkg/machinery/config/types/k8s).
use super::generate::{
    APISERVER_IMAGE, CONTROLLER_MANAGER_IMAGE, EXCLUDE_FROM_EXTERNAL_LB, GenerateInput,
    KUBE_PRISM_PORT, KUBELET_IMAGE, PROXY_IMAGE, SCHEDULER_IMAGE, api_server_sans, audit_policy,
    document, kube_network, pod_security_configuration,
};
use super::pki::CertAndKey;
use super::secrets::EncryptionSecret;
use super::tree::ConfigNode;
use super::version_rules::ConfigContract;

/// constants.LabelNodeRoleControlPlane, and the taint effect talosctl gives it.
const CONTROL_PLANE_ROLE: &str = "node-role.kubernetes.io/control-plane";
/// constants.FlannelDefaultBackend / FlannelDefaultBackendPort.
const FLANNEL_BACKEND: &str = "vxlan";
const FLANNEL_PORT: i64 = 4789;

/// `generateKubernetesUniversalConfigs`: what every node of the cluster carries.
pub(super) fn node_documents(input: &GenerateInput, control_plane: bool) -> Vec<ConfigNode> {
    let image = |name: &str| ConfigNode::str(format!("{name}:{}", input.kubernetes));
    let cluster = document("KubeClusterConfig")
        .with("clusterName", ConfigNode::str(&input.cluster_name))
        .with("endpoint", ConfigNode::str(&input.endpoint));
    let mut node = document("KubeNodeConfig").with("nodeIP", ConfigNode::map());
    if control_plane {
        // A Go map: its keys come out sorted.
        node = node
            .with(
                "labels",
                ConfigNode::map()
                    .with(CONTROL_PLANE_ROLE, ConfigNode::str(""))
                    .with(EXCLUDE_FROM_EXTERNAL_LB, ConfigNode::str("")),
            )
            .with(
                "taints",
                ConfigNode::map().with(CONTROL_PLANE_ROLE, ConfigNode::str("NoSchedule")),
            );
    }
    let kubelet = document("KubeletConfig")
        .with("image", image(KUBELET_IMAGE))
        .with("config", ConfigNode::map())
        .with(
            "defaultRuntimeSeccompProfileEnabled",
            ConfigNode::Bool(true),
        );
    let network = kube_network(input, document("KubeNetworkConfig"));
    let k8s_ca = &input.bundle.certs.k8s;
    let ca = if control_plane {
        document("KubeAPIServerCAConfig").with("issuingCA", issuing_ca(k8s_ca))
    } else {
        document("KubeAPIServerCAConfig").with(
            "acceptedCAs",
            ConfigNode::strings(&[k8s_ca.crt_pem.as_str()]),
        )
    };
    let prism = document("KubePrismConfig").with("port", ConfigNode::Int(KUBE_PRISM_PORT));
    vec![cluster, node, kubelet, network, ca, prism]
}

/// `generateKubernetesControlplaneConfigs`: the control plane's own documents.
pub(super) fn control_plane_documents(
    input: &GenerateInput,
    contract: ConfigContract,
    host: &str,
) -> Vec<ConfigNode> {
    let b = &input.bundle;
    let image = |name: &str| ConfigNode::str(format!("{name}:{}", input.kubernetes));
    let s = ConfigNode::str;
    // types/k8s `DefaultAuthenticationConfig`: anonymous access to the health endpoints only.
    let authentication = ConfigNode::map()
        .with(
            "anonymous",
            ConfigNode::map()
                .with(
                    "conditions",
                    ConfigNode::Seq(
                        ["/livez", "/readyz", "/healthz"]
                            .into_iter()
                            .map(|path| ConfigNode::map().with("path", s(path)))
                            .collect(),
                    ),
                )
                .with("enabled", ConfigNode::Bool(true)),
        )
        .with("jwt", ConfigNode::Seq(Vec::new()));
    let authorizer = |name: &str, kind: &str| {
        document("KubeAuthorizerConfig")
            .with("name", ConfigNode::str(name))
            .with("type", ConfigNode::str(kind))
    };
    let sans = api_server_sans(input, contract, host);
    vec![
        document("KubeAggregatorCAConfig").with("issuingCA", issuing_ca(&b.certs.k8s_aggregator)),
        document("KubeAdmissionControlConfig")
            .with("name", s("PodSecurity"))
            .with("configuration", pod_security_configuration()),
        document("KubeAuditPolicyConfig").with("configuration", audit_policy()),
        document("KubeAuthenticationConfig").with("configuration", authentication),
        authorizer("node", "Node"),
        authorizer("rbac", "RBAC"),
        document("KubeEtcdEncryptionConfig").with("config", etcd_encryption(&b.encryption)),
        document("KubeServiceAccountConfig").with(
            "issuer",
            ConfigNode::map()
                .with("privateKey", s(&b.certs.k8s_service_account_key))
                .with("issuerURL", s(&input.endpoint)),
        ),
        document("KubeAPIServerConfig")
            .with("image", image(APISERVER_IMAGE))
            .with_some(
                "certExtraSANs",
                (!sans.is_empty()).then(|| ConfigNode::strings(&sans)),
            ),
        document("KubeControllerManagerConfig").with("image", image(CONTROLLER_MANAGER_IMAGE)),
        document("KubeSchedulerConfig")
            .with("image", image(SCHEDULER_IMAGE))
            .with("config", ConfigNode::map()),
        document("KubeProxyConfig")
            .with("image", image(PROXY_IMAGE))
            .with("config", ConfigNode::map()),
        document("KubeFlannelCNIConfig")
            .with("backendType", s(FLANNEL_BACKEND))
            .with("backendPort", ConfigNode::Int(FLANNEL_PORT)),
        document("KubeCoreDNSConfig").with("enabled", ConfigNode::Bool(true)),
    ]
}

/// A CA with its key, PEM text (types/meta `CertificateAndKey`: `cert`, `key`).
fn issuing_ca(ca: &CertAndKey) -> ConfigNode {
    ConfigNode::map()
        .with("cert", ConfigNode::str(&ca.crt_pem))
        .with("key", ConfigNode::str(&ca.key_pem))
}

/// The kube-apiserver's encryption of Secrets at rest, with the provider names the legacy
/// path gave them (`key2` for secretbox, `key1` for the AES-CBC secret, both written under
/// `secretbox` exactly as kubernetes.go writes them), so a cluster regenerated under the 1.14
/// contract still decrypts what it stored.
fn etcd_encryption(secret: &EncryptionSecret) -> ConfigNode {
    let (name, value) = match secret {
        EncryptionSecret::Secretbox(v) => ("key2", v),
        EncryptionSecret::AesCbc(v) => ("key1", v),
    };
    let key = ConfigNode::map()
        .with("name", ConfigNode::str(name))
        .with("secret", ConfigNode::str(value));
    let provider = ConfigNode::map().with(
        "secretbox",
        ConfigNode::map().with("keys", ConfigNode::Seq(vec![key])),
    );
    ConfigNode::map().with(
        "resources",
        ConfigNode::Seq(vec![
            ConfigNode::map()
                .with("providers", ConfigNode::Seq(vec![provider]))
                .with("resources", ConfigNode::strings(&["secrets"])),
        ]),
    )
}
