//! A talosconfig context's credentials: base64 of PEM text for the CA, the
//! client certificate and its key. Decodes them, rewrites Talos's Ed25519 key
//! label to the standard one, and checks that each PEM really parses.
use std::io::BufReader;

use base64::Engine;

/// What is wrong with one credential field. Never quotes the field's content.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum CredentialError {
    #[error("{field} is not valid base64: {reason}")]
    Base64 { field: &'static str, reason: String },
    #[error("{field} does not decode to text (expected base64 of PEM)")]
    NotText { field: &'static str },
    #[error("{field} holds no PEM CERTIFICATE block")]
    NoCertificate { field: &'static str },
    #[error("{field} is not a valid PEM certificate: {reason}")]
    BadCertificate { field: &'static str, reason: String },
    #[error("{field} holds no PEM private key")]
    NoKey { field: &'static str },
    #[error("{field} is not a usable private key: {reason}")]
    BadKey { field: &'static str, reason: String },
}

/// Talos (siderolabs/crypto) writes PKCS#8 Ed25519 keys under the label
/// `ED25519 PRIVATE KEY`, which rustls does not accept; the body is plain
/// PKCS#8, so the standard `PRIVATE KEY` label is correct. Other labels
/// (`EC PRIVATE KEY`, `RSA PRIVATE KEY`) are left as they are.
pub fn normalize_talos_key_pem(pem: &str) -> String {
    pem.replace(
        "-----BEGIN ED25519 PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----",
    )
    .replace(
        "-----END ED25519 PRIVATE KEY-----",
        "-----END PRIVATE KEY-----",
    )
}

/// Decodes a certificate field (`ca` or `crt`) and checks every certificate in it.
/// An empty field stays empty: contexts using other auth carry no certificates.
pub(crate) fn decode_certificate(
    field: &'static str,
    b64: &str,
) -> Result<String, CredentialError> {
    let pem = decode_text(field, b64)?;
    if pem.is_empty() {
        return Ok(pem);
    }
    let mut reader = BufReader::new(pem.as_bytes());
    let mut found = 0;
    for der in rustls_pemfile::certs(&mut reader) {
        let der = der.map_err(|e| CredentialError::BadCertificate {
            field,
            reason: e.to_string(),
        })?;
        x509_parser::parse_x509_certificate(&der).map_err(|e| CredentialError::BadCertificate {
            field,
            reason: e.to_string(),
        })?;
        found += 1;
    }
    if found == 0 {
        return Err(CredentialError::NoCertificate { field });
    }
    Ok(pem)
}

/// Decodes the `key` field, normalises its label and checks that rustls (ring)
/// can sign with it. An empty field stays empty.
pub(crate) fn decode_key(field: &'static str, b64: &str) -> Result<String, CredentialError> {
    let pem = normalize_talos_key_pem(&decode_text(field, b64)?);
    if pem.is_empty() {
        return Ok(pem);
    }
    let mut reader = BufReader::new(pem.as_bytes());
    let key = rustls_pemfile::private_key(&mut reader)
        .map_err(|e| CredentialError::BadKey {
            field,
            reason: e.to_string(),
        })?
        .ok_or(CredentialError::NoKey { field })?;
    rustls::crypto::ring::sign::any_supported_type(&key).map_err(|e| CredentialError::BadKey {
        field,
        reason: e.to_string(),
    })?;
    Ok(pem)
}

fn decode_text(field: &'static str, b64: &str) -> Result<String, CredentialError> {
    // Talos writes one line; hand-edited files sometimes wrap it.
    let compact: String = b64.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .map_err(|e| CredentialError::Base64 {
            field,
            reason: base64_reason(&e),
        })?;
    String::from_utf8(bytes).map_err(|_| CredentialError::NotText { field })
}

/// base64's own messages quote the offending byte; ours give only where.
fn base64_reason(err: &base64::DecodeError) -> String {
    use base64::DecodeError::*;
    match err {
        InvalidByte(offset, _) => format!("invalid character at offset {offset}"),
        InvalidLength(len) => format!("invalid length {len}"),
        InvalidLastSymbol(offset, _) => format!("invalid last character at offset {offset}"),
        InvalidPadding => "invalid padding".to_owned(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Credentials from tests/fixtures/discovery/c.yaml, context `alpha`:
    /// Ed25519, made once with rcgen, key labelled as Talos labels it.
    pub(crate) fn fixture_credentials() -> (String, String, String) {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/discovery/c.yaml"
        ))
        .unwrap();
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.trim().strip_prefix(&format!("{name}: ")))
                .unwrap()
                .to_string()
        };
        (field("ca"), field("crt"), field("key"))
    }

    fn b64(text: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(text)
    }

    #[test]
    fn talos_ed25519_key_is_accepted_and_relabelled() {
        let (_, _, key) = fixture_credentials();
        let raw = decode_text("key", &key).unwrap();
        assert!(raw.contains("BEGIN ED25519 PRIVATE KEY"));
        let pem = decode_key("key", &key).unwrap();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        assert!(pem.trim_end().ends_with("-----END PRIVATE KEY-----"));
    }

    #[test]
    fn certificates_decode() {
        let (ca, crt, _) = fixture_credentials();
        assert!(
            decode_certificate("ca", &ca)
                .unwrap()
                .contains("BEGIN CERTIFICATE")
        );
        assert!(
            decode_certificate("crt", &crt)
                .unwrap()
                .contains("BEGIN CERTIFICATE")
        );
    }

    #[test]
    fn other_key_labels_are_left_alone() {
        let ec = "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n";
        assert_eq!(normalize_talos_key_pem(ec), ec);
        let rsa = "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n";
        assert_eq!(normalize_talos_key_pem(rsa), rsa);
    }

    #[test]
    fn empty_fields_stay_empty() {
        assert_eq!(decode_certificate("ca", "").unwrap(), "");
        assert_eq!(decode_key("key", "").unwrap(), "");
    }

    #[test]
    fn bad_base64_is_reported_without_content() {
        let err = decode_certificate("ca", "not*base64!").unwrap_err();
        assert!(
            matches!(err, CredentialError::Base64 { field: "ca", .. }),
            "{err}"
        );
        assert!(!err.to_string().contains("not*base64"));
        assert!(
            err.to_string().ends_with("invalid character at offset 3"),
            "{err}"
        );
    }

    #[test]
    fn base64_of_binary_is_not_text() {
        let bin = base64::engine::general_purpose::STANDARD.encode([0xff, 0xfe, 0x00]);
        assert_eq!(
            decode_key("key", &bin).unwrap_err(),
            CredentialError::NotText { field: "key" }
        );
    }

    #[test]
    fn text_without_pem_is_rejected() {
        assert_eq!(
            decode_certificate("crt", &b64("hello")).unwrap_err(),
            CredentialError::NoCertificate { field: "crt" }
        );
        assert_eq!(
            decode_key("key", &b64("hello")).unwrap_err(),
            CredentialError::NoKey { field: "key" }
        );
    }

    #[test]
    fn pem_with_garbage_body_is_rejected() {
        let cert = "-----BEGIN CERTIFICATE-----\nAAAAAAAA\n-----END CERTIFICATE-----\n";
        let err = decode_certificate("ca", &b64(cert)).unwrap_err();
        assert!(
            matches!(err, CredentialError::BadCertificate { .. }),
            "{err}"
        );
        let key =
            "-----BEGIN ED25519 PRIVATE KEY-----\nAAAAAAAA\n-----END ED25519 PRIVATE KEY-----\n";
        let err = decode_key("key", &b64(key)).unwrap_err();
        assert!(matches!(err, CredentialError::BadKey { .. }), "{err}");
    }

    #[test]
    fn a_certificate_is_not_a_key() {
        let (_, crt, _) = fixture_credentials();
        assert_eq!(
            decode_key("key", &crt).unwrap_err(),
            CredentialError::NoKey { field: "key" }
        );
    }
}
