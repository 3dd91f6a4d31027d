//! The certificate authorities and keys of a new cluster, in the encodings upstream writes
//! (siderolabs/crypto `x509`: SEC1 "EC PRIVATE KEY", PKCS#8 v1 "ED25519 PRIVATE KEY",
//! PKCS#1 "RSA PRIVATE KEY"), and client certificates signed by one of those CAs.
use base64::Engine as _;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SerialNumber,
};
use ring::rand::SecureRandom as _;
use time::OffsetDateTime;

/// Why key or certificate material could not be made or read.
#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    #[error("cannot generate {what}: {reason}")]
    Generate { what: &'static str, reason: String },
    #[error("{what} is not a valid PEM block: {reason}")]
    Pem { what: String, reason: String },
}

/// A certificate and its private key, both PEM text (the bundle's `crt`/`key`).
#[derive(Clone, PartialEq, Eq)]
pub struct CertAndKey {
    pub crt_pem: String,
    pub key_pem: String,
}

/// The key types upstream uses: Ed25519 for the Talos OS CA and its clients, ECDSA P-256 for
/// the Kubernetes, aggregator and etcd CAs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    Ed25519,
    EcdsaP256,
}

/// Random bytes from the system's generator.
pub fn random_bytes(len: usize) -> Result<Vec<u8>, PkiError> {
    let mut buf = vec![0u8; len];
    ring::rand::SystemRandom::new()
        .fill(&mut buf)
        .map_err(|_| PkiError::Generate {
            what: "random bytes",
            reason: "the system random generator failed".into(),
        })?;
    Ok(buf)
}

/// What a self-signed CA is named: upstream sets Organization for etcd, kubernetes and talos,
/// and CommonName for the aggregator (`front-proxy`).
#[derive(Clone, Copy, Debug)]
pub enum CaSubject {
    Organization(&'static str),
    CommonName(&'static str),
}

/// A self-signed CA valid from `now` for `valid_for` (upstream `NewSelfSignedCertificateAuthority`:
/// CertSign + DigitalSignature, server and client auth, a random 128-bit serial).
pub fn self_signed_ca(
    kind: KeyKind,
    subject: CaSubject,
    now: OffsetDateTime,
    valid_for: time::Duration,
) -> Result<CertAndKey, PkiError> {
    let key = generate_key(kind)?;
    let mut params = base_params(now, valid_for)?;
    let mut dn = DistinguishedName::new();
    match subject {
        CaSubject::Organization(o) => dn.push(DnType::OrganizationName, o),
        CaSubject::CommonName(cn) => dn.push(DnType::CommonName, cn),
    }
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    let cert = params.self_signed(&key).map_err(generate_err("a CA"))?;
    Ok(CertAndKey {
        crt_pem: cert.pem(),
        key_pem: key_pem(kind, &key)?,
    })
}

/// A client certificate (Ed25519 key, client auth only) for the given organizations, signed by
/// `ca` (upstream `NewAdminCertificateAndKey`).
pub fn client_certificate(
    ca: &CertAndKey,
    organizations: &[&str],
    now: OffsetDateTime,
    valid_for: time::Duration,
) -> Result<CertAndKey, PkiError> {
    let issuer = issuer_from(ca)?;
    let key = generate_key(KeyKind::Ed25519)?;
    let mut params = base_params(now, valid_for)?;
    let mut dn = DistinguishedName::new();
    for o in organizations {
        dn.push(DnType::OrganizationName, *o);
    }
    params.distinguished_name = dn;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    params.use_authority_key_identifier_extension = true;
    let cert = params
        .signed_by(&key, &issuer)
        .map_err(generate_err("a client certificate"))?;
    Ok(CertAndKey {
        crt_pem: cert.pem(),
        key_pem: key_pem(KeyKind::Ed25519, &key)?,
    })
}

/// A 4096-bit RSA key, PKCS#1 PEM (upstream `x509.NewRSAKey`, the service-account key of
/// Talos 1.7 and later).
pub fn rsa_key_pem() -> Result<String, PkiError> {
    use rsa::pkcs1::EncodeRsaPrivateKey as _;
    let key =
        rsa::RsaPrivateKey::new(&mut rand_core::OsRng, 4096).map_err(generate_err("an RSA key"))?;
    let der = key.to_pkcs1_der().map_err(generate_err("an RSA key"))?;
    Ok(pem_encode("RSA PRIVATE KEY", der.as_bytes()))
}

/// An ECDSA P-256 key, SEC1 PEM (upstream `x509.NewECDSAKey`).
pub fn ecdsa_key_pem() -> Result<String, PkiError> {
    let key = generate_key(KeyKind::EcdsaP256)?;
    key_pem(KeyKind::EcdsaP256, &key)
}

fn generate_key(kind: KeyKind) -> Result<KeyPair, PkiError> {
    let alg = match kind {
        KeyKind::Ed25519 => &rcgen::PKCS_ED25519,
        KeyKind::EcdsaP256 => &rcgen::PKCS_ECDSA_P256_SHA256,
    };
    KeyPair::generate_for(alg).map_err(generate_err("a key"))
}

fn generate_err<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> PkiError {
    move |e| PkiError::Generate {
        what,
        reason: e.to_string(),
    }
}

fn base_params(
    now: OffsetDateTime,
    valid_for: time::Duration,
) -> Result<CertificateParams, PkiError> {
    let mut params = CertificateParams::default();
    params.not_before = now;
    params.not_after = now + valid_for;
    let mut serial = random_bytes(16)?;
    serial[0] &= 0x7f;
    params.serial_number = Some(SerialNumber::from_slice(&serial));
    Ok(params)
}

/// The key as upstream writes it: rcgen (ring) holds PKCS#8 v2 for Ed25519 and PKCS#8 for
/// ECDSA; Go's `x509.MarshalPKCS8PrivateKey` writes Ed25519 as v1, and ECDSA keys are SEC1.
fn key_pem(kind: KeyKind, key: &KeyPair) -> Result<String, PkiError> {
    let pkcs8 = key.serialized_der();
    let malformed = || PkiError::Generate {
        what: "a key",
        reason: "unexpected PKCS#8 layout".into(),
    };
    let (version_alg_key, _) = der::element(pkcs8, 0x30).ok_or_else(malformed)?;
    let (_version, rest) = der::element(version_alg_key, 0x02).ok_or_else(malformed)?;
    let (alg_raw, rest) = der::raw_element(rest, 0x30).ok_or_else(malformed)?;
    let (octets, _) = der::element(rest, 0x04).ok_or_else(malformed)?;
    match kind {
        KeyKind::Ed25519 => {
            let (octets_raw, _) = der::raw_element(rest, 0x04).ok_or_else(malformed)?;
            let mut body = vec![0x02, 0x01, 0x00];
            body.extend_from_slice(alg_raw);
            body.extend_from_slice(octets_raw);
            let _ = octets;
            Ok(pem_encode("ED25519 PRIVATE KEY", &der::encode(0x30, &body)))
        }
        KeyKind::EcdsaP256 => {
            let (ec, _) = der::element(octets, 0x30).ok_or_else(malformed)?;
            let (_one, rest) = der::element(ec, 0x02).ok_or_else(malformed)?;
            let (private, rest) = der::raw_element(rest, 0x04).ok_or_else(malformed)?;
            // The optional [0] parameters, then the [1] public key.
            let rest = match der::raw_element(rest, 0xa0) {
                Some((_, after)) => after,
                None => rest,
            };
            let (public, _) = der::raw_element(rest, 0xa1).ok_or_else(malformed)?;
            let prime256v1 = [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
            let mut body = vec![0x02, 0x01, 0x01];
            body.extend_from_slice(private);
            body.extend_from_slice(&der::encode(0xa0, &prime256v1));
            body.extend_from_slice(public);
            Ok(pem_encode("EC PRIVATE KEY", &der::encode(0x30, &body)))
        }
    }
}

/// The issuer of certificates signed by `ca`: its key (back to PKCS#8 for rcgen) and its
/// subject, read from the certificate so the issuer name matches byte for byte.
fn issuer_from(ca: &CertAndKey) -> Result<Issuer<'static, KeyPair>, PkiError> {
    let (label, key_der) = pem_decode(&ca.key_pem, "the CA key")?;
    let pkcs8 = match label.as_str() {
        // PKCS#8 v1 under upstream's label: rcgen reads the DER as PKCS#8.
        "ED25519 PRIVATE KEY" | "PRIVATE KEY" => key_der,
        other => {
            return Err(PkiError::Pem {
                what: "the CA key".into(),
                reason: format!("a {other} cannot sign client certificates here (Ed25519 only)"),
            });
        }
    };
    let key = KeyPair::try_from(pkcs8.as_slice()).map_err(|e| PkiError::Pem {
        what: "the CA key".into(),
        reason: e.to_string(),
    })?;
    let (_, crt_der) = pem_decode(&ca.crt_pem, "the CA certificate")?;
    let (_, cert) = x509_parser::parse_x509_certificate(&crt_der).map_err(|e| PkiError::Pem {
        what: "the CA certificate".into(),
        reason: e.to_string(),
    })?;
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    for o in cert.subject().iter_organization() {
        if let Ok(o) = o.as_str() {
            dn.push(DnType::OrganizationName, o);
        }
    }
    for cn in cert.subject().iter_common_name() {
        if let Ok(cn) = cn.as_str() {
            dn.push(DnType::CommonName, cn);
        }
    }
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    Ok(Issuer::new(params, key))
}

/// PEM text as Go's `pem.EncodeToMemory` writes it: 64-character lines, a final newline.
pub fn pem_encode(label: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// The label and DER of the first PEM block of `text`; `what` names it in errors.
pub fn pem_decode(text: &str, what: &str) -> Result<(String, Vec<u8>), PkiError> {
    let err = |reason: &str| PkiError::Pem {
        what: what.to_string(),
        reason: reason.to_string(),
    };
    let begin = text
        .find("-----BEGIN ")
        .ok_or_else(|| err("no BEGIN line"))?;
    let after = &text[begin + "-----BEGIN ".len()..];
    let label_end = after
        .find("-----")
        .ok_or_else(|| err("unterminated BEGIN line"))?;
    let label = after[..label_end].to_string();
    let body_start = &after[label_end + 5..];
    let end_marker = format!("-----END {label}-----");
    let end = body_start
        .find(&end_marker)
        .ok_or_else(|| err("no matching END line"))?;
    let b64: String = body_start[..end]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|_| err("the body is not base64"))?;
    Ok((label, der))
}

/// Just enough DER to re-wrap the keys ring writes.
mod der {
    /// The content of the element with `tag` at the start of `input`, and what follows it.
    pub fn element(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
        let (&t, rest) = input.split_first()?;
        if t != tag {
            return None;
        }
        let (&first, rest) = rest.split_first()?;
        let (len, rest) = match first {
            n if n < 0x80 => (usize::from(n), rest),
            0x81 => (usize::from(*rest.first()?), &rest[1..]),
            0x82 => (
                usize::from(*rest.first()?) << 8 | usize::from(*rest.get(1)?),
                rest.get(2..)?,
            ),
            _ => return None,
        };
        (rest.len() >= len).then(|| rest.split_at(len))
    }

    /// Like [`element`], but the whole element (tag and length too).
    pub fn raw_element(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
        let (_, rest) = element(input, tag)?;
        Some(input.split_at(input.len() - rest.len()))
    }

    pub fn encode(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        match content.len() {
            n if n < 0x80 => out.push(n as u8),
            n if n < 0x100 => out.extend([0x81, n as u8]),
            n => out.extend([0x82, (n >> 8) as u8, n as u8]),
        }
        out.extend_from_slice(content);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(1_780_000_000).unwrap()
    }

    #[test]
    fn ed25519_ca_key_is_pkcs8_v1_under_upstream_label() {
        let ca = self_signed_ca(
            KeyKind::Ed25519,
            CaSubject::Organization("talos"),
            now(),
            time::Duration::days(3650),
        )
        .unwrap();
        let (label, der) = pem_decode(&ca.key_pem, "key").unwrap();
        assert_eq!(label, "ED25519 PRIVATE KEY");
        // SEQUENCE(46) { INTEGER 0, { OID 1.3.101.112 }, OCTET STRING { OCTET STRING(32) } }
        assert_eq!(&der[..16], &hex("302e020100300506032b657004220420")[..]);
        assert_eq!(der.len(), 48);
    }

    #[test]
    fn ecdsa_key_is_sec1_with_the_curve_named() {
        let (label, der) = pem_decode(&ecdsa_key_pem().unwrap(), "key").unwrap();
        assert_eq!(label, "EC PRIVATE KEY");
        let (body, _) = der::element(&der, 0x30).unwrap();
        assert!(body.windows(10).any(|w| w == hex("06082a8648ce3d030107")));
        assert_eq!(der.len(), 121, "SEC1 P-256 with parameters and public key");
    }

    #[test]
    fn ca_certificate_says_what_upstream_says() {
        let ca = self_signed_ca(
            KeyKind::EcdsaP256,
            CaSubject::Organization("kubernetes"),
            now(),
            time::Duration::days(3650),
        )
        .unwrap();
        let (_, der) = pem_decode(&ca.crt_pem, "crt").unwrap();
        let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
        assert!(cert.is_ca());
        let o: Vec<_> = cert.subject().iter_organization().collect();
        assert_eq!(o[0].as_str().unwrap(), "kubernetes");
        assert_eq!(
            cert.validity().not_after.timestamp() - cert.validity().not_before.timestamp(),
            3650 * 86400
        );
    }

    #[test]
    fn client_certificate_is_signed_by_the_ca() {
        let ca = self_signed_ca(
            KeyKind::Ed25519,
            CaSubject::Organization("talos"),
            now(),
            time::Duration::days(3650),
        )
        .unwrap();
        let client =
            client_certificate(&ca, &["os:admin"], now(), time::Duration::days(365)).unwrap();
        let (_, ca_der) = pem_decode(&ca.crt_pem, "ca").unwrap();
        let (_, ca_cert) = x509_parser::parse_x509_certificate(&ca_der).unwrap();
        let (_, der) = pem_decode(&client.crt_pem, "crt").unwrap();
        let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
        assert_eq!(cert.issuer(), ca_cert.subject());
        let ca_public = &ca_cert.public_key().subject_public_key.data;
        ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, ca_public)
            .verify(cert.tbs_certificate.as_ref(), &cert.signature_value.data)
            .expect("signed by the CA's key");
        let o: Vec<_> = cert.subject().iter_organization().collect();
        assert_eq!(o[0].as_str().unwrap(), "os:admin");
        assert!(!cert.is_ca());
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}
