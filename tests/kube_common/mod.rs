//! Shared set-up for the tests against the Kubernetes API sim alone: the sim started on a
//! loopback address with its own CA, an admin kubeconfig for it, and the control-plane static
//! pods a healthy node runs.
#![allow(dead_code)]
pub mod lease_fixture;

use std::net::IpAddr;

use kube::config::Kubeconfig;
use taloscope::kube::{KubeClient, KubeNode};
use taloscope_sim::kube_api::kubeconfig::{self, KubeconfigEntry};
use taloscope_sim::kube_api::pki::KubePki;
use taloscope_sim::kube_api::{KubeApiServer, KubeClusterFacts, StaticPodFacts};
use tokio::sync::watch;

/// The static pods of every control plane, in the order the sim lists them.
pub const CONTROL_PLANE_COMPONENTS: [&str; 3] = [
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
];

/// A Kubernetes API sim serving `facts` over HTTPS, with the CA that signed its certificate.
pub struct KubeSim {
    pub server: KubeApiServer,
    /// Changes what the sim serves.
    pub facts: watch::Sender<KubeClusterFacts>,
    pub pki: KubePki,
}

/// Starts the sim for `facts.cluster` on `ip`.
pub async fn start_kube_api(ip: IpAddr, facts: KubeClusterFacts) -> KubeSim {
    taloscope::install_crypto_provider();
    let pki = KubePki::new(&facts.cluster).expect("kube pki");
    let (tx, rx) = watch::channel(facts);
    let server_cert = pki.server_cert(ip).expect("server cert");
    let server = KubeApiServer::start(ip, &server_cert, &pki.ca_pem, rx)
        .await
        .expect("kube API sim starts");
    KubeSim {
        server,
        facts: tx,
        pki,
    }
}

impl KubeSim {
    /// A kubeconfig with one context, `admin@<cluster>`, holding a `system:masters` client
    /// certificate (expired when `expired`).
    pub fn admin_kubeconfig(&self, cluster: &str, expired: bool) -> Kubeconfig {
        kubeconfig::build(&[KubeconfigEntry {
            cluster: cluster.into(),
            context: format!("admin@{cluster}"),
            server: self.server.url.clone(),
            ca_b64: self.pki.ca_b64(),
            client: self
                .pki
                .client_cert("admin", "system:masters", expired)
                .expect("client cert"),
        }])
    }
}

/// The three control-plane static pods, ready at `version`.
pub fn control_plane_pods(version: &str) -> Vec<StaticPodFacts> {
    CONTROL_PLANE_COMPONENTS
        .iter()
        .map(|c| StaticPodFacts {
            component: c.to_string(),
            version: version.into(),
            ready: true,
            config_version: 1,
        })
        .collect()
}

/// The node `name` as the client lists it now.
pub async fn node_named(client: &KubeClient, name: &str) -> KubeNode {
    client
        .nodes()
        .await
        .expect("nodes listed")
        .into_iter()
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("node {name} listed"))
}
