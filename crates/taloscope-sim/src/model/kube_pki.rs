//! The Kubernetes side's own CA, as Talos makes it (ECDSA P-256, apart from
//! the Ed25519 Talos CA): API server certificates with IP SANs and client
//! certificates whose Organization is the Kubernetes group.
use std::net::IpAddr;

use base64::Engine;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, PKCS_ECDSA_P256_SHA256, SanType, date_time_ymd,
};

/// A certificate and its key, both PEM.
#[derive(Clone)]
pub struct CertPair {
    pub cert_pem: String,
    pub key_pem: String,
}

impl CertPair {
    pub fn cert_b64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.cert_pem)
    }
    pub fn key_b64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.key_pem)
    }
}

pub struct KubePki {
    pub ca_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl KubePki {
    pub fn new(cluster: &str) -> Result<KubePki, rcgen::Error> {
        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params
            .distinguished_name
            .push(DnType::CommonName, format!("kubernetes ({cluster})"));
        params
            .distinguished_name
            .push(DnType::OrganizationName, "kubernetes");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        params.not_before = date_time_ymd(2025, 1, 1);
        params.not_after = date_time_ymd(2035, 1, 1);
        let ca_pem = params.self_signed(&key)?.pem();
        Ok(KubePki {
            ca_pem,
            issuer: Issuer::new(params, key),
        })
    }

    /// The Kubernetes CA of a cluster formed from a machine config (`cluster.ca`, key included):
    /// it signs the API server's certificate and the admin kubeconfig's client certificate, as
    /// Talos's secrets controllers do (siderolabs/talos
    /// internal/app/machined/pkg/controllers/secrets/kubernetes.go).
    pub(crate) fn from_ca(ca_pem: &str, key: KeyPair) -> Result<KubePki, rcgen::Error> {
        Ok(KubePki {
            ca_pem: ca_pem.to_string(),
            issuer: Issuer::from_ca_cert_pem(ca_pem, key)?,
        })
    }

    pub fn ca_b64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.ca_pem)
    }

    /// The API server's certificate for `ip` (and the usual in-cluster names).
    pub fn server_cert(&self, ip: IpAddr) -> Result<CertPair, rcgen::Error> {
        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
        let mut params = CertificateParams::new(vec![
            "kubernetes".to_string(),
            "kubernetes.default.svc".to_string(),
            "localhost".to_string(),
        ])?;
        params.subject_alt_names.push(SanType::IpAddress(ip));
        params
            .distinguished_name
            .push(DnType::CommonName, "kube-apiserver");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.not_before = date_time_ymd(2025, 1, 1);
        params.not_after = date_time_ymd(2035, 1, 1);
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(CertPair {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// A client certificate: CN is the user, O the group. `expired` makes one
    /// whose validity ended in 2024, for the expired-credentials fault.
    pub fn client_cert(
        &self,
        user: &str,
        group: &str,
        expired: bool,
    ) -> Result<CertPair, rcgen::Error> {
        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name.push(DnType::CommonName, user);
        params
            .distinguished_name
            .push(DnType::OrganizationName, group);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        if expired {
            params.not_before = date_time_ymd(2023, 1, 1);
            params.not_after = date_time_ymd(2024, 1, 1);
        } else {
            params.not_before = date_time_ymd(2025, 1, 1);
            params.not_after = date_time_ymd(2035, 1, 1);
        }
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(CertPair {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}
