//! The maintenance API's TLS over loopback: the fingerprint read from a self-signed server is
//! the one of its certificate, and a config is sent only to the pinned certificate (another
//! pin is refused before a byte of the config leaves).
use std::sync::Arc;
use std::time::Duration;

use taloscope::talos::{apply_configuration_insecure, fingerprint_of, maintenance_fingerprint};
use tokio::net::TcpListener;

/// A TLS server with a fresh self-signed certificate; returns its address and certificate DER.
async fn self_signed_server() -> (String, Vec<u8>) {
    taloscope::install_crypto_provider();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["talos".into()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let der = cert.der().to_vec();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // Handshake, then hang up: no gRPC is spoken here.
                let _ = acceptor.accept(tcp).await;
            });
        }
    });
    (addr, der)
}

#[tokio::test]
async fn the_fingerprint_shown_is_the_servers_and_only_it_gets_the_config() {
    let (addr, der) = self_signed_server().await;
    let bound = Duration::from_secs(5);
    let seen = maintenance_fingerprint(&addr, bound).await.expect("read");
    assert_eq!(seen, fingerprint_of(&der).unwrap());

    let other = taloscope::talos::CertFingerprint("AAAA".into());
    let err = apply_configuration_insecure(&addr, b"machine: {}", &other, bound)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("not the confirmed AAAA"), "{err}");

    // The right pin passes the handshake; this server then speaks no gRPC.
    let err = apply_configuration_insecure(&addr, b"machine: {}", &seen, bound)
        .await
        .unwrap_err()
        .to_string();
    assert!(!err.contains("not the confirmed"), "{err}");
}

#[tokio::test]
async fn nothing_listening_is_said_with_the_address() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    drop(listener);
    let err = maintenance_fingerprint(&addr, Duration::from_secs(2))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&addr) && err.contains("maintenance API"),
        "{err}"
    );
}
