//! Talos machine configs in the OpenNebula sim: the `controlplane.yaml` / `worker.yaml` the sim
//! writes per cluster (the shape `talosctl gen config` writes), and reading a VM's
//! `CONTEXT/USER_DATA` back into "which cluster, which role, which versions".
use base64::Engine as _;
use serde::Deserialize;

use crate::NodeRole;

/// What a machine config tells the sim about the node it boots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BootsAs {
    pub role: NodeRole,
    pub cluster_name: Option<String>,
    pub endpoint: Option<String>,
    pub hostname: Option<String>,
    pub talos_version: Option<String>,
    pub kubernetes_version: Option<String>,
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
    network: Option<Network>,
    install: Option<Image>,
    kubelet: Option<Image>,
}

#[derive(Deserialize)]
struct Network {
    hostname: Option<String>,
}

#[derive(Deserialize)]
struct Image {
    image: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Cluster {
    cluster_name: Option<String>,
    control_plane: Option<ControlPlane>,
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
    let first = text
        .split("\n---")
        .map(|d| d.trim_start_matches("---"))
        .find(|d| d.contains("machine:"))?;
    let config: Config = serde_saphyr::from_str(first).ok()?;
    let machine = config.machine?;
    let role = match machine.kind.as_deref()? {
        "controlplane" | "init" => NodeRole::ControlPlane,
        "worker" | "join" => NodeRole::Worker,
        _ => return None,
    };
    let tag = |image: Option<Image>| {
        image
            .and_then(|i| i.image)
            .and_then(|i| i.rsplit_once(':').map(|(_, t)| t.to_string()))
            .filter(|t| t.starts_with('v'))
    };
    let cluster = config.cluster;
    Some(BootsAs {
        role,
        endpoint: cluster
            .as_ref()
            .and_then(|c| c.control_plane.as_ref())
            .and_then(|c| c.endpoint.clone()),
        cluster_name: cluster.and_then(|c| c.cluster_name),
        hostname: machine.network.and_then(|n| n.hostname),
        talos_version: tag(machine.install),
        kubernetes_version: tag(machine.kubelet),
    })
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
