//! Mutual TLS material from a talosconfig context: the CA to trust, the client
//! identity (Ed25519, EC or RSA key, checked to be the certificate's), and the roles the client certificate
//! carries in its Subject Organization, so the UI can disable what they forbid.
use thiserror::Error;
use tonic::transport::{Certificate, ClientTlsConfig, Identity};
use x509_parser::prelude::{ASN1Time, FromDer, X509Certificate};

pub use crate::discovery::{ClientCertificate, Role, Roles};
use crate::discovery::{TalosContext, parse_client_certificate};

/// A problem with the certificates or key of one talosconfig context.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum TlsError {
    #[error("context {context:?}: the CA certificate is not valid PEM: {reason}")]
    BadCa { context: String, reason: String },
    #[error("context {context:?}: the client certificate is not valid PEM: {reason}")]
    BadCertificate { context: String, reason: String },
    #[error("context {context:?}: the client key is not a usable PEM private key: {reason}")]
    BadKey { context: String, reason: String },
    #[error(
        "context {context:?}: the client certificate expired at {not_after}; generate a new talosconfig"
    )]
    Expired { context: String, not_after: String },
    #[error(
        "context {context:?}: the client certificate is not valid before {not_before}; check the clock"
    )]
    NotYetValid { context: String, not_before: String },
}

impl TlsError {
    pub fn context(&self) -> &str {
        match self {
            TlsError::BadCa { context, .. }
            | TlsError::BadCertificate { context, .. }
            | TlsError::BadKey { context, .. }
            | TlsError::Expired { context, .. }
            | TlsError::NotYetValid { context, .. } => context,
        }
    }

    /// The message without the context prefix.
    pub fn reason(&self) -> String {
        let full = self.to_string();
        let prefix = format!("context {:?}: ", self.context());
        full.strip_prefix(&prefix).unwrap_or(&full).to_string()
    }
}

/// Talos writes Ed25519 PKCS#8 keys under `ED25519 PRIVATE KEY`; rustls only
/// knows `PRIVATE KEY`. The body is unchanged. EC and RSA labels pass through.
pub fn normalize_key_pem(pem: &str) -> String {
    pem.replace(
        "-----BEGIN ED25519 PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----",
    )
    .replace(
        "-----END ED25519 PRIVATE KEY-----",
        "-----END PRIVATE KEY-----",
    )
}

/// Parses the client certificate: its roles and validity window.
pub fn read_client_certificate(
    context: &str,
    crt_pem: &str,
) -> Result<ClientCertificate, TlsError> {
    parse_client_certificate(crt_pem).map_err(|reason| TlsError::BadCertificate {
        context: context.to_string(),
        reason,
    })
}

/// Checks that a PEM text holds at least one parsable certificate.
fn check_ca(context: &str, ca_pem: &str) -> Result<(), TlsError> {
    let bad = |reason: String| TlsError::BadCa {
        context: context.to_string(),
        reason,
    };
    let (_, pem) =
        x509_parser::pem::parse_x509_pem(ca_pem.as_bytes()).map_err(|e| bad(e.to_string()))?;
    X509Certificate::from_der(&pem.contents).map_err(|e| bad(e.to_string()))?;
    Ok(())
}

/// The key kinds the client can sign the TLS handshake with (ring's). Talos' apid (Go
/// crypto/tls, `RequireAndVerifyClientCert`) accepts any of them; talosctl writes Ed25519.
const SUPPORTED_KEYS: &str = "Ed25519, ECDSA P-256 or P-384, or RSA of 2048 to 8192 bits";

/// Checks the client key: unencrypted, of a kind the client can sign with, and the key of the
/// client certificate `crt_pem` (a mismatch would fail only at the handshake, vaguely).
fn check_key(context: &str, key_pem: &str, crt_pem: &str) -> Result<(), TlsError> {
    let bad = |reason: String| TlsError::BadKey {
        context: context.to_string(),
        reason,
    };
    // PKCS#8 `ENCRYPTED PRIVATE KEY` or an OpenSSL `Proc-Type: 4,ENCRYPTED` header.
    if key_pem.contains("ENCRYPTED") {
        return Err(bad(
            "the client key is encrypted (password-protected), which taloscope does not support; \
             talosconfig keys are stored unencrypted, as talosctl writes them"
                .into(),
        ));
    }
    let mut reader = key_pem.as_bytes();
    let key = match rustls_pemfile::private_key(&mut reader) {
        Ok(Some(key)) => key,
        Ok(None) => {
            return Err(bad(
                "no PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY block".into(),
            ));
        }
        Err(e) => return Err(bad(e.to_string())),
    };
    let signer = rustls::crypto::ring::sign::any_supported_type(&key).map_err(|_| {
        bad(format!(
            "the client key is of a kind taloscope cannot sign with; it supports {SUPPORTED_KEYS} \
             (talosctl writes Ed25519: `talosctl config new` makes a new one)"
        ))
    })?;
    match (signer.public_key(), certificate_public_key(crt_pem)) {
        (Some(spki), Some(in_certificate))
            if public_key_bits(&spki).as_ref() != Some(&in_certificate) =>
        {
            Err(bad(format!(
                "the client key ({}) is not the key of the client certificate; \
                 the talosconfig's crt and key must be one pair",
                key_kind(signer.algorithm())
            )))
        }
        _ => Ok(()),
    }
}

fn key_kind(algorithm: rustls::SignatureAlgorithm) -> &'static str {
    match algorithm {
        rustls::SignatureAlgorithm::ED25519 => "Ed25519",
        rustls::SignatureAlgorithm::ECDSA => "ECDSA",
        rustls::SignatureAlgorithm::RSA => "RSA",
        _ => "another kind",
    }
}

/// The public key bits of a DER SubjectPublicKeyInfo.
fn public_key_bits(spki: &[u8]) -> Option<Vec<u8>> {
    use x509_parser::x509::SubjectPublicKeyInfo;
    let (_, info) = SubjectPublicKeyInfo::from_der(spki).ok()?;
    Some(info.subject_public_key.data.to_vec())
}

/// The public key bits of the first certificate in `crt_pem`.
fn certificate_public_key(crt_pem: &str) -> Option<Vec<u8>> {
    let (_, pem) = x509_parser::pem::parse_x509_pem(crt_pem.as_bytes()).ok()?;
    let (_, cert) = X509Certificate::from_der(&pem.contents).ok()?;
    Some(cert.public_key().subject_public_key.data.to_vec())
}

fn format_time(ts: i64) -> String {
    ASN1Time::from_timestamp(ts)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| format!("{ts} (unix)"))
}

/// Everything the client needs to dial a context: the TLS config and the roles.
#[derive(Debug, Clone)]
pub struct ClientTls {
    pub config: ClientTlsConfig,
    pub certificate: ClientCertificate,
}

/// Builds the tonic TLS config of a context, checking every PEM first so a bad
/// talosconfig is reported by name instead of as a late handshake failure.
pub fn client_tls(ctx: &TalosContext, now: i64) -> Result<ClientTls, TlsError> {
    // No `ca`: talosctl trusts the system roots then (pkg/machinery/client/options.go,
    // tls config without RootCAs), e.g. for endpoints behind a public certificate.
    let system_roots = ctx.ca_pem.trim().is_empty();
    if !system_roots {
        check_ca(&ctx.name, &ctx.ca_pem)?;
    }
    let certificate = read_client_certificate(&ctx.name, &ctx.crt_pem)?;
    if now > certificate.not_after {
        return Err(TlsError::Expired {
            context: ctx.name.clone(),
            not_after: format_time(certificate.not_after),
        });
    }
    if now < certificate.not_before {
        return Err(TlsError::NotYetValid {
            context: ctx.name.clone(),
            not_before: format_time(certificate.not_before),
        });
    }
    let key_pem = normalize_key_pem(&ctx.key_pem);
    check_key(&ctx.name, &key_pem, &ctx.crt_pem)?;
    let roots = if system_roots {
        ClientTlsConfig::new().with_native_roots()
    } else {
        ClientTlsConfig::new().ca_certificate(Certificate::from_pem(&ctx.ca_pem))
    };
    let config = roots.identity(Identity::from_pem(&ctx.crt_pem, key_pem));
    Ok(ClientTls {
        config,
        certificate,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unix_now() -> i64 {
        crate::clock::unix_now() as i64
    }

    fn context(org: &[&str], expired: bool) -> TalosContext {
        crate::discovery::test_files::context_with_roles("lab", org, expired)
    }

    #[test]
    fn reads_roles_from_organization() {
        let ctx = context(&["os:reader"], false);
        let tls = client_tls(&ctx, unix_now()).expect("tls");
        assert_eq!(tls.certificate.roles, Roles(vec![Role::Reader]));
        assert!(!tls.certificate.roles.may_reboot());
        assert!(!tls.certificate.roles.may_mutate());
        let ctx = context(&["os:admin"], false);
        let roles = client_tls(&ctx, unix_now()).expect("tls").certificate.roles;
        assert!(roles.may_upgrade() && roles.may_reboot());
        assert_eq!(roles.to_string(), "os:admin");
        let both = Roles(vec![Role::Reader, Role::parse("os:etcd:backup")]);
        assert!(both.contains(&Role::Other("os:etcd:backup".into())));
        assert!(!both.may_mutate());
        assert_eq!(both.to_string(), "os:reader,os:etcd:backup");
    }

    #[test]
    fn operator_reboots_but_does_not_upgrade() {
        let op = Role::parse("os:operator");
        assert!(op.may_reboot() && op.may_pull_images() && op.may_mutate());
        assert!(!op.may_upgrade() && !op.may_apply_configuration());
        assert!(!op.may_forfeit_etcd_leadership());
    }

    #[test]
    fn expired_certificate_names_the_context() {
        let ctx = context(&["os:admin"], true);
        let err = client_tls(&ctx, unix_now()).expect_err("expired");
        assert!(matches!(err, TlsError::Expired { .. }), "{err}");
        assert!(err.to_string().contains("\"lab\""), "{err}");
    }

    #[test]
    fn unparsable_pem_is_a_typed_error() {
        let mut ctx = context(&["os:admin"], false);
        ctx.crt_pem = "not a certificate".into();
        assert!(matches!(
            client_tls(&ctx, unix_now()),
            Err(TlsError::BadCertificate { .. })
        ));
        let mut ctx = context(&["os:admin"], false);
        ctx.key_pem = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".into();
        assert!(matches!(
            client_tls(&ctx, unix_now()),
            Err(TlsError::BadKey { .. })
        ));
        let mut ctx = context(&["os:admin"], false);
        ctx.ca_pem = "not a CA".into();
        assert!(matches!(
            client_tls(&ctx, unix_now()),
            Err(TlsError::BadCa { .. })
        ));
    }

    /// A P-521 key (openssl ecparam -name secp521r1): Go accepts it, ring cannot sign with it.
    const P521_KEY: &str = "-----BEGIN EC PRIVATE KEY-----\nMIHcAgEBBEIBEjgNprWUSpauXYTcI8H0EkzwFauSoGnNv2+aANtCDknRDI92A2Lg\nJxAxOpIMjEeUfTrHvJSnBf6EQgqdr5LOtcagBwYFK4EEACOhgYkDgYYABAGQunIy\nG7ni+xBduTw1pQENM7q6lpbGGFEh3aTCedfnjQXTtOB3wgt4avkq1i8KN17rK78r\nozZNNDgRM8r0nq6YCwCQPaapdyTlLy11B7w8XusLMqRLJuUlMjMT5fBeBEUcVMdj\nxNQFH+Pr0yajb0kZw1pU6Ndx72CVieFb0+JvRLs3Xg==\n-----END EC PRIVATE KEY-----\n";

    #[test]
    fn ecdsa_keys_work_and_unusable_or_mismatched_keys_say_why() {
        let mut ctx = context(&["os:admin"], false);
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["client".into()]).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "os:admin");
        let cert = params.self_signed(&key).unwrap();
        ctx.crt_pem = cert.pem();
        ctx.key_pem = key.serialize_pem();
        let tls = client_tls(&ctx, unix_now()).expect("an ECDSA pair is used as it is");
        assert!(tls.certificate.roles.may_upgrade());

        // The ECDSA key with another certificate (the Ed25519 one of the fixture).
        let mut mismatched = context(&["os:admin"], false);
        mismatched.key_pem = key.serialize_pem();
        let err = client_tls(&mismatched, unix_now()).unwrap_err().to_string();
        assert!(
            err.starts_with("context \"lab\": ")
                && err.contains("the client key (ECDSA) is not the key of the client certificate"),
            "{err}"
        );

        let mut p521 = context(&["os:admin"], false);
        p521.key_pem = P521_KEY.into();
        let err = client_tls(&p521, unix_now()).unwrap_err().to_string();
        assert!(
            err.starts_with("context \"lab\": ")
                && err.contains(
                    "cannot sign with; it supports Ed25519, ECDSA P-256 or P-384, or RSA"
                ),
            "{err}"
        );
    }

    #[test]
    fn an_empty_ca_trusts_the_system_roots_as_talosctl_does() {
        let mut ctx = context(&["os:admin"], false);
        ctx.ca_pem = String::new();
        assert!(client_tls(&ctx, unix_now()).is_ok());
    }

    #[test]
    fn key_label_is_normalised_both_ways() {
        let pem = "-----BEGIN ED25519 PRIVATE KEY-----\nabc\n-----END ED25519 PRIVATE KEY-----\n";
        assert_eq!(
            normalize_key_pem(pem),
            "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n"
        );
        let ec = "-----BEGIN EC PRIVATE KEY-----\nabc\n-----END EC PRIVATE KEY-----\n";
        assert_eq!(normalize_key_pem(ec), ec);
    }
}
