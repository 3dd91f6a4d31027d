//! The kube client's Cluster API reads over loopback HTTP, against a small server that answers
//! like a management cluster (discovery of the group, paged lists, the infrastructure group's
//! resources, the kubeconfig secret) with the fixtures of tests/fixtures/capi: v1beta2 when
//! served, else v1beta1, the same tree either way; the TalosControlPlanes found in v1alpha3
//! though kubeadm's provider makes the group prefer v1beta2; a server without the group is no
//! management cluster.
use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine;
use taloscope::capi::{ContextRead, read_context};
use taloscope::kube::{CapiObjects, CapiVersion, KubeClient};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const RESOURCES: [&str; 4] = ["clusters", "machines", "machinedeployments", "machinesets"];

fn fixture(version: &str, resource: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/capi")
        .join(version)
        .join(format!("{resource}.json"));
    std::fs::read_to_string(path).expect("fixture")
}

/// The answers by path; `machines` comes in two pages.
fn routes(served: &[&str], read_as: &str) -> BTreeMap<String, String> {
    let mut r = BTreeMap::new();
    if !served.is_empty() {
        let versions: Vec<String> = served
            .iter()
            .map(|v| format!(r#"{{"groupVersion":"cluster.x-k8s.io/{v}","version":"{v}"}}"#))
            .collect();
        r.insert(
            "/apis/cluster.x-k8s.io".into(),
            format!(
                r#"{{"kind":"APIGroup","name":"cluster.x-k8s.io","versions":[{}]}}"#,
                versions.join(",")
            ),
        );
    }
    for resource in RESOURCES {
        r.insert(
            format!("/apis/cluster.x-k8s.io/{read_as}/{resource}"),
            fixture(read_as, resource),
        );
    }
    // kubeadm's control-plane provider beside Talos's: the group prefers v1beta2, which has
    // no TalosControlPlane; v1alpha3 has.
    r.insert(
        "/apis/controlplane.cluster.x-k8s.io".into(),
        r#"{"kind":"APIGroup","versions":[{"version":"v1beta2"},{"version":"v1alpha3"}],"preferredVersion":{"version":"v1beta2"}}"#.into(),
    );
    r.insert(
        "/apis/controlplane.cluster.x-k8s.io/v1beta2".into(),
        r#"{"kind":"APIResourceList","resources":[{"name":"kubeadmcontrolplanes","kind":"KubeadmControlPlane"}]}"#.into(),
    );
    r.insert(
        "/apis/controlplane.cluster.x-k8s.io/v1alpha3".into(),
        r#"{"kind":"APIResourceList","resources":[{"name":"taloscontrolplanes","kind":"TalosControlPlane"},{"name":"taloscontrolplanes/scale","kind":"Scale"}]}"#.into(),
    );
    r.insert(
        "/apis/controlplane.cluster.x-k8s.io/v1alpha3/taloscontrolplanes".into(),
        fixture(read_as, "taloscontrolplanes"),
    );
    r.insert(
        "/apis/infrastructure.cluster.x-k8s.io".into(),
        r#"{"kind":"APIGroup","versions":[{"version":"v1beta1"}],"preferredVersion":{"version":"v1beta1"}}"#.into(),
    );
    r.insert(
        "/apis/infrastructure.cluster.x-k8s.io/v1beta1".into(),
        r#"{"kind":"APIResourceList","resources":[{"name":"simmachines/status","kind":"SimMachine"},{"name":"simmachines","kind":"SimMachine"},{"name":"simmachinetemplates","kind":"SimMachineTemplate"}]}"#.into(),
    );
    r.insert(
        "/apis/infrastructure.cluster.x-k8s.io/v1beta1/simmachines".into(),
        fixture(read_as, "simmachines"),
    );
    let kubeconfig = "apiVersion: v1\nkind: Config\nclusters:\n- name: workload\n  cluster:\n    server: https://127.0.0.1:6443\n";
    let value = base64::engine::general_purpose::STANDARD.encode(kubeconfig);
    r.insert(
        "/api/v1/namespaces/clusters/secrets/workload-kubeconfig".into(),
        format!(r#"{{"kind":"Secret","data":{{"value":"{value}"}}}}"#),
    );
    r
}

/// The answer to `path?query`: the route, the machines list in two pages.
fn answer(routes: &BTreeMap<String, String>, target: &str) -> (u16, String) {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let Some(body) = routes.get(path) else {
        return (
            404,
            r#"{"kind":"Status","code":404,"reason":"NotFound","message":"not found"}"#.into(),
        );
    };
    if !path.ends_with("/machines") {
        return (200, body.clone());
    }
    let mut list: serde_json::Value = serde_json::from_str(body).unwrap();
    let items = list["items"].as_array().cloned().unwrap();
    let (page, next) = if query.contains("continue=second") {
        (items[3..].to_vec(), serde_json::Value::Null)
    } else {
        (items[..3].to_vec(), "second".into())
    };
    list["items"] = page.into();
    list["metadata"]["continue"] = next;
    (200, list.to_string())
}

async fn serve(routes: BTreeMap<String, String>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let routes = Arc::new(routes);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let routes = routes.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut chunk = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&chunk[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&request);
                let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let (code, body) = answer(&routes, &target);
                let reply = format!(
                    "HTTP/1.1 {code} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    });
    format!("http://{address}")
}

async fn client(server: &str) -> KubeClient {
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: mgmt\n  cluster:\n    server: {server}\nusers:\n- name: op\n  user:\n    token: t\ncontexts:\n- name: mgmt\n  context:\n    cluster: mgmt\n    user: op\ncurrent-context: mgmt\n"
    );
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&text).unwrap();
    KubeClient::new(&kubeconfig, "mgmt", Default::default())
        .await
        .unwrap()
}

async fn management(served: &[&str], read_as: &str) -> taloscope::capi::Management {
    let server = serve(routes(served, read_as)).await;
    match read_context(&client(&server).await).await.expect("read") {
        ContextRead::Management(m) => *m,
        ContextRead::NotManagement => panic!("{served:?} is served"),
    }
}

#[tokio::test]
async fn v1beta2_is_read_when_served_and_gives_the_fixture_tree() {
    taloscope::install_crypto_provider();
    let m = management(&["v1beta1", "v1beta2"], "v1beta2").await;
    assert_eq!(m.objects.version, Some(CapiVersion::V1beta2));
    assert_eq!(m.objects.machines.len(), 5, "both pages of machines");
    assert_eq!(m.objects.infra_machines.len(), 5);
    assert!(m.objects.truncated.is_empty());
    let [w] = m.workloads.as_slice() else {
        panic!("one workload cluster: {:?}", m.workloads)
    };
    assert_eq!(w.owner.to_string(), "mgmt/clusters/workload");
    assert_eq!(
        w.kubeconfig_server.as_deref(),
        Some("https://127.0.0.1:6443")
    );
    assert_eq!(w.endpoint, "127.0.0.1:6443");
    let tree = &m.trees()[0];
    let cp = tree.control_plane.as_ref().unwrap();
    assert_eq!(
        (cp.counts.replicas, cp.counts.ready, cp.counts.up_to_date),
        (3, 3, 2)
    );
}

#[tokio::test]
async fn a_v1beta1_server_gives_the_same_tree() {
    taloscope::install_crypto_provider();
    let v1 = management(&["v1beta1"], "v1beta1").await;
    let v2 = management(&["v1beta1", "v1beta2"], "v1beta2").await;
    assert_eq!(v1.objects.version, Some(CapiVersion::V1beta1));
    let mut t1 = v1.trees();
    t1[0].api_version = "v1beta2".into();
    assert_eq!(t1, v2.trees());
    // The objects the reads gave are the fixtures' as decoded directly.
    let lists: Vec<(String, String)> = RESOURCES
        .iter()
        .chain(&["taloscontrolplanes", "simmachines"])
        .map(|r| (r.to_string(), fixture("v1beta2", r)))
        .collect();
    let borrowed: Vec<(&str, &str)> = lists
        .iter()
        .map(|(r, t)| (r.as_str(), t.as_str()))
        .collect();
    let direct = CapiObjects::from_list_texts(CapiVersion::V1beta2, &borrowed).unwrap();
    assert_eq!(direct.machines, v2.objects.machines);
}

#[tokio::test]
async fn a_server_without_the_group_is_not_a_management_cluster() {
    taloscope::install_crypto_provider();
    let server = serve(routes(&[], "v1beta2")).await;
    let read = read_context(&client(&server).await).await.expect("read");
    assert!(matches!(read, ContextRead::NotManagement));
}
