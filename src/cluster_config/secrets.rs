//! A new cluster's secrets bundle as `talosctl gen secrets` makes and writes it (upstream
//! pkg/machinery/config/generate/secrets/{bundle,ca,secrets,utils}.go): cluster id and secret,
//! tokens, the encryption secret, and the five CAs/keys. Never printed: Debug redacts.
use std::fmt;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::pki::{self, CaSubject, CertAndKey, KeyKind, PkiError};
use super::version_rules::ConfigContract;
use crate::atomic_file::write_atomically;
use crate::versions::TalosVersion;

/// Upstream `CAValidityTime`: 87600 hours.
const CA_VALIDITY: time::Duration = time::Duration::hours(87_600);
/// Upstream `constants.DefaultClusterIDSize` / `DefaultClusterSecretSize`.
const CLUSTER_ID_BYTES: usize = 32;
const CLUSTER_SECRET_BYTES: usize = 32;

/// Why a bundle could not be made, read or written; names the file.
#[derive(Debug, thiserror::Error)]
pub enum SecretsError {
    #[error(transparent)]
    Version(#[from] super::version_rules::UnsupportedTalos),
    #[error(transparent)]
    Pki(#[from] PkiError),
    #[error("cannot read the secrets bundle {path}: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("the secrets bundle {path} is not usable: {reason}")]
    Invalid { path: PathBuf, reason: String },
    #[error("cannot write the secrets bundle {path}: {reason}")]
    Write { path: PathBuf, reason: String },
}

/// The cluster's identity in discovery (`cluster.id`, `cluster.secret`).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterIdentity {
    pub id: String,
    pub secret: String,
}

/// The Kubernetes secrets-at-rest key: secretbox from Talos 1.3 on, AES-CBC before.
#[derive(Clone, PartialEq, Eq)]
pub enum EncryptionSecret {
    Secretbox(String),
    AesCbc(String),
}

/// The CAs and the service-account key.
#[derive(Clone, PartialEq, Eq)]
pub struct BundleCerts {
    pub etcd: CertAndKey,
    pub k8s: CertAndKey,
    pub k8s_aggregator: CertAndKey,
    /// PEM: RSA (PKCS#1) for Talos 1.7 and later, ECDSA (SEC1) before.
    pub k8s_service_account_key: String,
    /// The Talos API CA (Ed25519).
    pub os: CertAndKey,
}

/// Everything a cluster's machine configs and talosconfig are made from.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretsBundle {
    pub cluster: ClusterIdentity,
    /// `xxxxxx.yyyyyyyyyyyyyyyy`, the Kubernetes bootstrap token.
    pub bootstrap_token: String,
    pub encryption: EncryptionSecret,
    /// trustd's token (`machine.token`), same shape as the bootstrap token.
    pub trustd_token: String,
    pub certs: BundleCerts,
}

impl fmt::Debug for SecretsBundle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretsBundle { <redacted> }")
    }
}

impl fmt::Debug for CertAndKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CertAndKey { <redacted> }")
    }
}

impl SecretsBundle {
    /// A new bundle for clusters of Talos `talos`, dated now.
    pub fn generate(talos: &TalosVersion) -> Result<SecretsBundle, SecretsError> {
        Self::generate_at(talos, OffsetDateTime::now_utc())
    }

    /// A new bundle whose CAs start at `now` (upstream's fixed clock).
    pub fn generate_at(
        talos: &TalosVersion,
        now: OffsetDateTime,
    ) -> Result<SecretsBundle, SecretsError> {
        let contract = ConfigContract::for_talos(talos)?;
        let ca = |kind, subject| pki::self_signed_ca(kind, subject, now, CA_VALIDITY);
        let certs = BundleCerts {
            etcd: ca(KeyKind::EcdsaP256, CaSubject::Organization("etcd"))?,
            k8s: ca(KeyKind::EcdsaP256, CaSubject::Organization("kubernetes"))?,
            k8s_aggregator: ca(KeyKind::EcdsaP256, CaSubject::CommonName("front-proxy"))?,
            k8s_service_account_key: if contract.rsa_service_account_key() {
                pki::rsa_key_pem()?
            } else {
                pki::ecdsa_key_pem()?
            },
            os: ca(KeyKind::Ed25519, CaSubject::Organization("talos"))?,
        };
        let encryption_key = base64_std(&pki::random_bytes(32)?);
        let encryption = if contract.secretbox_encryption() {
            EncryptionSecret::Secretbox(encryption_key)
        } else {
            EncryptionSecret::AesCbc(encryption_key)
        };
        Ok(SecretsBundle {
            cluster: ClusterIdentity {
                id: base64::engine::general_purpose::URL_SAFE
                    .encode(pki::random_bytes(CLUSTER_ID_BYTES)?),
                secret: base64_std(&pki::random_bytes(CLUSTER_SECRET_BYTES)?),
            },
            bootstrap_token: token()?,
            encryption,
            trustd_token: token()?,
            certs,
        })
    }

    /// The secrets.yaml text talosctl writes (and `talosctl gen config --with-secrets` reads).
    pub fn to_yaml(&self) -> String {
        let file = BundleFile::from(self);
        serde_saphyr::to_string(&file).expect("a bundle of strings always serializes")
    }

    /// Reads a secrets.yaml (bounded), checking every certificate and key decodes.
    pub fn from_yaml(path: &Path) -> Result<SecretsBundle, SecretsError> {
        let text = crate::bounded::read_to_string(path, crate::bounded::CONFIG_FILE_LIMIT)
            .map_err(|e| SecretsError::Read {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })?;
        Self::from_yaml_str(&text, path)
    }

    /// Reads secrets.yaml text; `origin` names it in errors.
    pub fn from_yaml_str(text: &str, origin: &Path) -> Result<SecretsBundle, SecretsError> {
        let invalid = |reason: String| SecretsError::Invalid {
            path: origin.to_path_buf(),
            reason,
        };
        // Only the place: a YAML error's text may quote the value, and these values are keys.
        let file: BundleFile = serde_saphyr::from_str(text).map_err(|e| {
            invalid(match e.location().filter(|l| l.line() > 0) {
                Some(l) => format!(
                    "not a secrets bundle (YAML error at line {}, column {})",
                    l.line(),
                    l.column()
                ),
                None => "not a secrets bundle".to_string(),
            })
        })?;
        file.into_bundle().map_err(invalid)
    }

    /// Writes the bundle to `path`, mode 0600, atomically (`atomic_file`).
    pub fn save(&self, path: &Path) -> Result<(), SecretsError> {
        write_atomically(path, self.to_yaml().as_bytes(), 0o600).map_err(|e| SecretsError::Write {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
    }

    /// The secretbox secret, or the AES-CBC one on old Talos.
    pub fn encryption_secret(&self) -> &str {
        match &self.encryption {
            EncryptionSecret::Secretbox(s) | EncryptionSecret::AesCbc(s) => s,
        }
    }
}

fn base64_std(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Upstream `genToken(6, 16)`: `[a-z0-9]{6}.[a-z0-9]{16}`, bytes ≥ 252 discarded so every
/// character is equally likely.
fn token() -> Result<String, PkiError> {
    const CHARS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let part = |len: usize| -> Result<String, PkiError> {
        let mut out = String::with_capacity(len);
        while out.len() < len {
            for b in pki::random_bytes(len * 2)? {
                if b < 252 && out.len() < len {
                    out.push(char::from(CHARS[usize::from(b) % CHARS.len()]));
                }
            }
        }
        Ok(out)
    };
    Ok(format!("{}.{}", part(6)?, part(16)?))
}

/// secrets.yaml as written: lower-case keys (yaml.v3's default for untagged Go fields), PEM
/// as base64 (`x509.PEMEncodedCertificateAndKey` marshals its bytes so).
#[derive(Serialize, Deserialize)]
struct BundleFile {
    cluster: ClusterIdentity,
    secrets: SecretsSection,
    trustdinfo: TrustdSection,
    certs: CertsSection,
}

#[derive(Serialize, Deserialize)]
struct SecretsSection {
    bootstraptoken: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    aescbcencryptionsecret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    secretboxencryptionsecret: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct TrustdSection {
    token: String,
}

#[derive(Serialize, Deserialize)]
struct CertsSection {
    etcd: PemPair,
    k8s: PemPair,
    k8saggregator: PemPair,
    k8sserviceaccount: PemKey,
    os: PemPair,
}

#[derive(Serialize, Deserialize)]
struct PemPair {
    crt: String,
    key: String,
}

#[derive(Serialize, Deserialize)]
struct PemKey {
    key: String,
}

impl From<&SecretsBundle> for BundleFile {
    fn from(b: &SecretsBundle) -> Self {
        let pair = |c: &CertAndKey| PemPair {
            crt: base64_std(c.crt_pem.as_bytes()),
            key: base64_std(c.key_pem.as_bytes()),
        };
        let (aescbc, secretbox) = match &b.encryption {
            EncryptionSecret::Secretbox(s) => (None, Some(s.clone())),
            EncryptionSecret::AesCbc(s) => (Some(s.clone()), None),
        };
        BundleFile {
            cluster: b.cluster.clone(),
            secrets: SecretsSection {
                bootstraptoken: b.bootstrap_token.clone(),
                aescbcencryptionsecret: aescbc,
                secretboxencryptionsecret: secretbox,
            },
            trustdinfo: TrustdSection {
                token: b.trustd_token.clone(),
            },
            certs: CertsSection {
                etcd: pair(&b.certs.etcd),
                k8s: pair(&b.certs.k8s),
                k8saggregator: pair(&b.certs.k8s_aggregator),
                k8sserviceaccount: PemKey {
                    key: base64_std(b.certs.k8s_service_account_key.as_bytes()),
                },
                os: pair(&b.certs.os),
            },
        }
    }
}

impl BundleFile {
    /// Upstream `Bundle.Validate`: every field present, exactly one encryption secret, every
    /// certificate and key a PEM block.
    fn into_bundle(self) -> Result<SecretsBundle, String> {
        let pem = |field: &str, b64: &str| -> Result<String, String> {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .map_err(|_| format!("certs.{field} is not base64"))?;
            let text =
                String::from_utf8(bytes).map_err(|_| format!("certs.{field} is not PEM text"))?;
            pki::pem_decode(&text, &format!("certs.{field}")).map_err(|e| e.to_string())?;
            Ok(text)
        };
        let pair = |name: &str, p: &PemPair| -> Result<CertAndKey, String> {
            Ok(CertAndKey {
                crt_pem: pem(&format!("{name}.crt"), &p.crt)?,
                key_pem: pem(&format!("{name}.key"), &p.key)?,
            })
        };
        let required = |field: &str, value: &str| {
            if value.trim().is_empty() {
                Err(format!("{field} is required"))
            } else {
                Ok(())
            }
        };
        required("cluster.id", &self.cluster.id)?;
        required("cluster.secret", &self.cluster.secret)?;
        required("secrets.bootstraptoken", &self.secrets.bootstraptoken)?;
        required("trustdinfo.token", &self.trustdinfo.token)?;
        let encryption = match (
            self.secrets.secretboxencryptionsecret,
            self.secrets.aescbcencryptionsecret,
        ) {
            (Some(s), None) if !s.is_empty() => EncryptionSecret::Secretbox(s),
            (None, Some(a)) if !a.is_empty() => EncryptionSecret::AesCbc(a),
            (Some(_), Some(_)) => {
                return Err("only one of secrets.secretboxencryptionsecret and secrets.aescbcencryptionsecret is allowed".into());
            }
            _ => {
                return Err("one of secrets.secretboxencryptionsecret and secrets.aescbcencryptionsecret is required".into());
            }
        };
        Ok(SecretsBundle {
            cluster: self.cluster,
            bootstrap_token: self.secrets.bootstraptoken,
            encryption,
            trustd_token: self.trustdinfo.token,
            certs: BundleCerts {
                etcd: pair("etcd", &self.certs.etcd)?,
                k8s: pair("k8s", &self.certs.k8s)?,
                k8s_aggregator: pair("k8saggregator", &self.certs.k8saggregator)?,
                k8s_service_account_key: pem(
                    "k8sserviceaccount.key",
                    &self.certs.k8sserviceaccount.key,
                )?,
                os: pair("os", &self.certs.os)?,
            },
        })
    }
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
mod tests;
