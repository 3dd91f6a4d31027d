//! The Kubernetes side of the simulated fleet, checked over loopback HTTPS:
//! kubectl (a real client) against the sim's kubeconfig, `taloscope status`
//! with both APIs, a rebooting node's Ready condition following its Talos
//! state, and an unreachable API server leaving the Talos side intact.
mod kube_common;
mod talos_common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use kube_common::{CONTROL_PLANE_COMPONENTS, node_named};
use talos_common::{Sim, scenario, start};
use taloscope::discovery::{Sources, discover};
use taloscope::kube::KubeClient;
use taloscope::talos::RebootMode;

fn which(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn kubectl(kubeconfig: &Path, home: &Path, args: &[&str]) -> String {
    let kubectl = which("kubectl").expect("kubectl is installed (scripts/test installs it)");
    let out = Command::new(kubectl)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", home)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .expect("kubectl runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "kubectl {args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// `taloscope status --context healthy --output json` with the sim's talosconfig and
/// `kubeconfig`, nothing else from the environment; asserts its exit code (0, or 1 when
/// the Kubernetes API failed) and returns the JSON.
async fn status_json(sim: &Sim, kubeconfig: &Path, code: i32, why: &str) -> serde_json::Value {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_taloscope"))
        .args(["status", "--context", "healthy", "--output", "json"])
        .env_clear()
        .env("HOME", sim.dir.path())
        .env("TALOSCOPE_STATE_DIR", sim.dir.path().join("state"))
        .env("TALOSCONFIG", sim.fleet.talosconfig_path())
        .env("KUBECONFIG", kubeconfig)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{why}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_lists_the_sims_nodes_and_versions() {
    let sim = start(scenario("healthy")).await;
    let kubeconfig = sim.fleet.kubeconfig_path();
    let home = sim.dir.path().to_path_buf();
    let (nodes, version) = tokio::task::spawn_blocking(move || {
        (
            kubectl(
                &kubeconfig,
                &home,
                &["get", "nodes", "-o", "wide", "--request-timeout=10s"],
            ),
            kubectl(
                &kubeconfig,
                &home,
                &["version", "-o", "json", "--request-timeout=10s"],
            ),
        )
    })
    .await
    .unwrap();
    for (name, role) in [
        ("cp-1", "control-plane"),
        ("cp-2", "control-plane"),
        ("cp-3", "control-plane"),
        ("w-1", "<none>"),
        ("w-2", "<none>"),
    ] {
        let line = nodes
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name}:\n{nodes}"));
        for want in ["Ready", role, "v1.34.1", "Talos (v1.11.3)", "127.10.0."] {
            assert!(line.contains(want), "{want} in {line}");
        }
    }
    assert!(version.contains("\"gitVersion\": \"v1.34.1\""), "{version}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_json_shows_both_apis() {
    let sim = start(scenario("healthy")).await;
    let json = status_json(&sim, &sim.fleet.kubeconfig_path(), 0, "").await;
    let cluster = &json["clusters"][0];
    let nodes = cluster["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 5);
    for n in nodes {
        assert_eq!(n["kubelet_version"], "v1.34.1", "{n}");
        assert_eq!(n["k8s_ready"], true, "{n}");
        assert_eq!(n["cordoned"], false, "{n}");
    }
    let kube = &cluster["kubernetes"];
    assert_eq!(kube["server_version"], "v1.34.1");
    let components = kube["components"].as_array().unwrap();
    for node in ["cp-1", "cp-2", "cp-3"] {
        for name in CONTROL_PLANE_COMPONENTS {
            let c = components
                .iter()
                .find(|c| c["node"] == node && c["name"] == name)
                .unwrap_or_else(|| panic!("{node} {name}"));
            assert_eq!(c["version"], "v1.34.1");
            assert_eq!(c["ready"], true);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebooting_node_goes_not_ready_and_comes_back_ready() {
    let sim = start(scenario("healthy")).await;
    let discovery = discover(&Sources {
        kubeconfigs: vec![sim.fleet.kubeconfig_path()],
        ..Default::default()
    });
    let kube = KubeClient::new(
        discovery.kubeconfig.as_ref().unwrap(),
        "admin@healthy",
        Default::default(),
    )
    .await
    .unwrap();
    let talos = sim.client("healthy");
    let w1 = sim.address("healthy", 3);
    talos.reboot(&w1, RebootMode::Default).await.unwrap();
    let ready = |want: bool| {
        let kube = kube.clone();
        async move {
            for _ in 0..400 {
                let nodes = kube.nodes().await.unwrap();
                if nodes
                    .iter()
                    .find(|n| n.name == "w-1")
                    .is_some_and(|n| n.ready == want)
                {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            false
        }
    };
    assert!(ready(false).await, "w-1 went NotReady while rebooting");
    assert!(ready(true).await, "w-1 came back Ready");
    let w1_node = node_named(&kube, "w-1").await;
    assert_eq!(w1_node.kubelet_version, "v1.34.1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_api_server_leaves_the_talos_side_intact() {
    let sim = start(scenario("healthy")).await;
    // A kubeconfig whose server is a port nobody listens on.
    let closed = std::net::TcpListener::bind("127.10.0.1:0").unwrap();
    let dead = format!("https://{}", closed.local_addr().unwrap());
    drop(closed);
    let text = std::fs::read_to_string(sim.fleet.kubeconfig_path()).unwrap();
    let url = sim.fleet.kube_api_url(0).unwrap();
    let dead_config = sim.dir.path().join("dead-kubeconfig");
    std::fs::write(&dead_config, text.replace(url, &dead)).unwrap();
    let json = status_json(
        &sim,
        &dead_config,
        1,
        "every Talos node answered, the Kubernetes API did not: ",
    )
    .await;
    let cluster = &json["clusters"][0];
    assert_eq!(cluster["nodes"].as_array().unwrap().len(), 5);
    assert!(
        cluster["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["talos_version"] == "v1.11.3")
    );
    let error = cluster["kubernetes"]["error"].as_str().unwrap();
    assert!(
        error.contains("admin@healthy") && error.contains("unreachable"),
        "{error}"
    );
    assert!(cluster["nodes"][0]["kubelet_version"].is_null());
}
