//! The maintenance API of a node booted without a machine config: TLS without a client
//! certificate, the server's self-signed certificate pinned by its fingerprint (read first
//! with [`maintenance_fingerprint`] so the operator can confirm it), and `ApplyConfiguration`
//! through it. The fingerprint is base64 SHA-256 of the certificate's SubjectPublicKeyInfo,
//! the form talosctl's `--cert-fingerprint` takes.
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use base64::Engine;
use hyper_util::rt::TokioIo;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tonic::transport::Endpoint;
use x509_parser::prelude::{FromDer, X509Certificate};

use super::calls::machine;
use super::client::{endpoint_with_port, node_message};
use super::error::TalosError;
use crate::proto::machine as pb;

/// A server certificate's SHA-256 SubjectPublicKeyInfo fingerprint, base64.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct CertFingerprint(pub String);

impl std::fmt::Display for CertFingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The fingerprint of a DER certificate.
pub fn fingerprint_of(der: &[u8]) -> Result<CertFingerprint, String> {
    let (_, cert) = X509Certificate::from_der(der).map_err(|e| format!("not X.509: {e}"))?;
    let spki = cert.tbs_certificate.subject_pki.raw;
    let digest = ring::digest::digest(&ring::digest::SHA256, spki);
    Ok(CertFingerprint(
        base64::engine::general_purpose::STANDARD.encode(digest.as_ref()),
    ))
}

/// Accepts the server whose certificate has the pinned fingerprint (any, when `None`: only to
/// read it); the handshake's signatures are still checked against that certificate.
#[derive(Debug)]
struct PinnedServer {
    pinned: Option<CertFingerprint>,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl ServerCertVerifier for PinnedServer {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let seen = fingerprint_of(end_entity).map_err(rustls::Error::General)?;
        match &self.pinned {
            Some(pinned) if *pinned != seen => Err(rustls::Error::General(format!(
                "the server's certificate fingerprint is {seen}, not the confirmed {pinned}"
            ))),
            _ => Ok(ServerCertVerified::assertion()),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

fn tls_config(pinned: Option<CertFingerprint>) -> Arc<rustls::ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(PinnedServer {
        pinned,
        provider: provider.clone(),
    });
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    Arc::new(config)
}

/// TCP then TLS to `addr` (`host:port`) within `bound`.
async fn handshake(
    addr: &str,
    tls: Arc<rustls::ClientConfig>,
    bound: Duration,
) -> std::io::Result<TlsStream<TcpStream>> {
    let host = addr
        .rsplit_once(':')
        .map_or(addr, |(h, _)| h)
        .trim_matches(|c| c == '[' || c == ']');
    let name = ServerName::try_from(host.to_string())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let connect = async {
        let tcp = TcpStream::connect(addr).await?;
        TlsConnector::from(tls).connect(name, tcp).await
    };
    tokio::time::timeout(bound, connect)
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out"))?
}

/// The fingerprint of the certificate a node in maintenance mode serves on `addr` (apid's
/// port when none is given), read within `bound`.
pub async fn maintenance_fingerprint(
    addr: &str,
    bound: Duration,
) -> Result<CertFingerprint, TalosError> {
    let addr = endpoint_with_port(addr);
    let unreachable = |reason: String| TalosError::Unreachable {
        node: addr.clone(),
        reason,
    };
    let stream = handshake(&addr, tls_config(None), bound)
        .await
        .map_err(|e| unreachable(format!("TLS to the maintenance API: {e}")))?;
    let der = stream
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|c| c.first())
        .ok_or_else(|| unreachable("the server sent no certificate".into()))?;
    fingerprint_of(der).map_err(|reason| TalosError::Decode {
        node: addr.clone(),
        call: "TLS handshake",
        reason,
    })
}

/// Dials one address through [`handshake`]; tonic's channel sees a plain connection.
#[derive(Clone)]
struct PinnedConnector {
    addr: String,
    tls: Arc<rustls::ClientConfig>,
    bound: Duration,
}

impl tower_service::Service<http::Uri> for PinnedConnector {
    type Response = TokioIo<TlsStream<TcpStream>>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _uri: http::Uri) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            handshake(&this.addr, this.tls, this.bound)
                .await
                .map(TokioIo::new)
        })
    }
}

/// Applies `config` (a machine config document) to the node in maintenance mode at `addr`,
/// over TLS to exactly the certificate `pinned` names (upstream `ApplyConfiguration`, mode
/// AUTO, as `talosctl apply-config --insecure`). `bound` limits dialling and the call each.
/// The config is never logged.
pub async fn apply_configuration_insecure(
    addr: &str,
    config: &[u8],
    pinned: &CertFingerprint,
    bound: Duration,
) -> Result<(), TalosError> {
    const CALL: &str = "ApplyConfiguration";
    let addr = endpoint_with_port(addr);
    let connector = PinnedConnector {
        addr: addr.clone(),
        tls: tls_config(Some(pinned.clone())),
        bound,
    };
    let unreachable = |reason: String| TalosError::Unreachable {
        node: addr.clone(),
        reason,
    };
    let channel = Endpoint::from_shared(format!("http://{addr}"))
        .map_err(|e| unreachable(e.to_string()))?
        .connect_timeout(bound)
        .connect_with_connector(connector)
        .await
        .map_err(|e| unreachable(crate::error_chain(&e)))?;
    let req = pb::ApplyConfigurationRequest {
        data: config.to_vec(),
        mode: pb::apply_configuration_request::Mode::Auto as i32,
        dry_run: false,
        try_mode_timeout: None,
    };
    let mut request = tonic::Request::new(req);
    request.set_timeout(bound);
    let resp = tokio::time::timeout(bound, machine(channel).apply_configuration(request))
        .await
        .map_err(|_| TalosError::Timeout {
            node: addr.clone(),
            call: CALL,
            after: bound,
        })?
        .map_err(|s| TalosError::from_status(&addr, CALL, &s))?
        .into_inner();
    node_message(&addr, CALL, resp.messages, |m| m.metadata.as_ref()).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_is_of_the_public_key_and_a_bad_certificate_is_said_so() {
        let key = rcgen::KeyPair::generate().unwrap();
        let a = rcgen::CertificateParams::new(vec!["a".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let b = rcgen::CertificateParams::new(vec!["b".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let fa = fingerprint_of(a.der()).unwrap();
        assert_eq!(fa, fingerprint_of(b.der()).unwrap(), "same key, same pin");
        assert_eq!(fa.0.len(), 44, "base64 of 32 bytes: {fa}");
        let other = rcgen::KeyPair::generate().unwrap();
        let c = rcgen::CertificateParams::new(vec!["a".into()])
            .unwrap()
            .self_signed(&other)
            .unwrap();
        assert_ne!(fa, fingerprint_of(c.der()).unwrap());
        assert!(fingerprint_of(b"nope").unwrap_err().contains("not X.509"));
    }
}
