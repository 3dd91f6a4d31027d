//! Secrets in a machine configuration, found by the names Talos gives them and replaced by
//! `<redacted sha256:…>` of their value: equal secrets still compare equal, none is shown.
use crate::cluster_config::ConfigNode;

/// Map keys whose scalar values are secrets in Talos's config documents
/// (siderolabs/talos pkg/machinery/config/types/v1alpha1/v1alpha1_types.go: `machine.token`,
/// `machine.ca.key`, `cluster.token`, `cluster.secret`, `cluster.secretboxEncryptionSecret`,
/// `cluster.aescbcEncryptionSecret`, `cluster.{ca,aggregatorCA,etcd.ca}.key`,
/// `cluster.serviceAccount.key`, registry `auth` (`password`, `auth`, `identityToken`),
/// WireGuard `privateKey`, disk encryption `passphrase`; the typed documents of
/// pkg/machinery/config/types/ use the same names).
const SECRET_KEYS: &[&str] = &[
    "key",
    "token",
    "secret",
    "secretboxEncryptionSecret",
    "aescbcEncryptionSecret",
    "password",
    "auth",
    "identityToken",
    "privateKey",
    "passphrase",
];

/// Hex digits of the value's SHA-256 kept in a redaction: enough to tell values apart.
const DIGEST_HEX: usize = 16;

/// `<redacted sha256:…>` of `value`.
pub fn redaction(value: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, value.as_bytes());
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("<redacted sha256:{}>", &hex[..DIGEST_HEX])
}

fn scalar_text(node: &ConfigNode) -> Option<String> {
    match node {
        ConfigNode::Str(s) => Some(s.clone()),
        ConfigNode::Int(i) => Some(i.to_string()),
        ConfigNode::Float(f) => Some(f.to_string()),
        ConfigNode::Bool(b) => Some(b.to_string()),
        ConfigNode::Null | ConfigNode::Seq(_) | ConfigNode::Map(_) => None,
    }
}

/// Replaces every secret below `node` by its redaction; returns how many it replaced. An
/// empty value holds nothing and stays.
pub fn redact(node: &mut ConfigNode) -> usize {
    let mut count = 0;
    match node {
        ConfigNode::Map(entries) => {
            for (key, value) in entries.iter_mut() {
                let secret = SECRET_KEYS.contains(&key.as_str());
                match scalar_text(value) {
                    Some(text) if secret && !text.is_empty() => {
                        *value = ConfigNode::Str(redaction(&text));
                        count += 1;
                    }
                    Some(_) => {}
                    None => count += redact(value),
                }
            }
        }
        ConfigNode::Seq(items) => {
            for item in items {
                count += redact(item);
            }
        }
        _ => {}
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> ConfigNode {
        ConfigNode::parse_talos_documents(text)
            .expect("parses")
            .remove(0)
    }

    #[test]
    fn every_secret_kind_is_redacted_and_the_rest_is_kept() {
        let mut d = doc(
            "machine:\n  token: abcdef.0123456789abcdef\n  ca:\n    crt: Y3J0\n    key: a2V5\n  registries:\n    config:\n      ghcr.io:\n        auth:\n          username: bot\n          password: hunter2\ncluster:\n  secret: c2VjcmV0\n  secretboxEncryptionSecret: c2I=\n  serviceAccount:\n    key: c2E=\n  etcd:\n    ca:\n      key: ZXRjZA==\n  token: t.t\n",
        );
        assert_eq!(redact(&mut d), 8);
        let yaml = d.to_yaml().expect("yaml");
        for secret in [
            "abcdef.0123456789abcdef",
            "a2V5",
            "hunter2",
            "c2VjcmV0",
            "c2I=",
            "c2E=",
            "ZXRjZA==",
            "t.t",
        ] {
            assert!(!yaml.contains(secret), "{secret} in {yaml}");
        }
        assert!(
            yaml.contains("crt: Y3J0") && yaml.contains("username: bot"),
            "{yaml}"
        );
        assert_eq!(
            d.at("machine.token").and_then(ConfigNode::as_str),
            Some(redaction("abcdef.0123456789abcdef").as_str())
        );
    }

    #[test]
    fn a_redaction_names_the_digest_not_the_value() {
        let r = redaction("hunter2");
        assert!(r.starts_with("<redacted sha256:") && r.ends_with('>'));
        assert_eq!(r.len(), "<redacted sha256:>".len() + DIGEST_HEX);
        assert_ne!(r, redaction("hunter3"));
    }
}
