//! The Kubernetes side of each simulated cluster: one Kubernetes API sim per
//! cluster, fed with facts derived from the Talos nodes' published status, so
//! a rebooting node goes NotReady and comes back Ready on its new kubelet
//! version; and the kubeconfig with `admin@<cluster>` contexts.
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::sync::Arc;

use futures::StreamExt;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_stream::wrappers::WatchStream;

use crate::kube_api::kubeconfig::{self, KubeconfigEntry};
use crate::kube_api::removed_versions;
use crate::kube_api::{KubeApiServer, KubeClusterFacts, KubeNodeFacts, StaticPodFacts};
use crate::model::error::SimError;
use crate::model::kube_pki::KubePki;
use crate::model::scenario::{NodeRole, Scenario};
use crate::model::state::{ClusterState, FleetState};

/// The running Kubernetes API sims and the tasks that keep them current.
pub(crate) struct KubeSide {
    servers: Vec<KubeApiServer>,
    followers: Vec<JoinHandle<()>>,
}

impl KubeSide {
    pub fn stop(&self) {
        for s in &self.servers {
            s.stop();
        }
        for f in &self.followers {
            f.abort();
        }
    }

    /// The API server of cluster `index` (scenario order).
    pub fn server(&self, index: usize) -> Option<&KubeApiServer> {
        self.servers.get(index)
    }

    /// The API server URL of cluster `index` (scenario order).
    pub fn url(&self, index: usize) -> Option<&str> {
        self.servers.get(index).map(|s| s.url.as_str())
    }
}

/// What Kubernetes would say about `cluster` right now.
pub(crate) fn facts_of(cluster: &ClusterState, created_unix: i64) -> KubeClusterFacts {
    // A removed node (a deleted CAPI Machine) is gone; a forming cluster's Nodes appear once
    // their kubelets register (node_life/formation.rs).
    let all = cluster.nodes();
    let present: Vec<_> = all
        .iter()
        .filter(|n| !n.removed.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    let statuses: Vec<_> = present.iter().map(|n| n.status()).collect();
    let nodes: Vec<KubeNodeFacts> = statuses
        .iter()
        .zip(present.iter())
        .filter(|(_, n)| cluster.kubelet_registered(n.node_index))
        .map(|(s, _)| s)
        .map(|s| {
            let control_plane = s.role == NodeRole::ControlPlane;
            let up = s.up && s.ready && !s.rebooting;
            let k = &s.kubernetes;
            KubeNodeFacts {
                name: s.name.clone(),
                address: IpAddr::V4(s.address),
                control_plane,
                kubelet_version: k.kubelet.version.clone(),
                talos_version: s.talos_version.clone(),
                ready: up && k.kubelet.ready,
                static_pods: k
                    .static_pods
                    .iter()
                    .map(|c| StaticPodFacts {
                        component: c.name.clone(),
                        version: c.version.clone(),
                        // Talos points kube-apiserver at the local etcd only
                        // (siderolabs/talos internal/app/machined/pkg/controllers/k8s/
                        // control_plane.go, `EtcdServers`: https://localhost:2379), so its
                        // readiness (the /readyz etcd check) fails while that etcd is stopped.
                        ready: up && c.ready && !(s.etcd_stopped && c.name == "kube-apiserver"),
                        config_version: c.config_version,
                    })
                    .collect(),
            }
        })
        .collect();
    // What the first control plane's config renders; the API server creates the DaemonSet from
    // it once (kube_api::manifests) and never re-renders it.
    let kube_proxy_version = statuses
        .iter()
        .find(|s| s.role == NodeRole::ControlPlane)
        .or(statuses.first())
        .map(|s| s.kubernetes.proxy_version.clone())
        .unwrap_or_default();
    KubeClusterFacts {
        cluster: cluster.name().to_string(),
        kube_proxy_version,
        nodes,
        created_unix,
        storage_unreachable: storage_unreachable(&statuses),
    }
}

/// Whether every kube-apiserver that runs is cut from its storage: Talos gives each one only
/// the etcd of its own node (siderolabs/talos internal/app/machined/pkg/controllers/k8s/
/// control_plane.go, `EtcdServers`: https://localhost:2379), and the kubelet does not restart
/// it meanwhile, since Talos's static pod of kube-apiserver has no liveness probe
/// (controllers/k8s/control_plane_static_pod.go, `manageAPIServer`): it keeps running and
/// answering. A node down or rebooting runs no apiserver at all.
fn storage_unreachable(statuses: &[crate::model::state::NodeStatus]) -> bool {
    let running: Vec<bool> = statuses
        .iter()
        .filter(|s| s.role == NodeRole::ControlPlane && s.up && !s.rebooting)
        .filter(|s| {
            s.kubernetes
                .static_pods
                .iter()
                .any(|p| p.name == crate::model::kube_components::KUBE_APISERVER)
        })
        .map(|s| s.etcd_stopped)
        .collect();
    !running.is_empty() && running.iter().all(|&stopped| stopped)
}

/// Republishes `cluster`'s facts whenever one of its nodes changes or a node joins.
pub(crate) async fn follow(
    cluster: Arc<ClusterState>,
    created_unix: i64,
    facts: watch::Sender<KubeClusterFacts>,
) {
    let mut joins = cluster.subscribe_joins();
    loop {
        joins.borrow_and_update();
        let streams = cluster
            .nodes()
            .iter()
            .map(|n| WatchStream::from_changes(n.subscribe()));
        let mut changes = futures::stream::select_all(streams);
        loop {
            let joined = tokio::select! {
                change = changes.next(), if !changes.is_empty() => {
                    if change.is_none() {
                        return;
                    }
                    false
                }
                joined = joins.changed() => {
                    if joined.is_err() {
                        return;
                    }
                    true
                }
            };
            let now = facts_of(&cluster, created_unix);
            facts.send_if_modified(|current| {
                if *current == now {
                    false
                } else {
                    *current = now;
                    true
                }
            });
            if joined {
                break;
            }
        }
    }
}

/// `resource.version.group` names → list paths; names the sim does not know as removed
/// versions are dropped.
fn removed_api_paths(objects: &[(String, usize)]) -> Vec<(String, usize)> {
    objects
        .iter()
        .filter_map(|(name, count)| removed_versions::list_path_of(name).map(|path| (path, *count)))
        .collect()
}

/// Starts one API server per cluster on its first control plane's address
/// (any address of the cluster if it has none) and writes `DIR/kubeconfig`.
pub(crate) async fn start(
    fleet: &Arc<FleetState>,
    scenario: &Scenario,
    state_dir: &Path,
) -> Result<KubeSide, SimError> {
    let created_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64 - 86_400)
        .unwrap_or(0);
    let mut side = KubeSide {
        servers: Vec::new(),
        followers: Vec::new(),
    };
    let mut entries = Vec::new();
    for (spec, cluster) in scenario.clusters.iter().zip(fleet.clusters()) {
        let ip = cluster
            .nodes()
            .iter()
            .find(|n| n.role() == NodeRole::ControlPlane)
            .or(cluster.nodes().first())
            .map(|n| n.address())
            .unwrap_or(Ipv4Addr::LOCALHOST);
        let pki = KubePki::new(cluster.name())
            .map_err(|e| SimError::Pki(format!("kubernetes CA: {e}")))?;
        let server_cert = pki
            .server_cert(IpAddr::V4(ip))
            .map_err(|e| SimError::Pki(format!("kubernetes API certificate: {e}")))?;
        let (tx, rx) = watch::channel(facts_of(cluster, created_unix));
        let server = KubeApiServer::start(IpAddr::V4(ip), &server_cert, &pki.ca_pem, rx)
            .await
            .map_err(|e| SimError::Pki(e.to_string()))?;
        server.store_removed_api_objects(removed_api_paths(&spec.removed_api_objects));
        if spec.kube_proxy_disabled {
            server.disable_kube_proxy();
        }
        side.followers
            .push(tokio::spawn(follow(cluster.clone(), created_unix, tx)));
        let mut add = |context: String, expired: bool| -> Result<(), SimError> {
            let client = pki
                .client_cert("admin", "system:masters", expired)
                .map_err(|e| SimError::Pki(format!("kubernetes client certificate: {e}")))?;
            entries.push(KubeconfigEntry {
                cluster: cluster.name().to_string(),
                context,
                server: server.url.clone(),
                ca_b64: pki.ca_b64(),
                client,
            });
            Ok(())
        };
        add(format!("admin@{}", cluster.name()), false)?;
        if spec.expired_client_context {
            add(format!("admin@{}-expired", cluster.name()), true)?;
        }
        side.servers.push(server);
    }
    let path = state_dir.join("kubeconfig");
    kubeconfig::write(&path, &kubeconfig::build(&entries)).map_err(|source| {
        SimError::WriteState {
            path: path.clone(),
            source,
        }
    })?;
    Ok(side)
}
