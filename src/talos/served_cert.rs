//! The certificate a TLS server presents in its handshake (a node's apid, the Kubernetes API
//! server): one bounded TLS 1.3 handshake that sends nothing after it and trusts any
//! certificate, so an expired or foreign one is still read, and reported rather than refused.
use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use tokio::net::TcpStream;
use x509_parser::prelude::{FromDer, X509Certificate};

use super::client::endpoint_with_port;

/// The leaf certificate a server presented.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedCertificate {
    /// Its subject (`CN=cp-1`).
    pub subject: String,
    /// Its end, seconds since the Unix epoch.
    pub not_after: i64,
}

/// The certificate the server at `endpoint` (`host`, `host:port`, `https://host:port`; apid's
/// port by default) presents, within `within`. TLS 1.3 only: there the server's certificate
/// arrives before the client has to show one, so apid's mutual TLS needs no client identity.
pub async fn served_certificate(
    endpoint: &str,
    within: Duration,
) -> Result<ServedCertificate, String> {
    let address = endpoint_with_port(endpoint);
    let host = host_of(&address);
    let name = ServerName::try_from(host.to_string())
        .map_err(|e| format!("{address}: not a host name or address: {e}"))?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(reading_config()?));
    let probe = async {
        let tcp = TcpStream::connect(&address)
            .await
            .map_err(|e| format!("{address}: cannot connect: {e}"))?;
        let tls = connector
            .connect(name, tcp)
            .await
            .map_err(|e| format!("{address}: TLS handshake failed: {e}"))?;
        let leaf = tls
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|chain| chain.first())
            .ok_or_else(|| format!("{address}: presented no certificate"))?;
        read_leaf(leaf.as_ref()).map_err(|e| format!("{address}: {e}"))
    };
    tokio::time::timeout(within, probe)
        .await
        .map_err(|_| format!("{address}: no TLS handshake within {within:?}"))?
}

/// `host` of `host:port` or `[v6]:port`.
fn host_of(address: &str) -> &str {
    match address.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None => address.rsplit_once(':').map_or(address, |(h, _)| h),
    }
}

fn read_leaf(der: &[u8]) -> Result<ServedCertificate, String> {
    let (_, cert) = X509Certificate::from_der(der)
        .map_err(|e| format!("the presented certificate does not parse: {e}"))?;
    Ok(ServedCertificate {
        subject: crate::printable::line(&cert.subject().to_string()),
        not_after: cert.validity().not_after.timestamp(),
    })
}

fn reading_config() -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| format!("TLS 1.3: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth();
    Ok(config)
}

/// Takes any certificate (its end is what is read), still checking that the server holds
/// its key.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_come_out_of_addresses() {
        assert_eq!(host_of("127.10.0.1:50000"), "127.10.0.1");
        assert_eq!(host_of("[fd00::1]:6443"), "fd00::1");
        assert_eq!(host_of("cp-1.lab:50000"), "cp-1.lab");
    }

    #[tokio::test]
    async fn nothing_listening_is_an_error_naming_the_address() {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = free.local_addr().unwrap().to_string();
        drop(free);
        let e = served_certificate(&address, Duration::from_secs(5))
            .await
            .unwrap_err();
        assert!(e.starts_with(&address), "{e}");
    }
}
