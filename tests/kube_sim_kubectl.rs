//! The Kubernetes API sim checked with a real client: kubectl lists nodes and
//! prints versions against the sim's kubeconfig, over loopback HTTPS.
use std::net::{IpAddr, Ipv4Addr};
use std::process::Command;

use taloscope::sim::kube_api::kubeconfig::{self, KubeconfigEntry};
use taloscope::sim::kube_api::pki::KubePki;
use taloscope::sim::kube_api::{KubeApiServer, KubeClusterFacts, KubeNodeFacts, StaticPodFacts};

fn facts() -> KubeClusterFacts {
    let node = |name: &str, last: u8, cp: bool| KubeNodeFacts {
        name: name.into(),
        address: IpAddr::V4(Ipv4Addr::new(127, 30, 0, last)),
        control_plane: cp,
        kubelet_version: "v1.34.1".into(),
        talos_version: "v1.11.3".into(),
        ready: true,
        static_pods: if cp {
            [
                "kube-apiserver",
                "kube-controller-manager",
                "kube-scheduler",
            ]
            .iter()
            .map(|c| StaticPodFacts {
                component: c.to_string(),
                version: "v1.34.1".into(),
                ready: true,
                config_version: 1,
            })
            .collect()
        } else {
            vec![]
        },
    };
    KubeClusterFacts {
        cluster: "kubectl-check".into(),
        kube_proxy_version: "v1.34.1".into(),
        nodes: vec![
            node("cp-1", 1, true),
            node("cp-2", 2, true),
            node("w-1", 3, false),
        ],
        created_unix: 1_700_000_000,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_lists_nodes_and_versions() {
    taloscope::install_crypto_provider();
    let Ok(kubectl) = which("kubectl") else {
        panic!("kubectl is not installed; .ci/run installs it");
    };
    let dir = tempfile::tempdir().unwrap();
    let pki = KubePki::new("kubectl-check").unwrap();
    let ip = IpAddr::V4(Ipv4Addr::new(127, 30, 0, 1));
    let server_cert = pki.server_cert(ip).unwrap();
    let (_tx, rx) = tokio::sync::watch::channel(facts());
    let server = KubeApiServer::start(ip, &server_cert, &pki.ca_pem, rx)
        .await
        .unwrap();
    let cfg = kubeconfig::build(&[KubeconfigEntry {
        cluster: "kubectl-check".into(),
        context: "admin@kubectl-check".into(),
        server: server.url.clone(),
        ca_b64: pki.ca_b64(),
        client: pki.client_cert("admin", "system:masters", false).unwrap(),
    }]);
    let path = dir.path().join("kubeconfig");
    kubeconfig::write(&path, &cfg).unwrap();

    let home = dir.path().to_path_buf();
    let run = move |args: &[&str]| {
        let out = Command::new(&kubectl)
            .args(args)
            .env("KUBECONFIG", &path)
            .env("HOME", &home)
            .env_remove("KUBERNETES_SERVICE_HOST")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(
            out.status.success(),
            "kubectl {args:?} failed:\n{stdout}\n{stderr}"
        );
        stdout
    };
    let nodes = tokio::task::spawn_blocking(move || {
        let nodes = run(&["get", "nodes", "-o", "wide", "--request-timeout=10s"]);
        let version = run(&["version", "-o", "json", "--request-timeout=10s"]);
        (nodes, version)
    })
    .await
    .unwrap();
    let (nodes, version) = nodes;
    for name in ["cp-1", "cp-2", "w-1"] {
        let line = nodes
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{nodes}"));
        assert!(line.contains("Ready"), "{line}");
        assert!(line.contains("v1.34.1"), "{line}");
        assert!(line.contains("Talos (v1.11.3)"), "{line}");
    }
    assert!(nodes.contains("control-plane"), "{nodes}");
    eprintln!("{nodes}");
    assert!(version.contains("\"gitVersion\": \"v1.34.1\""), "{version}");
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}
