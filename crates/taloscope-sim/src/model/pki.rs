//! The simulated fleet's certificates: an Ed25519 CA, per-node server certificates (IP and DNS
//! SANs, built lazily on a node's first connection so 5,000 nodes start fast), admin and reader
//! client certificates, the wrong-CA, expired and expiring faults, and the talosconfig written
//! for them.
use std::fmt::Write as _;
use std::io::Write as _;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, PKCS_ED25519, SanType, date_time_ymd,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ServerSessionMemoryCache, WebPkiClientVerifier};

use super::scenario::NodeSpec;
use crate::model::error::SimError;

/// The sim's CA and what it takes to issue and verify certificates.
pub(crate) struct Pki {
    ca_pem: String,
    issuer: Issuer<'static, KeyPair>,
    /// Signs the server certificates of nodes with the `wrong_ca_cert` fault.
    wrong_issuer: Issuer<'static, KeyPair>,
    client_verifier: Arc<dyn rustls::server::danger::ClientCertVerifier>,
    sessions: Arc<ServerSessionMemoryCache>,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

fn pki_err(what: &str, e: impl std::fmt::Display) -> SimError {
    SimError::Pki(format!("{what}: {e}"))
}

fn new_ca(common_name: &str) -> Result<(CertificateParams, KeyPair, String), SimError> {
    let key = KeyPair::generate_for(&PKCS_ED25519).map_err(|e| pki_err("CA key", e))?;
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(|e| pki_err("CA", e))?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::OrganizationName, "talos");
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.not_before = date_time_ymd(2025, 1, 1);
    params.not_after = date_time_ymd(2035, 1, 1);
    let pem = params
        .self_signed(&key)
        .map_err(|e| pki_err("CA certificate", e))?
        .pem();
    Ok((params, key, pem))
}

/// Talos (Go's `x509.MarshalPKCS8PrivateKey`) writes Ed25519 keys as PKCS#8
/// v1 (seed only) labelled `ED25519 PRIVATE KEY`; the sim writes them the same
/// way. rcgen/ring produce v2 (with the public key), which OpenSSL-based
/// clients refuse, so the seed is re-wrapped.
fn talos_key_pem(key: &KeyPair) -> String {
    use base64::Engine;
    let der = ed25519_pkcs8_v1(&key.serialize_der()).unwrap_or_else(|| key.serialize_der());
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut pem = String::from("-----BEGIN ED25519 PRIVATE KEY-----\n");
    for line in body.as_bytes().chunks(64) {
        pem.push_str(&String::from_utf8_lossy(line));
        pem.push('\n');
    }
    pem.push_str("-----END ED25519 PRIVATE KEY-----\n");
    pem
}

/// `SEQUENCE { INTEGER 0, SEQUENCE { OID 1.3.101.112 }, OCTET STRING { OCTET STRING seed } }`
const ED25519_PKCS8_V1_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

/// The PKCS#8 v1 form of an Ed25519 key given as v1 or v2 DER; `None` if it
/// is not an Ed25519 PKCS#8 document.
fn ed25519_pkcs8_v1(der: &[u8]) -> Option<Vec<u8>> {
    // Both versions share the layout up to the 32-byte seed at offset 16,
    // apart from the outer length and the version number.
    let alg_and_seed_header = &ED25519_PKCS8_V1_PREFIX[5..];
    if der.len() < 48
        || der[0] != 0x30
        || der[2..4] != [0x02, 0x01]
        || der[5..16] != *alg_and_seed_header
    {
        return None;
    }
    let mut v1 = ED25519_PKCS8_V1_PREFIX.to_vec();
    v1.extend_from_slice(&der[16..48]);
    Some(v1)
}

/// A private key as Talos writes them into machine configs: PKCS#8 (`PRIVATE KEY`, or
/// `ED25519 PRIVATE KEY` for the OS CA) or SEC1 (`EC PRIVATE KEY`, the Kubernetes and etcd CAs:
/// siderolabs/crypto x509 `PEMEncodedKey` uses `x509.MarshalECPrivateKey`). ring reads PKCS#8
/// only, so a P-256 SEC1 key is wrapped into PKCS#8 first.
pub(crate) fn load_key_pem(pem: &str) -> Result<KeyPair, String> {
    let (label, der) = pem_block(pem).ok_or("no PEM block")?;
    let der = if label == "EC PRIVATE KEY" {
        sec1_p256_to_pkcs8(&der)
    } else {
        der
    };
    KeyPair::try_from(der).map_err(|e| format!("{label}: {e}"))
}

fn pem_block(pem: &str) -> Option<(String, Vec<u8>)> {
    let begin = pem.find("-----BEGIN ")?;
    let rest = &pem[begin + 11..];
    let label_end = rest.find("-----")?;
    let label = rest[..label_end].to_string();
    let body_start = label_end + 5;
    let end = rest.find("-----END ")?;
    let body: String = rest
        .get(body_start..end)?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .ok()?;
    Some((label, der))
}

/// `SEQUENCE { INTEGER 0, SEQUENCE { id-ecPublicKey, prime256v1 }, OCTET STRING { sec1 } }`
/// (RFC 5208 wrapping RFC 5915); ring accepts the inner `[0]` parameters when they match.
fn sec1_p256_to_pkcs8(sec1: &[u8]) -> Vec<u8> {
    const ALGORITHM: [u8; 21] = [
        0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86,
        0x48, 0xce, 0x3d, 0x03, 0x01, 0x07,
    ];
    let mut body = vec![0x02, 0x01, 0x00];
    body.extend_from_slice(&ALGORITHM);
    body.extend(der_tlv(0x04, sec1));
    der_tlv(0x30, &body)
}

fn der_tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else if len < 0x100 {
        out.extend([0x81, len as u8]);
    } else {
        out.extend([0x82, (len >> 8) as u8, len as u8]);
    }
    out.extend_from_slice(content);
    out
}

impl Pki {
    pub fn new() -> Result<Pki, SimError> {
        let (params, key, ca_pem) = new_ca("taloscope-sim")?;
        Pki::with_issuer(ca_pem.clone(), Issuer::new(params, key))
    }

    /// The PKI of a cluster formed from a machine config: its OS CA (`machine.ca`, key
    /// included) issues the node certificates and is the only CA apid accepts clients of, as
    /// Talos's apid certificates come from that CA
    /// (siderolabs/talos internal/app/machined/pkg/controllers/secrets/api.go).
    pub fn from_os_ca(crt_pem: &str, key_pem: &str) -> Result<Pki, SimError> {
        let key = load_key_pem(key_pem).map_err(|e| pki_err("machine.ca.key", e))?;
        let issuer =
            Issuer::from_ca_cert_pem(crt_pem, key).map_err(|e| pki_err("machine.ca.crt", e))?;
        Pki::with_issuer(crt_pem.to_string(), issuer)
    }

    fn with_issuer(ca_pem: String, issuer: Issuer<'static, KeyPair>) -> Result<Pki, SimError> {
        let (wrong_params, wrong_key, _) = new_ca("taloscope-sim-wrong-ca")?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let ca_der = rustls_pemfile::certs(&mut ca_pem.as_bytes())
            .next()
            .ok_or_else(|| SimError::Pki("CA certificate PEM is empty".into()))?
            .map_err(|e| pki_err("CA certificate PEM", e))?;
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca_der).map_err(|e| pki_err("CA root", e))?;
        let client_verifier =
            WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|e| pki_err("client verifier", e))?;
        Ok(Pki {
            ca_pem,
            issuer,
            wrong_issuer: Issuer::new(wrong_params, wrong_key),
            client_verifier,
            sessions: ServerSessionMemoryCache::new(1024),
            provider,
        })
    }

    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// A client certificate whose Subject Organization carries `roles` (PEM cert, Talos key PEM).
    pub fn client_cert(
        &self,
        roles: &[&str],
        validity: Validity,
    ) -> Result<(String, String), SimError> {
        let key = KeyPair::generate_for(&PKCS_ED25519).map_err(|e| pki_err("client key", e))?;
        let mut params =
            CertificateParams::new(Vec::<String>::new()).map_err(|e| pki_err("client", e))?;
        params.distinguished_name = DistinguishedName::new();
        for role in roles {
            params
                .distinguished_name
                .push(DnType::OrganizationName, *role);
        }
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        set_validity(&mut params, validity);
        let cert = params
            .signed_by(&key, &self.issuer)
            .map_err(|e| pki_err("client certificate", e))?;
        Ok((cert.pem(), talos_key_pem(&key)))
    }

    /// The TLS server configuration of one node: its own certificate, the sim CA for clients.
    pub fn server_config(&self, node: &NodeSpec) -> Result<Arc<rustls::ServerConfig>, SimError> {
        let validity = if node.faults.expired_cert {
            Validity::Expired
        } else if node.faults.expiring_cert {
            Validity::ExpiresInDays(EXPIRING_SERVER_DAYS)
        } else {
            Validity::Current
        };
        let issuer = if node.faults.wrong_ca_cert {
            &self.wrong_issuer
        } else {
            &self.issuer
        };
        let (chain, key_der) = server_cert(issuer, &node.name, IpAddr::V4(node.address), validity)?;
        let mut cfg = rustls::ServerConfig::builder_with_provider(self.provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| pki_err("TLS versions", e))?
            .with_client_cert_verifier(self.client_verifier.clone())
            .with_single_cert(chain, key_der)
            .map_err(|e| pki_err(&format!("TLS identity of {}", node.name), e))?;
        cfg.alpn_protocols = vec![b"h2".to_vec()];
        // One session cache for the whole fleet keeps 5,000 nodes light.
        cfg.session_storage = self.sessions.clone();
        Ok(Arc::new(cfg))
    }
}

/// Days left on the server certificate of a node with the `expiring_cert` fault.
const EXPIRING_SERVER_DAYS: u32 = 20;

/// A server certificate for `name` at `address`, signed by `issuer`.
fn server_cert(
    issuer: &Issuer<'static, KeyPair>,
    name: &str,
    address: IpAddr,
    validity: Validity,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), SimError> {
    let key = KeyPair::generate_for(&PKCS_ED25519).map_err(|e| pki_err("node key", e))?;
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(|e| pki_err(name, e))?;
    params.distinguished_name = DistinguishedName::new();
    params.distinguished_name.push(DnType::CommonName, name);
    params.subject_alt_names.push(SanType::IpAddress(address));
    if let Ok(dns) = name.try_into() {
        params.subject_alt_names.push(SanType::DnsName(dns));
    }
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    set_validity(&mut params, validity);
    let cert = params
        .signed_by(&key, issuer)
        .map_err(|e| pki_err(&format!("server certificate of {name}"), e))?;
    let chain = vec![CertificateDer::from(cert.der().to_vec())];
    let key_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    Ok((chain, key_der))
}

/// The maintenance API's TLS: a certificate for `address` from a root made for this boot, and
/// no client certificate asked for (controllers/secrets/maintenance.go issues it from the
/// per-boot `MaintenanceRoot`; controllers/runtime/maintenance_service.go serves it, and
/// clients connect with `--insecure`).
pub(crate) fn maintenance_server_config(
    address: IpAddr,
) -> Result<Arc<rustls::ServerConfig>, SimError> {
    let (params, key, _) = new_ca("maintenance")?;
    let issuer = Issuer::new(params, key);
    let (chain, key_der) = server_cert(&issuer, "talos-maintenance", address, Validity::Current)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| pki_err("TLS versions", e))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| pki_err("maintenance TLS identity", e))?;
    cfg.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(cfg))
}

/// How long a certificate the sim issues is valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Validity {
    /// 2025 to 2035.
    Current,
    /// 2020 to 2021.
    Expired,
    /// From 2025 to midnight UTC `n` days from today.
    ExpiresInDays(u32),
}

fn set_validity(params: &mut CertificateParams, validity: Validity) {
    let (from, to) = match validity {
        Validity::Expired => ((2020, 1, 1), (2021, 1, 1)),
        Validity::Current => ((2025, 1, 1), (2035, 1, 1)),
        Validity::ExpiresInDays(days) => {
            let today = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() / 86_400)
                .unwrap_or(0) as i64;
            let (y, m, d) = super::clock::calendar_date(today + i64::from(days));
            ((2025, 1, 1), (y as i32, m as u8, d as u8))
        }
    };
    params.not_before = date_time_ymd(from.0, from.1, from.2);
    params.not_after = date_time_ymd(to.0, to.1, to.2);
}

/// One talosconfig context.
pub(crate) struct TalosContext {
    pub name: String,
    pub endpoints: Vec<String>,
    pub nodes: Vec<String>,
    pub crt_pem: String,
    pub key_pem: String,
}

/// Renders a talosconfig (Talos's format: base64 PEM in ca/crt/key).
pub(crate) fn render_talosconfig(ca_pem: &str, contexts: &[TalosContext]) -> String {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
    let ca = b64(ca_pem);
    let mut out = String::new();
    let first = contexts.first().map(|c| c.name.as_str()).unwrap_or("");
    let _ = writeln!(out, "context: {first:?}");
    out.push_str("contexts:\n");
    for c in contexts {
        let list = |items: &[String]| {
            items
                .iter()
                .map(|i| format!("{i:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(out, "  {:?}:", c.name);
        let _ = writeln!(out, "    endpoints: [{}]", list(&c.endpoints));
        let _ = writeln!(out, "    nodes: [{}]", list(&c.nodes));
        let _ = writeln!(out, "    ca: {ca}");
        let _ = writeln!(out, "    crt: {}", b64(&c.crt_pem));
        let _ = writeln!(out, "    key: {}", b64(&c.key_pem));
    }
    out
}

/// Writes `text` to `path` readable by the owner only (it holds private keys).
pub(crate) fn write_private(path: &Path, text: &str) -> Result<(), SimError> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let err = |source| SimError::WriteState {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(err)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(err)?;
    file.write_all(text.as_bytes()).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_key_uses_talos_label_and_roles_land_in_organization() {
        let pki = Pki::new().expect("pki");
        let (crt, key) = pki
            .client_cert(&["os:reader"], Validity::Current)
            .expect("cert");
        assert!(key.starts_with("-----BEGIN ED25519 PRIVATE KEY-----"));
        // PKCS#8 v1, as Go writes it: 48 bytes, version 0.
        use base64::Engine;
        let body: String = key.lines().filter(|l| !l.starts_with("-----")).collect();
        let der = base64::engine::general_purpose::STANDARD
            .decode(body)
            .unwrap();
        assert_eq!(der.len(), 48);
        assert_eq!(&der[..16], &ED25519_PKCS8_V1_PREFIX);
        let der = rustls_pemfile::certs(&mut crt.as_bytes())
            .next()
            .expect("one cert")
            .expect("pem");
        let (_, parsed) = x509_parser::parse_x509_certificate(&der).expect("x509");
        let orgs: Vec<_> = parsed
            .subject()
            .iter_organization()
            .filter_map(|o| o.as_str().ok())
            .collect();
        assert_eq!(orgs, ["os:reader"]);
    }

    /// A P-256 key as Go's `x509.MarshalECPrivateKey` writes it (made with `openssl ecparam
    /// -genkey -name prime256v1 -noout`, which writes the same SEC1 form).
    const SEC1_P256: &str = "-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIH5pzh94umQMMhFvTsG4fLalQrzGFDztoc8FMO+YgyJ+oAoGCCqGSM49
AwEHoUQDQgAEvh6DdrSP2Cw1EGwvf82iP5yPcxLYqYfr0sIWzAx8ZSn2WGfWTYk/
0s8g/ixOYa+rLpppgNbSYXMfJMKL2lwi2Q==
-----END EC PRIVATE KEY-----
";

    #[test]
    fn config_keys_load_in_talos_formats() {
        let ec = load_key_pem(SEC1_P256).expect("SEC1 P-256");
        assert_eq!(ec.algorithm(), &rcgen::PKCS_ECDSA_P256_SHA256);
        let ed = KeyPair::generate_for(&PKCS_ED25519).expect("key");
        let loaded = load_key_pem(&talos_key_pem(&ed)).expect("ED25519 PRIVATE KEY, PKCS#8 v1");
        assert_eq!(loaded.public_key_raw(), ed.public_key_raw());
        assert!(load_key_pem("not a key").is_err());
    }

    #[test]
    fn a_config_ca_issues_node_certificates_it_verifies() {
        let (params, key, ca_pem) = new_ca("talos").expect("CA");
        let key_pem = key.serialize_pem();
        drop(params);
        let pki = Pki::from_os_ca(&ca_pem, &key_pem).expect("from the config's CA");
        assert_eq!(pki.ca_pem(), ca_pem);
        let (crt, _) = pki
            .client_cert(&["os:admin"], Validity::Current)
            .expect("admin");
        let der = rustls_pemfile::certs(&mut crt.as_bytes())
            .next()
            .unwrap()
            .unwrap();
        let (_, parsed) = x509_parser::parse_x509_certificate(&der).expect("x509");
        let ca_der = rustls_pemfile::certs(&mut ca_pem.as_bytes())
            .next()
            .unwrap()
            .unwrap();
        let (_, ca) = x509_parser::parse_x509_certificate(&ca_der).expect("x509");
        assert_eq!(parsed.issuer(), ca.subject());
    }

    #[test]
    fn talosconfig_has_one_block_per_context() {
        let ctx = |name: &str| TalosContext {
            name: name.into(),
            endpoints: vec!["127.10.0.1:5000".into()],
            nodes: vec!["127.10.0.1".into(), "127.10.0.2".into()],
            crt_pem: "crt".into(),
            key_pem: "key".into(),
        };
        let text = render_talosconfig("ca", &[ctx("lab"), ctx("lab-reader")]);
        assert!(text.starts_with("context: \"lab\"\n"));
        assert!(text.contains("  \"lab-reader\":\n"));
        assert!(text.contains("endpoints: [\"127.10.0.1:5000\"]"));
    }
}
