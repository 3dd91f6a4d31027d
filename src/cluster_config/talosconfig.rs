//! The talosconfig of a new cluster, as upstream generate writes it (pkg/machinery/config/
//! generate/talosconfig.go, secrets/ca.go `NewAdminCertificateAndKey`, client/config/config.go
//! `NewConfig`): one context named after the cluster, an `os:admin` client certificate
//! (Ed25519) signed by the bundle's OS CA, valid a year.
use base64::Engine as _;
use time::OffsetDateTime;

use super::pki::{self, CertAndKey, PkiError};
use super::secrets::SecretsBundle;
use super::tree::ConfigNode;

/// Upstream `constants.TalosAPIDefaultCertificateValidityDuration`: 365 days.
const CLIENT_CERT_VALIDITY: time::Duration = time::Duration::days(365);
/// Upstream `role.Admin`.
const ADMIN_ROLE: &str = "os:admin";

/// Why a talosconfig could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TalosconfigError {
    #[error("cannot issue the talosconfig's client certificate: {0}")]
    Certificate(#[from] PkiError),
    #[error("cannot write the talosconfig: {0}")]
    Encode(String),
}

/// One talos context's credentials: the CA to trust and the client certificate and key (PEM).
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    pub ca_pem: String,
    pub client: CertAndKey,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientCredentials { <redacted> }")
    }
}

impl ClientCredentials {
    /// A new admin client certificate for the bundle's cluster, valid from `now`.
    pub fn admin(bundle: &SecretsBundle, now: OffsetDateTime) -> Result<Self, PkiError> {
        let client =
            pki::client_certificate(&bundle.certs.os, &[ADMIN_ROLE], now, CLIENT_CERT_VALIDITY)?;
        Ok(ClientCredentials {
            ca_pem: bundle.certs.os.crt_pem.clone(),
            client,
        })
    }

    /// The context entry as talosctl writes it (`endpoints`, `nodes`, base64 `ca`/`crt`/`key`).
    pub(crate) fn context_node(&self, endpoints: &[String], nodes: &[String]) -> ConfigNode {
        let b64 =
            |pem: &str| ConfigNode::str(base64::engine::general_purpose::STANDARD.encode(pem));
        ConfigNode::map()
            .with("endpoints", ConfigNode::strings(endpoints))
            .with_some(
                "nodes",
                (!nodes.is_empty()).then(|| ConfigNode::strings(nodes)),
            )
            .with("ca", b64(&self.ca_pem))
            .with("crt", b64(&self.client.crt_pem))
            .with("key", b64(&self.client.key_pem))
    }
}

/// A whole talosconfig for the new cluster: `context: <cluster>` and that one context.
pub fn generate_talosconfig(
    bundle: &SecretsBundle,
    cluster_name: &str,
    endpoints: &[String],
    nodes: &[String],
) -> Result<String, TalosconfigError> {
    let credentials = ClientCredentials::admin(bundle, OffsetDateTime::now_utc())?;
    let config = ConfigNode::map()
        .with("context", ConfigNode::str(cluster_name))
        .with(
            "contexts",
            ConfigNode::map().with(cluster_name, credentials.context_node(endpoints, nodes)),
        );
    config
        .to_yaml()
        .map_err(|e| TalosconfigError::Encode(e.to_string()))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::cluster_config::test_bundle;

    #[test]
    fn discovery_reads_the_generated_talosconfig() {
        let endpoints = vec!["127.0.0.11".to_string(), "127.0.0.12".to_string()];
        let nodes = vec!["127.0.0.11".to_string()];
        let text = generate_talosconfig(test_bundle(), "lab", &endpoints, &nodes).unwrap();
        let load =
            crate::discovery::load_talosconfig_texts(&[(PathBuf::from("talosconfig"), text)]);
        assert!(load.errors.is_empty(), "{:?}", load.errors);
        assert_eq!(load.current_context.as_deref(), Some("lab"));
        assert_eq!(load.contexts.len(), 1);
        assert_eq!(load.contexts[0].name, "lab");
        assert_eq!(load.contexts[0].endpoints, endpoints);
    }

    #[test]
    fn client_certificate_is_an_ed25519_admin_for_a_year() {
        let now = OffsetDateTime::from_unix_timestamp(1_780_000_000).unwrap();
        let creds = ClientCredentials::admin(test_bundle(), now).unwrap();
        let (label, _) = pki::pem_decode(&creds.client.key_pem, "key").unwrap();
        assert_eq!(label, "ED25519 PRIVATE KEY");
        let (_, der) = pki::pem_decode(&creds.client.crt_pem, "crt").unwrap();
        let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
        let orgs: Vec<_> = cert
            .subject()
            .iter_organization()
            .map(|o| o.as_str().unwrap().to_string())
            .collect();
        assert_eq!(orgs, ["os:admin"]);
        assert_eq!(cert.validity().not_before.timestamp(), 1_780_000_000);
        assert_eq!(
            cert.validity().not_after.timestamp(),
            1_780_000_000 + 365 * 86400
        );
        assert!(!format!("{creds:?}").contains("PRIVATE"));
    }
}
