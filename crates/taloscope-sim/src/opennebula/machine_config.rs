//! Talos machine configs in the OpenNebula sim: the `controlplane.yaml` / `worker.yaml` the sim
//! writes per cluster (the shape `talosctl gen config` writes), and reading a VM's
//! `CONTEXT/USER_DATA` (or an applied config) back into "which cluster, which role, which
//! versions, which CAs" — the sim's own reading of upstream's v1alpha1 schema
//! (siderolabs/talos pkg/machinery/config/types/v1alpha1/v1alpha1_types.go): unknown fields are
//! ignored. Of the other documents (Talos 1.5+ multi-doc) only those that took over a v1alpha1
//! field the sim reads count: from 1.14 `KubeClusterConfig`, `KubeletConfig`,
//! `KubeAPIServerCAConfig` (types/k8s/{cluster,kubelet,apiserver_ca}.go) and
//! `UnattendedInstallConfig` (types/runtime/unattended_install.go), at v1.14.0-rc.1.
use base64::Engine as _;
use serde::Deserialize;

use crate::model::scenario::NodeRole;

/// What a machine config tells the sim about the node it boots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BootsAs {
    pub role: NodeRole,
    pub cluster_name: Option<String>,
    pub endpoint: Option<String>,
    pub hostname: Option<String>,
    pub talos_version: Option<String>,
    pub kubernetes_version: Option<String>,
    /// The CAs and token the config carries (`machine.ca`, `cluster.ca`, `cluster.etcd.ca`,
    /// `machine.token`); a worker's config carries the CA certificates without their keys.
    pub secrets: ConfigSecrets,
    /// Why the Talos the config installs refuses to load it (a document its version does not
    /// know: config_documents.rs); the lab boots the image of the version it installs.
    pub load_error: Option<String>,
}

/// What the sim read from a machine config, for tests that feed it configs made elsewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedConfig {
    pub role: NodeRole,
    pub cluster_name: Option<String>,
    pub endpoint: Option<String>,
    pub talos_version: Option<String>,
    pub kubernetes_version: Option<String>,
}

/// Loads a machine config as a VM of the sim would (plain text, as applied in maintenance
/// mode): what it says, or why the Talos it installs refuses it.
pub fn load_machine_config(text: &str) -> Result<LoadedConfig, String> {
    let boots = read_user_data(text, None)
        .ok_or("not a Talos v1alpha1 machine config (no machine.type)")?;
    if let Some(e) = boots.load_error {
        return Err(e);
    }
    Ok(LoadedConfig {
        role: boots.role,
        cluster_name: boots.cluster_name,
        endpoint: boots.endpoint,
        talos_version: boots.talos_version,
        kubernetes_version: boots.kubernetes_version,
    })
}

/// A certificate and its key, PEM (decoded from the config's base64); either may be empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PemPair {
    pub crt: String,
    pub key: String,
}

/// The secrets a machine config carries that the sim needs to form a cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ConfigSecrets {
    /// `machine.ca`: the Talos OS CA (apid, trustd, talosconfig).
    pub os_ca: PemPair,
    /// `cluster.ca`: the Kubernetes CA.
    pub cluster_ca: PemPair,
    /// `cluster.etcd.ca` (control planes only).
    pub etcd_ca: PemPair,
    /// `machine.token`: what trustd asks of a joining node.
    pub machine_token: String,
}

#[derive(Deserialize)]
struct Config {
    machine: Option<Machine>,
    cluster: Option<Cluster>,
}

#[derive(Deserialize)]
struct Machine {
    #[serde(rename = "type")]
    kind: Option<String>,
    token: Option<String>,
    ca: Option<CaField>,
    network: Option<Network>,
    install: Option<Image>,
    kubelet: Option<Image>,
}

/// `crt` / `key` in base64, as upstream's `x509.PEMEncodedCertificateAndKey` marshals them.
#[derive(Deserialize)]
struct CaField {
    crt: Option<String>,
    key: Option<String>,
}

#[derive(Deserialize)]
struct Etcd {
    ca: Option<CaField>,
}

#[derive(Deserialize)]
struct Network {
    hostname: Option<String>,
}

#[derive(Deserialize)]
struct Image {
    image: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Cluster {
    cluster_name: Option<String>,
    control_plane: Option<ControlPlane>,
    ca: Option<CaField>,
    etcd: Option<Etcd>,
}

fn pem_pair(field: Option<CaField>) -> PemPair {
    let decode = |b64: Option<String>| {
        let b64 = b64.unwrap_or_default();
        base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_default()
    };
    match field {
        Some(f) => PemPair {
            crt: decode(f.crt),
            key: decode(f.key),
        },
        None => PemPair::default(),
    }
}

#[derive(Deserialize)]
struct ControlPlane {
    endpoint: Option<String>,
}

/// Reads `USER_DATA` (base64 when `encoding` says so) as a Talos machine config; `None` when it
/// is not one (no `machine.type` the sim knows).
pub(crate) fn read_user_data(user_data: &str, encoding: Option<&str>) -> Option<BootsAs> {
    let text = if encoding.is_some_and(|e| e.eq_ignore_ascii_case("base64")) {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(user_data.trim())
            .ok()?;
        String::from_utf8(bytes).ok()?
    } else {
        user_data.to_string()
    };
    // Talos 1.5+ configs may carry more documents after `---`; the first is v1alpha1.
    let documents: Vec<&str> = text
        .split("\n---")
        .map(|d| d.trim_start_matches("---"))
        .collect();
    let first = documents.iter().find(|d| d.contains("machine:"))?;
    let config: Config = serde_saphyr::from_str(first).ok()?;
    let moved = MovedFields::read(&documents);
    let machine = config.machine?;
    let role = match machine.kind.as_deref()? {
        "controlplane" | "init" => NodeRole::ControlPlane,
        "worker" | "join" => NodeRole::Worker,
        _ => return None,
    };
    let tag = |image: Option<Image>| image_tag(image.and_then(|i| i.image).as_deref());
    let Cluster {
        cluster_name,
        control_plane,
        ca,
        etcd,
    } = config.cluster.unwrap_or_default();
    let secrets = ConfigSecrets {
        os_ca: pem_pair(machine.ca),
        machine_token: machine.token.unwrap_or_default(),
        cluster_ca: moved.cluster_ca.unwrap_or_else(|| pem_pair(ca)),
        etcd_ca: pem_pair(etcd.and_then(|e| e.ca)),
    };
    let talos_version = tag(machine.install).or(moved.talos_version);
    Some(BootsAs {
        load_error: super::config_documents::check(&text, talos_version.as_deref()).err(),
        talos_version,
        secrets,
        role,
        endpoint: control_plane.and_then(|c| c.endpoint).or(moved.endpoint),
        cluster_name: cluster_name.or(moved.cluster_name),
        hostname: machine.network.and_then(|n| n.hostname),
        kubernetes_version: tag(machine.kubelet).or(moved.kubernetes_version),
    })
}

/// What the documents of Talos 1.14 carry that older configs kept in v1alpha1.
#[derive(Default)]
struct MovedFields {
    cluster_name: Option<String>,
    endpoint: Option<String>,
    talos_version: Option<String>,
    kubernetes_version: Option<String>,
    cluster_ca: Option<PemPair>,
}

/// The fields of those documents the sim reads (PEM text, not base64: types/meta
/// `CertificateAndKey` and `acceptedCAs`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MovedDocument {
    kind: Option<String>,
    cluster_name: Option<String>,
    endpoint: Option<String>,
    image: Option<String>,
    installer: Option<Image>,
    #[serde(rename = "issuingCA")]
    issuing_ca: Option<PemText>,
    #[serde(rename = "acceptedCAs")]
    accepted_cas: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct PemText {
    cert: Option<String>,
    key: Option<String>,
}

impl MovedFields {
    fn read(documents: &[&str]) -> MovedFields {
        let mut out = MovedFields::default();
        for text in documents {
            let Ok(doc) = serde_saphyr::from_str::<MovedDocument>(text) else {
                continue;
            };
            match doc.kind.as_deref() {
                Some("KubeClusterConfig") => {
                    out.cluster_name = doc.cluster_name;
                    out.endpoint = doc.endpoint;
                }
                Some("KubeletConfig") => out.kubernetes_version = image_tag(doc.image.as_deref()),
                Some("UnattendedInstallConfig") => {
                    out.talos_version = image_tag(doc.installer.and_then(|i| i.image).as_deref());
                }
                Some("KubeAPIServerCAConfig") => {
                    out.cluster_ca = match (doc.issuing_ca, doc.accepted_cas) {
                        (Some(issuing), _) => Some(PemPair {
                            crt: issuing.cert.unwrap_or_default(),
                            key: issuing.key.unwrap_or_default(),
                        }),
                        (None, Some(accepted)) => Some(PemPair {
                            crt: accepted.concat(),
                            key: String::new(),
                        }),
                        (None, None) => None,
                    };
                }
                _ => {}
            }
        }
        out
    }
}

/// The `vX.Y.Z` tag of an image reference.
fn image_tag(image: Option<&str>) -> Option<String> {
    image
        .and_then(|i| i.rsplit_once(':').map(|(_, t)| t.to_string()))
        .filter(|t| t.starts_with('v'))
}

/// What a generated config is for.
pub(crate) struct ConfigFor<'a> {
    pub cluster: &'a str,
    pub endpoint: &'a str,
    pub role: NodeRole,
    pub talos_version: &'a str,
    pub kubernetes_version: &'a str,
    pub ca_pem: &'a str,
    /// Stable per cluster, like the secrets bundle `talosctl gen config` draws from.
    pub seed: u64,
}

/// A machine config in the shape `talosctl gen config` writes (secrets are placeholders the
/// sim never checks; the CA is the sim's own, without its key).
pub(crate) fn generate(c: &ConfigFor<'_>) -> String {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let token = format!("{:06x}.{:016x}", c.seed & 0xff_ffff, c.seed.rotate_left(17));
    let secret = b64(&format!("{:016x}{:016x}", c.seed, c.seed.rotate_left(29)));
    let ca = b64(c.ca_pem);
    format!(
        "version: v1alpha1
debug: false
persist: true
machine:
  type: {role}
  token: {token}
  ca:
    crt: {ca}
    key: \"\"
  certSANs: []
  kubelet:
    image: ghcr.io/siderolabs/kubelet:{k8s}
    defaultRuntimeSeccompProfileEnabled: true
    disableManifestsDirectory: true
  network: {{}}
  install:
    disk: /dev/vda
    image: ghcr.io/siderolabs/installer:{talos}
    wipe: false
  features:
    rbac: true
    stableHostname: true
cluster:
  id: {secret}
  secret: {secret}
  controlPlane:
    endpoint: {endpoint}
  clusterName: {cluster}
  network:
    dnsDomain: cluster.local
    podSubnets:
      - 10.244.0.0/16
    serviceSubnets:
      - 10.96.0.0/12
  token: {token}
  ca:
    crt: {ca}
    key: \"\"
  discovery:
    enabled: true
",
        role = c.role.as_str(),
        k8s = c.kubernetes_version,
        talos = c.talos_version,
        endpoint = c.endpoint,
        cluster = c.cluster,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_config_reads_back() {
        let text = generate(&ConfigFor {
            cluster: "prod",
            endpoint: "https://127.10.0.1:6443",
            role: NodeRole::Worker,
            talos_version: "v1.11.3",
            kubernetes_version: "v1.34.1",
            ca_pem: "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n",
            seed: 42,
        });
        let encoded = base64::engine::general_purpose::STANDARD.encode(&text);
        let boots = read_user_data(&encoded, Some("base64")).expect("a Talos config");
        assert_eq!(boots.role, NodeRole::Worker);
        assert_eq!(boots.cluster_name.as_deref(), Some("prod"));
        assert_eq!(boots.endpoint.as_deref(), Some("https://127.10.0.1:6443"));
        assert_eq!(boots.talos_version.as_deref(), Some("v1.11.3"));
        assert_eq!(boots.kubernetes_version.as_deref(), Some("v1.34.1"));
    }

    #[test]
    fn secrets_are_read_and_later_documents_skipped() {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let text = format!(
            "version: v1alpha1\nmachine:\n  type: controlplane\n  token: abc.def\n  ca:\n    crt: {}\n    key: {}\n  unknownField: {{a: 1}}\ncluster:\n  clusterName: lab\n  controlPlane:\n    endpoint: https://127.61.0.1:6443\n  ca:\n    crt: {}\n    key: {}\n  etcd:\n    ca:\n      crt: {}\n      key: \"\"\n---\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: other\n",
            b64("os crt"),
            b64("os key"),
            b64("k8s crt"),
            b64("k8s key"),
            b64("etcd crt"),
        );
        let boots = read_user_data(&text, None).expect("a Talos config");
        assert_eq!(boots.cluster_name.as_deref(), Some("lab"));
        assert_eq!(boots.secrets.os_ca.crt, "os crt");
        assert_eq!(boots.secrets.os_ca.key, "os key");
        assert_eq!(boots.secrets.cluster_ca.key, "k8s key");
        assert_eq!(boots.secrets.etcd_ca.crt, "etcd crt");
        assert_eq!(boots.secrets.etcd_ca.key, "");
        assert_eq!(boots.secrets.machine_token, "abc.def");
        assert_eq!(boots.hostname, None);
    }

    /// Talos 1.14's documents hold what v1alpha1 held before (types/k8s, types/runtime).
    #[test]
    fn a_v1_14_config_reads_from_its_documents() {
        let cp = "version: v1alpha1\nmachine:\n  type: controlplane\n  token: t.k\ncluster:\n  token: b.t\n---\napiVersion: v1alpha1\nkind: UnattendedInstallConfig\ninstaller:\n  image: ghcr.io/siderolabs/installer:v1.14.0\nprovisioning:\n  wipe: false\n---\napiVersion: v1alpha1\nkind: KubeClusterConfig\nclusterName: lab\nendpoint: https://127.62.0.1:6443\n---\napiVersion: v1alpha1\nkind: KubeletConfig\nimage: ghcr.io/siderolabs/kubelet:v1.37.0\nconfig: {}\n---\napiVersion: v1alpha1\nkind: KubeAPIServerCAConfig\nissuingCA:\n  cert: |\n    k8s crt\n  key: |\n    k8s key\n";
        let boots = read_user_data(cp, None).expect("a Talos config");
        assert_eq!(boots.load_error, None);
        assert_eq!(boots.cluster_name.as_deref(), Some("lab"));
        assert_eq!(boots.endpoint.as_deref(), Some("https://127.62.0.1:6443"));
        assert_eq!(boots.talos_version.as_deref(), Some("v1.14.0"));
        assert_eq!(boots.kubernetes_version.as_deref(), Some("v1.37.0"));
        assert_eq!(boots.secrets.cluster_ca.crt, "k8s crt\n");
        assert_eq!(boots.secrets.cluster_ca.key, "k8s key\n");
        let by_v1_13 = cp.replace("installer:v1.14.0", "installer:v1.13.9");
        let refused = read_user_data(&by_v1_13, None).expect("a Talos config");
        assert_eq!(
            refused.load_error.as_deref(),
            Some("\"UnattendedInstallConfig\" \"v1alpha1\": not registered")
        );
    }

    #[test]
    fn other_user_data_is_not_a_talos_config() {
        assert_eq!(read_user_data("#cloud-config\nusers: []\n", None), None);
        assert_eq!(read_user_data("%%%", Some("base64")), None);
        let cp =
            "version: v1alpha1\nmachine:\n  type: controlplane\n  network:\n    hostname: cp-9\n";
        let boots = read_user_data(cp, None).expect("plain text config");
        assert_eq!(boots.role, NodeRole::ControlPlane);
        assert_eq!(boots.hostname.as_deref(), Some("cp-9"));
    }
}
