//! What the cluster-creation tests build for themselves: a tiny secrets bundle (rcgen CAs as
//! Talos makes them), v1alpha1 machine configs naming it, raw XML-RPC and OneFlow calls, and
//! clients: Talos over mutual TLS or (maintenance) insecure TLS, the Kubernetes API over HTTPS.
#![allow(dead_code)]
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, PKCS_ECDSA_P256_SHA256, PKCS_ED25519,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime, pem::PemObject};
use taloscope_proto::machine::machine_service_client::MachineServiceClient;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A CA: certificate PEM, key PEM, and what signs with it.
pub struct Ca {
    pub crt: String,
    pub key: String,
    issuer: Issuer<'static, KeyPair>,
}

fn ca(org: &str, alg: &'static rcgen::SignatureAlgorithm) -> Ca {
    let key = KeyPair::generate_for(alg).expect("CA key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(DnType::OrganizationName, org);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let crt = params.self_signed(&key).expect("CA cert").pem();
    let key_pem = key.serialize_pem();
    Ca {
        crt,
        key: key_pem,
        issuer: Issuer::new(params, key),
    }
}

/// A client certificate (PEM cert, PEM key) with `org` as its Organization.
fn client_cert(
    ca: &Ca,
    cn: &str,
    org: &str,
    alg: &'static rcgen::SignatureAlgorithm,
) -> (String, String) {
    let key = KeyPair::generate_for(alg).expect("client key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.distinguished_name.push(DnType::CommonName, cn);
    params
        .distinguished_name
        .push(DnType::OrganizationName, org);
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let crt = params
        .signed_by(&key, &ca.issuer)
        .expect("client cert")
        .pem();
    (crt, key.serialize_pem())
}

/// The secrets `talosctl gen secrets` makes, as far as the sim reads them.
pub struct Secrets {
    pub os: Ca,
    pub kubernetes: Ca,
    pub etcd: Ca,
    pub token: String,
}

impl Secrets {
    pub fn new() -> Secrets {
        Secrets {
            os: ca("talos", &PKCS_ED25519),
            kubernetes: ca("kubernetes", &PKCS_ECDSA_P256_SHA256),
            etcd: ca("etcd", &PKCS_ECDSA_P256_SHA256),
            token: "abcdef.0123456789abcdef".into(),
        }
    }

    /// The talosconfig's admin certificate: Ed25519, O=os:admin, from the OS CA.
    pub fn talos_admin(&self) -> (String, String) {
        client_cert(&self.os, "admin", "os:admin", &PKCS_ED25519)
    }

    /// A Kubernetes admin: O=system:masters, from the cluster CA.
    pub fn kube_admin(&self) -> (String, String) {
        client_cert(
            &self.kubernetes,
            "admin",
            "system:masters",
            &PKCS_ECDSA_P256_SHA256,
        )
    }

    /// A v1alpha1 machine config in the full upstream shape (fields the sim ignores included,
    /// a second document after the first), as `talosctl gen config` writes it.
    pub fn machine_config(
        &self,
        cluster: &str,
        endpoint: &str,
        role: &str,
        hostname: &str,
    ) -> String {
        let keep_key = |key: &str| {
            if role == "controlplane" {
                b64(key)
            } else {
                String::new()
            }
        };
        format!(
            "version: v1alpha1
debug: false
persist: true
machine:
  type: {role}
  token: {token}
  ca:
    crt: {os_crt}
    key: \"{os_key}\"
  certSANs: []
  kubelet:
    image: ghcr.io/siderolabs/kubelet:v1.34.1
    defaultRuntimeSeccompProfileEnabled: true
    disableManifestsDirectory: true
  network:{network}
  install:
    disk: /dev/vda
    image: ghcr.io/siderolabs/installer:v1.11.3
    wipe: false
  features:
    rbac: true
    stableHostname: true
    kubePrism:
      enabled: true
      port: 7445
  nodeLabels:
    node.kubernetes.io/exclude-from-external-load-balancers: \"\"
cluster:
  id: c2ltLWlk
  secret: c2ltLXNlY3JldA==
  controlPlane:
    endpoint: {endpoint}
  clusterName: {cluster}
  network:
    dnsDomain: cluster.local
    podSubnets:
      - 10.244.0.0/16
    serviceSubnets:
      - 10.96.0.0/12
  token: 0123ab.0123456789abcdef
  secretboxEncryptionSecret: c2VjcmV0Ym94
  ca:
    crt: {k8s_crt}
    key: \"{k8s_key}\"
  aggregatorCA:
    crt: {k8s_crt}
    key: \"{k8s_key}\"
  serviceAccount:
    key: \"{k8s_key}\"
  apiServer:
    image: registry.k8s.io/kube-apiserver:v1.34.1
    certSANs:
      - 127.0.0.1
  etcd:
    ca:
      crt: {etcd_crt}
      key: \"{etcd_key}\"
  discovery:
    enabled: true
---
apiVersion: v1alpha1
kind: KmsgLogConfig
name: remote-log
url: tcp://127.0.0.1:3001/
",
            network = if hostname.is_empty() {
                " {}".to_string()
            } else {
                format!("\n    hostname: {hostname}")
            },
            token = self.token,
            os_crt = b64(&self.os.crt),
            os_key = keep_key(&self.os.key),
            k8s_crt = b64(&self.kubernetes.crt),
            k8s_key = keep_key(&self.kubernetes.key),
            etcd_crt = b64(&self.etcd.crt),
            etcd_key = keep_key(&self.etcd.key),
        )
    }
}

/// `CONTEXT = [ USER_DATA = base64, USER_DATA_ENCODING = base64 ]` for a VM's extra template.
pub fn user_data_extra(config: &str) -> String {
    format!(
        "CONTEXT = [ NETWORK = \"YES\", USER_DATA = \"{}\", USER_DATA_ENCODING = \"base64\" ]",
        b64(config)
    )
}

/// One plain HTTP/1.1 exchange; the status and the body.
async fn http(addr: &str, request: String) -> (u16, String) {
    let mut tcp = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    tcp.write_all(request.as_bytes()).await.expect("writes");
    let mut raw = Vec::new();
    tcp.read_to_end(&mut raw).await.expect("reads");
    split_response(&raw)
}

fn split_response(raw: &[u8]) -> (u16, String) {
    let text = String::from_utf8_lossy(raw).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn host_of(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_start_matches("https://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The sim's `user:password` (its `one_auth` file), the session string of every call.
pub fn auth(fleet: &taloscope_sim::SimFleet) -> String {
    let path = fleet.opennebula().expect("OpenNebula sim").auth_file();
    std::fs::read_to_string(path)
        .expect("one_auth")
        .trim()
        .to_string()
}

/// An XML-RPC call to oned; the response document.
pub async fn xmlrpc(url: &str, method: &str, params: &[String]) -> String {
    let params: String = params
        .iter()
        .map(|p| format!("<param><value>{p}</value></param>"))
        .collect();
    let body = format!(
        "<?xml version=\"1.0\"?><methodCall><methodName>{method}</methodName><params>{params}</params></methodCall>"
    );
    let host = host_of(url);
    let request = format!(
        "POST /RPC2 HTTP/1.1\r\nHost: {host}\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let (status, text) = http(&host, request).await;
    assert_eq!(status, 200, "{method}: {text}");
    text
}

pub fn string(s: &str) -> String {
    let escaped = s
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!("<string>{escaped}</string>")
}

pub fn int(i: i64) -> String {
    format!("<int>{i}</int>")
}

/// The id a successful oned call answers with (its first `<i4>`).
pub fn answered_id(response: &str) -> i64 {
    assert!(
        response.contains("<boolean>1</boolean>"),
        "oned refused: {response}"
    );
    response
        .split("<i4>")
        .nth(1)
        .and_then(|r| r.split("</i4>").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no id in {response}"))
}

/// A OneFlow request with basic auth; the status and the body.
pub async fn oneflow(url: &str, auth: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    let host = host_of(url);
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Basic {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        b64(auth),
        body.len()
    );
    http(&host, request).await
}

/// Instantiates the new-cluster OneFlow service template (`talos-cluster`) with `roles` as its
/// `merge_template.roles`, the service named `lab`; the status and the body.
pub async fn instantiate_new_cluster_service(
    fleet: &taloscope_sim::SimFleet,
    roles: serde_json::Value,
) -> (u16, String) {
    let one = fleet.opennebula().expect("OpenNebula sim");
    let body = serde_json::json!({"action": {"perform": "instantiate", "params": {
        "merge_template": {"name": "lab", "roles": roles}}}});
    let template = one.new_clusters().service_template_id;
    let path = format!("/service_template/{template}/action");
    let auth = auth(fleet);
    oneflow(one.oneflow_url(), &auth, "POST", &path, &body.to_string()).await
}

/// Talos over mutual TLS: the OS CA as the root, the admin certificate as the identity.
pub async fn talos(
    secrets: &Secrets,
    admin: &(String, String),
    endpoint: &str,
) -> Option<MachineServiceClient<Channel>> {
    let tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(&secrets.os.crt))
        .identity(Identity::from_pem(&admin.0, &admin.1));
    let channel = Channel::from_shared(format!("https://{endpoint}"))
        .expect("uri")
        .tls_config(tls)
        .expect("tls")
        .connect_timeout(Duration::from_secs(2))
        .timeout(Duration::from_secs(5))
        .connect()
        .await
        .ok()?;
    Some(MachineServiceClient::new(channel))
}

/// Accepts any server certificate, as `talosctl --insecure` does in maintenance mode.
#[derive(Debug)]
struct Insecure(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for Insecure {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
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
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn insecure_tls() -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("versions")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Insecure(provider)))
        .with_no_client_auth()
}

/// Dials TLS without checking the server, for tonic.
#[derive(Clone)]
struct InsecureConnector {
    tls: Arc<rustls::ClientConfig>,
    address: String,
}

type TlsIo = hyper_util::rt::TokioIo<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>;

impl tonic::codegen::Service<http::Uri> for InsecureConnector {
    type Response = TlsIo;
    type Error = std::io::Error;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<TlsIo>> + Send>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: http::Uri) -> Self::Future {
        let (tls, address) = (self.tls.clone(), self.address.clone());
        Box::pin(async move {
            let tcp = tokio::net::TcpStream::connect(&address).await?;
            let name = ServerName::try_from("talos").expect("name");
            let stream = tokio_rustls::TlsConnector::from(tls)
                .connect(name, tcp)
                .await?;
            Ok(hyper_util::rt::TokioIo::new(stream))
        })
    }
}

/// The maintenance API over TLS that checks nothing (`talosctl --insecure`).
pub async fn maintenance(endpoint: &str) -> Option<MachineServiceClient<Channel>> {
    let mut tls = insecure_tls();
    tls.alpn_protocols = vec![b"h2".to_vec()];
    let connector = InsecureConnector {
        tls: Arc::new(tls),
        address: endpoint.to_string(),
    };
    let channel = Endpoint::from_shared(format!("http://{endpoint}"))
        .expect("uri")
        .timeout(Duration::from_secs(5))
        .connect_with_connector(connector)
        .await
        .ok()?;
    Some(MachineServiceClient::new(channel))
}

/// `GET path` on the Kubernetes API at `server` (`https://IP:PORT`) with a client certificate
/// checked against nothing but the server's own CA (given); the status and the body.
pub async fn kube_get(
    server: &str,
    ca_pem: &str,
    client: &(String, String),
    path: &str,
) -> Option<(u16, String)> {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(c.ok()?).ok()?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .with_root_certificates(roots)
        .with_client_auth_cert(
            CertificateDer::pem_slice_iter(client.0.as_bytes())
                .collect::<Result<_, _>>()
                .ok()?,
            PrivateKeyDer::from_pem_slice(client.1.as_bytes()).ok()?,
        )
        .ok()?;
    let host = host_of(server);
    let ip = host.split(':').next()?.to_string();
    let tcp = tokio::net::TcpStream::connect(&host).await.ok()?;
    let name = ServerName::try_from(ip).ok()?;
    let mut stream = tokio_rustls::TlsConnector::from(Arc::new(tls))
        .connect(name, tcp)
        .await
        .ok()?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw).await;
    Some(split_response(&raw))
}

/// Names of the Nodes whose Ready condition is True, from a NodeList body.
pub fn ready_nodes(body: &str) -> Vec<String> {
    let Ok(list) = serde_json::from_str::<serde_json::Value>(body) else {
        return Vec::new();
    };
    let items = list["items"].as_array().cloned().unwrap_or_default();
    let mut names: Vec<String> = items
        .iter()
        .filter(|n| {
            n["status"]["conditions"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            })
        })
        .filter_map(|n| n["metadata"]["name"].as_str().map(String::from))
        .collect();
    names.sort();
    names
}
