//! A cluster the sim forms from a machine config (model/formed_cluster.rs) moving along: etcd
//! forming once `Bootstrap` is accepted, the Kubernetes API answering on `controlPlane.endpoint`
//! once etcd has quorum, and kubelets registering nodes that then become Ready.
use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::kube_api::KubeApiServer;
use crate::kube_api::clusters::{facts_of, follow};
use crate::model::clock::now_unix;
use crate::model::core::Core;
use crate::model::formed_cluster::{Formation, FormationStage, ServedApi};
use crate::model::scenario::NodeRole;
use crate::model::state::{ClusterState, SimNode};

// Simulated seconds at time scale 1, from bootstrap to every node Ready. The sum (about 80 s)
// and the boot before it (vm and install, in opennebula/cloud.rs) put a 3+2 cluster at about
// 2.5 minutes, inside the "at most four minutes" a OneFlow lab reports (issue 18) and the
// minutes `talosctl cluster create` takes locally.
/// etcd restarts in bootstrap mode and elects itself (services/etcd.go `BootstrapEtcd`).
const ETCD_BOOTSTRAP_SECONDS: f64 = 6.0;
/// A waiting control plane retries joining every 3 s
/// (services/etcd.go `buildInitialCluster`: `retry.Constant(..., retry.WithUnits(3*time.Second))`).
const ETCD_JOIN_SECONDS: f64 = 3.0;
/// kube-apiserver, controller-manager and scheduler images pulled and their static pods
/// started by the kubelet once etcd answers (controllers/k8s/render_manifests.go).
const API_UP_SECONDS: f64 = 40.0;
/// The kubelet registers its Node once the API answers (its bootstrap kubeconfig is ready).
const KUBELET_REGISTER_SECONDS: f64 = 5.0;
/// From registration to Ready: the CNI (flannel DaemonSet) and kube-proxy pods run.
const NODE_READY_SECONDS: f64 = 25.0;

/// A node of a forming cluster finished booting: its etcd waits for bootstrap (or joins a
/// formed etcd) and its kubelet registers once the API answers.
pub(crate) fn node_booted(core: &Arc<Core>, cluster: &Arc<ClusterState>, node: &Arc<SimNode>) {
    let Some(f) = cluster.formation.clone() else {
        return;
    };
    let stage = {
        let mut p = f.progress();
        p.booted.insert(node.node_index);
        f.stage()
    };
    if stage >= FormationStage::EtcdUp && node.role() == NodeRole::ControlPlane {
        spawn_etcd_join(core, cluster, node);
    }
    if stage >= FormationStage::ApiUp {
        spawn_registration(core, cluster, node);
    }
}

/// etcd from bootstrap to quorum, then the API, then every booted node's kubelet.
pub(crate) async fn form(
    core: Arc<Core>,
    cluster: Arc<ClusterState>,
    first: Arc<SimNode>,
    f: Arc<Formation>,
) {
    core.clock.sleep(ETCD_BOOTSTRAP_SECONDS).await;
    if stopped(&core, &f) {
        return;
    }
    {
        let mut etcd = cluster.etcd_lock();
        etcd.members = vec![first.node_index];
        etcd.leader = Some(first.node_index);
        etcd.raft_term = 2;
        etcd.raft_index = 8;
    }
    let control_planes: Vec<usize> = {
        let p = f.progress();
        f.set_stage(FormationStage::EtcdUp);
        p.booted.iter().copied().collect()
    };
    for i in control_planes {
        if let Some(n) = cluster
            .nodes()
            .get(i)
            .filter(|n| n.role() == NodeRole::ControlPlane)
        {
            spawn_etcd_join(&core, &cluster, n);
        }
    }
    core.clock.sleep(API_UP_SECONDS).await;
    if stopped(&core, &f) {
        return;
    }
    if let Err(e) = start_kube_api(&cluster, &f).await {
        tracing::warn!(cluster = cluster.name(), "Kubernetes API cannot start: {e}");
        return;
    }
    let booted: Vec<usize> = {
        let p = f.progress();
        f.set_stage(FormationStage::ApiUp);
        p.booted.iter().copied().collect()
    };
    for i in booted {
        if let Some(n) = cluster.nodes().get(i) {
            spawn_registration(&core, &cluster, n);
        }
    }
}

fn stopped(core: &Core, f: &Formation) -> bool {
    *core.stop.borrow() || f.is_retired()
}

/// etcd on a waiting control plane joins the formed cluster at its next retry.
fn spawn_etcd_join(core: &Arc<Core>, cluster: &Arc<ClusterState>, node: &Arc<SimNode>) {
    let (core, cluster, node) = (core.clone(), cluster.clone(), node.clone());
    tokio::spawn(async move {
        core.clock.sleep(ETCD_JOIN_SECONDS).await;
        let Some(f) = cluster.formation.clone().filter(|f| !stopped(&core, f)) else {
            return;
        };
        f.progress().etcd_data.insert(node.node_index);
        let mut etcd = cluster.etcd_lock();
        if !etcd.members.contains(&node.node_index) {
            etcd.members.push(node.node_index);
            etcd.raft_index += 3;
        }
    });
}

/// The kubelet registers the Node, which turns Ready once the CNI runs.
fn spawn_registration(core: &Arc<Core>, cluster: &Arc<ClusterState>, node: &Arc<SimNode>) {
    let (core, cluster, node) = (core.clone(), cluster.clone(), node.clone());
    tokio::spawn(async move {
        core.clock.sleep(KUBELET_REGISTER_SECONDS).await;
        let Some(f) = cluster.formation.clone().filter(|f| !stopped(&core, f)) else {
            return;
        };
        if !f.progress().registered.insert(node.node_index) {
            return;
        }
        core.fleet.update(&node, |_| {});
        core.clock.sleep(NODE_READY_SECONDS).await;
        if stopped(&core, &f) {
            return;
        }
        core.fleet.update(&node, |s| {
            s.ready = s.up;
            s.kubernetes.kubelet.ready = true;
            for pod in &mut s.kubernetes.static_pods {
                pod.ready = true;
            }
        });
    });
}

/// A formed cluster's API server and the task feeding it the nodes' facts.
struct RunningApi {
    server: KubeApiServer,
    follower: JoinHandle<()>,
}

impl ServedApi for RunningApi {
    fn stop(self: Box<Self>) {
        self.server.stop();
        self.follower.abort();
    }
}

async fn start_kube_api(cluster: &Arc<ClusterState>, f: &Arc<Formation>) -> Result<(), String> {
    let created_unix = now_unix();
    let server_cert = f
        .kube
        .server_cert(f.kube_bind.ip())
        .map_err(|e| format!("API server certificate: {e}"))?;
    let (tx, rx) = watch::channel(facts_of(cluster, created_unix));
    let server = KubeApiServer::start_at(f.kube_bind, &server_cert, &f.kube.ca_pem, rx)
        .await
        .map_err(|e| e.to_string())?;
    let follower = tokio::spawn(follow(cluster.clone(), created_unix, tx));
    f.serve_api(Box::new(RunningApi { server, follower }));
    Ok(())
}
