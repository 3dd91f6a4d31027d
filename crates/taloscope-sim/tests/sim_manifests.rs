//! Talos's bootstrap manifests and static pods as the Kubernetes API shows them: the kube-proxy
//! DaemonSet is created once and never follows the machine config (only a client's patch
//! changes it), `cluster.proxy.disabled` leaves it out, and a static pod's
//! `talos.dev/config-version` catches up with its `<Component>Configs` resource after a restart.
mod sim_common;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;
use sim_common::{
    channel, document_of, machine, scenario_from_yaml, start, start_builtin, wait_for, with_meta,
};
use taloscope_proto::cosi::resource::GetRequest;
use taloscope_proto::cosi::resource::state_client::StateClient;
use taloscope_proto::machine::{ApplyConfigurationRequest, apply_configuration_request};
use taloscope_sim::SimFleet;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const LIMIT: Duration = Duration::from_secs(20);
const DAEMONSET: &str = "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy";

/// A plain HTTP/1.1-over-TLS client for the sim's Kubernetes API, with the kubeconfig's
/// client certificate.
struct KubeHttp {
    tls: tokio_rustls::TlsConnector,
    addr: std::net::SocketAddr,
}

fn pem(value: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(value.as_str().expect("base64 field"))
        .expect("base64")
}

impl KubeHttp {
    fn new(fleet: &SimFleet) -> KubeHttp {
        let text = std::fs::read_to_string(fleet.kubeconfig_path()).expect("kubeconfig");
        let cfg: Value = serde_saphyr::from_str(&text).expect("kubeconfig parses");
        let ca = pem(&cfg["clusters"][0]["cluster"]["certificate-authority-data"]);
        let user = &cfg["users"][0]["user"];
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls_pemfile::certs(&mut ca.as_slice()) {
            roots.add(cert.expect("ca cert")).expect("ca added");
        }
        let certs = rustls_pemfile::certs(&mut pem(&user["client-certificate-data"]).as_slice())
            .collect::<Result<Vec<_>, _>>()
            .expect("client cert");
        let key = rustls_pemfile::private_key(&mut pem(&user["client-key-data"]).as_slice())
            .expect("key")
            .expect("a key");
        let config = rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_client_auth_cert(certs, key)
            .expect("client auth");
        KubeHttp {
            tls: tokio_rustls::TlsConnector::from(Arc::new(config)),
            addr: fleet.kube_api(0).expect("kube api").addr,
        }
    }

    /// (status code, JSON body) of one request.
    async fn call(&self, method: &str, path: &str, body: Option<(&str, &str)>) -> (u16, Value) {
        let tcp = tokio::net::TcpStream::connect(self.addr)
            .await
            .expect("tcp");
        let name = rustls::pki_types::ServerName::IpAddress(self.addr.ip().into());
        let mut tls = self.tls.connect(name, tcp).await.expect("tls");
        let (content_type, text) = body.unwrap_or(("application/json", ""));
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{text}",
            self.addr,
            text.len()
        );
        tls.write_all(request.as_bytes()).await.expect("write");
        let mut answer = Vec::new();
        let _ = tls.read_to_end(&mut answer).await;
        let answer = String::from_utf8_lossy(&answer).into_owned();
        let (head, body) = answer.split_once("\r\n\r\n").expect("HTTP answer");
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .expect("status");
        (status, serde_json::from_str(body).unwrap_or(Value::Null))
    }
}

fn proxy_image(ds: &Value) -> &str {
    ds["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap_or_default()
}

async fn machine_config(state: &mut StateClient<tonic::transport::Channel>, node: &str) -> String {
    let r = state
        .get(with_meta(
            GetRequest {
                namespace: "config".into(),
                r#type: "MachineConfigs.config.talos.dev".into(),
                id: "v1alpha1".into(),
                options: None,
            },
            "node",
            node,
        ))
        .await
        .expect("machine config")
        .into_inner()
        .resource
        .expect("resource");
    document_of(&r.spec.expect("spec").proto_spec)
}

async fn component_config_version(
    state: &mut StateClient<tonic::transport::Channel>,
    node: &str,
) -> String {
    let r = state
        .get(with_meta(
            GetRequest {
                namespace: "controlplane".into(),
                r#type: "APIServerConfigs.kubernetes.talos.dev".into(),
                id: "kube-apiserver".into(),
                options: None,
            },
            "node",
            node,
        ))
        .await
        .expect("apiserver config")
        .into_inner()
        .resource
        .expect("resource");
    r.metadata.expect("metadata").version
}

#[tokio::test]
async fn a_config_change_leaves_kube_proxy_alone_and_a_patch_rolls_it() {
    let sim = start_builtin("healthy", 50.0).await;
    let kube = KubeHttp::new(&sim.fleet);
    let (code, ds) = kube.call("GET", DAEMONSET, None).await;
    assert_eq!(code, 200);
    assert_eq!(proxy_image(&ds), "registry.k8s.io/kube-proxy:v1.34.1");

    let ctx = sim.context("healthy");
    let mut state = StateClient::new(channel(&ctx, &ctx.endpoints[0]).await.unwrap());
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    for cp in ["127.10.0.1", "127.10.0.2", "127.10.0.3"] {
        let config = machine_config(&mut state, cp).await;
        let changed = config.replace("kube-proxy:v1.34.1", "kube-proxy:v1.34.2");
        assert_ne!(config, changed);
        client
            .apply_configuration(with_meta(
                ApplyConfigurationRequest {
                    data: changed.clone().into_bytes(),
                    mode: apply_configuration_request::Mode::NoReboot as i32,
                    dry_run: false,
                    ..ApplyConfigurationRequest::default()
                },
                "node",
                cp,
            ))
            .await
            .expect("applied");
        assert_eq!(machine_config(&mut state, cp).await, changed);
    }
    let (_, ds) = kube.call("GET", DAEMONSET, None).await;
    assert_eq!(
        proxy_image(&ds),
        "registry.k8s.io/kube-proxy:v1.34.1",
        "Talos never updates a bootstrap manifest that exists"
    );
    assert_eq!(ds["metadata"]["generation"], 1);

    let patch = r#"{"spec":{"template":{"spec":{"containers":[{"name":"kube-proxy","image":"registry.k8s.io/kube-proxy:v1.34.2"}]}}}}"#;
    let (code, patched) = kube
        .call(
            "PATCH",
            DAEMONSET,
            Some(("application/strategic-merge-patch+json", patch)),
        )
        .await;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(proxy_image(&patched), "registry.k8s.io/kube-proxy:v1.34.2");
    assert_eq!(patched["metadata"]["generation"], 2);
    assert_eq!(patched["status"]["observedGeneration"], 2);
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn a_cluster_with_kube_proxy_disabled_has_no_daemonset() {
    let text = "clusters:\n  - name: c\n    kube_proxy_disabled: true\n    nodes:\n      - name: cp-1\n        role: controlplane\n      - name: w-1\n        role: worker\n";
    let sim = start(scenario_from_yaml("c", text), 50.0).await;
    let kube = KubeHttp::new(&sim.fleet);
    let (code, _) = kube.call("GET", DAEMONSET, None).await;
    assert_eq!(code, 404);
    let (code, list) = kube
        .call(
            "GET",
            "/apis/apps/v1/namespaces/kube-system/daemonsets",
            None,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(list["items"].as_array().map(Vec::len), Some(0));
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn a_static_pods_config_version_catches_up_after_its_restart() {
    let sim = start_builtin("healthy", 50.0).await;
    let kube = KubeHttp::new(&sim.fleet);
    let ctx = sim.context("healthy");
    let mut state = StateClient::new(channel(&ctx, &ctx.endpoints[0]).await.unwrap());
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let cp1 = "127.10.0.1";
    let pod = "/api/v1/namespaces/kube-system/pods/kube-apiserver-cp-1";
    let (code, before) = kube.call("GET", pod, None).await;
    assert_eq!(code, 200);
    assert_eq!(
        before["metadata"]["annotations"]["talos.dev/config-version"],
        "1"
    );
    assert_eq!(before["status"]["hostIP"], cp1);
    assert_eq!(component_config_version(&mut state, cp1).await, "1");

    let config = machine_config(&mut state, cp1).await;
    let changed = config.replace("kube-apiserver:v1.34.1", "kube-apiserver:v1.34.2");
    client
        .apply_configuration(with_meta(
            ApplyConfigurationRequest {
                data: changed.into_bytes(),
                mode: apply_configuration_request::Mode::NoReboot as i32,
                dry_run: false,
                ..ApplyConfigurationRequest::default()
            },
            "node",
            cp1,
        ))
        .await
        .expect("applied");
    assert_eq!(component_config_version(&mut state, cp1).await, "2");
    wait_for("the pod's annotation to catch up", LIMIT, || {
        let kube = &kube;
        async move {
            let (_, pod) = kube.call("GET", pod, None).await;
            (pod["metadata"]["annotations"]["talos.dev/config-version"] == "2").then_some(())
        }
    })
    .await;
    sim.fleet.shutdown().await;
}
