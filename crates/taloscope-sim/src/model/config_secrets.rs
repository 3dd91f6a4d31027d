//! The secrets a simulated node's machine config carries, where Talos puts them
//! (siderolabs/talos pkg/machinery/config/generate/secrets/bundle.go and
//! pkg/machinery/config/types/v1alpha1/v1alpha1_types.go): derived from the cluster's name so
//! every node of a cluster holds the same values, shaped like Talos's but not usable keys.
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::scenario::NodeRole;

/// One cluster's secrets as its machine configs spell them (base64 where Talos writes base64).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigSecrets {
    /// `machine.token`: the trustd join token, `[a-z0-9]{6}.[a-z0-9]{16}`.
    pub machine_token: String,
    /// `machine.ca.crt` / `machine.ca.key`: the Talos API CA.
    pub os_ca_crt: String,
    pub os_ca_key: String,
    /// `cluster.id` / `cluster.secret`: the discovery service's cluster identity and key.
    pub cluster_id: String,
    pub cluster_secret: String,
    /// `cluster.token`: the bootstrap token.
    pub cluster_token: String,
    /// `cluster.secretboxEncryptionSecret`: encryption at rest of Kubernetes secrets.
    pub secretbox: String,
    /// `cluster.ca`, `cluster.aggregatorCA`, `cluster.etcd.ca` (crt, key each).
    pub kube_ca: (String, String),
    pub aggregator_ca: (String, String),
    pub etcd_ca: (String, String),
    /// `cluster.serviceAccount.key`.
    pub service_account_key: String,
}

/// `n` bytes of SHA-256 output chained from `seed`.
fn derived(seed: &str, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n);
    let mut counter = 0u32;
    while out.len() < n {
        let input = format!("{seed}/{counter}");
        out.extend_from_slice(
            ring::digest::digest(&ring::digest::SHA256, input.as_bytes()).as_ref(),
        );
        counter += 1;
    }
    out.truncate(n);
    out
}

/// A token as Talos's `genToken(6, 16)` shapes it (bundle.go).
fn token(seed: &str) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let bytes = derived(seed, 22);
    let text: String = bytes
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect();
    format!("{}.{}", &text[..6], &text[6..])
}

/// A PEM block with `label` around derived bytes, base64-encoded as the config holds it.
fn pem(seed: &str, label: &str) -> String {
    let body = STANDARD.encode(derived(seed, 48));
    STANDARD.encode(format!(
        "-----BEGIN {label}-----\n{body}\n-----END {label}-----\n"
    ))
}

impl ConfigSecrets {
    /// The secrets of cluster `cluster`.
    pub fn of_cluster(cluster: &str) -> ConfigSecrets {
        let seed = |what: &str| format!("taloscope-sim/{cluster}/{what}");
        let ca = |what: &str, key_label: &str| {
            (
                pem(&seed(&format!("{what}.crt")), "CERTIFICATE"),
                pem(&seed(&format!("{what}.key")), key_label),
            )
        };
        let (os_ca_crt, os_ca_key) = ca("os-ca", "ED25519 PRIVATE KEY");
        ConfigSecrets {
            machine_token: token(&seed("machine-token")),
            os_ca_crt,
            os_ca_key,
            cluster_id: STANDARD.encode(derived(&seed("cluster-id"), 32)),
            cluster_secret: STANDARD.encode(derived(&seed("cluster-secret"), 32)),
            cluster_token: token(&seed("cluster-token")),
            secretbox: STANDARD.encode(derived(&seed("secretbox"), 32)),
            kube_ca: ca("kube-ca", "EC PRIVATE KEY"),
            aggregator_ca: ca("aggregator-ca", "EC PRIVATE KEY"),
            etcd_ca: ca("etcd-ca", "EC PRIVATE KEY"),
            service_account_key: pem(&seed("service-account"), "RSA PRIVATE KEY"),
        }
    }

    /// The `machine` lines holding secrets, at two spaces: a worker gets the CA certificate
    /// only (v1alpha1_validation.go refuses an OS CA key on a worker).
    pub fn machine_lines(&self, role: NodeRole) -> String {
        let key = match role {
            NodeRole::ControlPlane => format!("    key: {}\n", self.os_ca_key),
            NodeRole::Worker => String::new(),
        };
        format!(
            "  token: {}\n  ca:\n    crt: {}\n{key}",
            self.machine_token, self.os_ca_crt
        )
    }

    /// The `cluster` lines holding secrets, at two spaces: the control planes hold the CA keys,
    /// the service-account key and the secretbox secret; workers the Kubernetes CA certificate
    /// (generate/worker.go leaves the rest out).
    pub fn cluster_lines(&self, role: NodeRole) -> String {
        let mut text = format!(
            "  id: {}\n  secret: {}\n  token: {}\n",
            self.cluster_id, self.cluster_secret, self.cluster_token
        );
        match role {
            NodeRole::Worker => {
                text.push_str(&format!("  ca:\n    crt: {}\n", self.kube_ca.0));
            }
            NodeRole::ControlPlane => {
                let pair = |name: &str, indent: &str, (crt, key): &(String, String)| {
                    format!("{indent}{name}:\n{indent}  crt: {crt}\n{indent}  key: {key}\n")
                };
                text.push_str(&format!(
                    "  secretboxEncryptionSecret: {}\n",
                    self.secretbox
                ));
                text.push_str(&pair("ca", "  ", &self.kube_ca));
                text.push_str(&pair("aggregatorCA", "  ", &self.aggregator_ca));
                text.push_str(&format!(
                    "  serviceAccount:\n    key: {}\n",
                    self.service_account_key
                ));
                text.push_str("  etcd:\n");
                text.push_str(&pair("ca", "    ", &self.etcd_ca));
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_clusters_secrets_are_stable_and_another_clusters_differ() {
        let a = ConfigSecrets::of_cluster("prod");
        assert_eq!(a, ConfigSecrets::of_cluster("prod"));
        assert_ne!(
            a.cluster_token,
            ConfigSecrets::of_cluster("lab").cluster_token
        );
        let (head, tail) = a.machine_token.split_once('.').expect("a dot");
        assert_eq!((head.len(), tail.len()), (6, 16));
    }

    #[test]
    fn a_worker_holds_no_ca_key() {
        let s = ConfigSecrets::of_cluster("prod");
        assert!(!s.machine_lines(NodeRole::Worker).contains("key:"));
        assert!(!s.cluster_lines(NodeRole::Worker).contains("key:"));
        assert!(
            s.cluster_lines(NodeRole::ControlPlane)
                .contains("secretboxEncryptionSecret")
        );
    }
}
