//! A cluster the sim forms from a machine config (a VM booting a config that names a cluster the
//! sim does not have): its PKI from the config's own CAs, etcd waiting for `Bootstrap` and then
//! forming, the Kubernetes API answering on `controlPlane.endpoint` once etcd has quorum, and
//! kubelets registering nodes that then become Ready.
use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tonic::Status;

use super::Core;
use super::apid::Target;
use super::kube_api::KubeApiServer;
use super::kube_api::kubeconfig::{KubeconfigEntry, build};
use super::kube_api::pki::KubePki;
use super::kube_link::{facts_of, follow};
use super::opennebula::now_unix;
use super::pki::{Pki, load_key_pem};
use super::scenario::NodeRole;
use super::state::{ClusterState, SimNode};

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
/// `controlPlane.endpoint` without a port: Kubernetes API's default.
const DEFAULT_API_PORT: u16 = 6443;

/// How far the cluster has formed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FormationStage {
    /// etcd on every control plane waits to join; `Bootstrap` is what starts it.
    AwaitingBootstrap,
    /// `Bootstrap` was accepted; etcd starts in bootstrap mode.
    EtcdStarting,
    /// etcd has a leader; other control planes join it.
    EtcdUp,
    /// The Kubernetes API answers on the endpoint; kubelets register.
    ApiUp,
}

/// What a cluster is formed from: the values of its first control plane's machine config.
pub(crate) struct ClusterSeed {
    /// `cluster.controlPlane.endpoint`, e.g. `https://127.61.4.1:6443`.
    pub endpoint: String,
    pub os_ca: (String, String),
    pub cluster_ca: (String, String),
    pub machine_token: String,
}

#[derive(Default)]
struct Progress {
    /// Nodes whose boot finished (apid up with the cluster's certificate).
    booted: BTreeSet<usize>,
    /// Nodes whose etcd data directory is not empty (bootstrapped or joined).
    etcd_data: BTreeSet<usize>,
    /// Nodes whose kubelet registered a Node.
    registered: BTreeSet<usize>,
}

/// A formed cluster's own state, beside its `ClusterState`.
pub(crate) struct Formation {
    pub os: Pki,
    kube: KubePki,
    pub endpoint: String,
    kube_bind: SocketAddr,
    pub machine_token: String,
    progress: Mutex<Progress>,
    stage: watch::Sender<FormationStage>,
    kube_api: Mutex<Option<(KubeApiServer, JoinHandle<()>)>>,
    retired: AtomicBool,
}

/// `https://HOST[:PORT][/...]` with an IPv4 loopback host.
fn endpoint_bind(endpoint: &str) -> Result<SocketAddr, String> {
    let rest = endpoint
        .strip_prefix("https://")
        .ok_or_else(|| format!("controlPlane.endpoint {endpoint:?} is not an https URL"))?;
    let authority = rest.split('/').next().unwrap_or_default();
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (
            h,
            p.parse::<u16>()
                .map_err(|_| format!("controlPlane.endpoint {endpoint:?}: bad port"))?,
        ),
        None => (authority, DEFAULT_API_PORT),
    };
    let ip: Ipv4Addr = host.parse().map_err(|_| {
        format!("controlPlane.endpoint {endpoint:?}: the sim serves IPv4 addresses only")
    })?;
    if !ip.is_loopback() {
        return Err(format!(
            "controlPlane.endpoint {endpoint:?} is outside 127.0.0.0/8"
        ));
    }
    Ok(SocketAddr::new(IpAddr::V4(ip), port))
}

impl Formation {
    /// Checks the seed (both CAs with their keys, a loopback endpoint) and loads the PKI.
    pub fn new(seed: &ClusterSeed) -> Result<Formation, String> {
        let kube_bind = endpoint_bind(&seed.endpoint)?;
        let missing = |what: &str| format!("the machine config has no {what}");
        if seed.os_ca.0.is_empty() || seed.os_ca.1.is_empty() {
            return Err(missing("machine.ca (crt and key)"));
        }
        if seed.cluster_ca.0.is_empty() || seed.cluster_ca.1.is_empty() {
            return Err(missing("cluster.ca (crt and key)"));
        }
        let os = Pki::from_os_ca(&seed.os_ca.0, &seed.os_ca.1).map_err(|e| e.to_string())?;
        let kube_key =
            load_key_pem(&seed.cluster_ca.1).map_err(|e| format!("cluster.ca.key: {e}"))?;
        let kube = KubePki::from_ca(&seed.cluster_ca.0, kube_key)
            .map_err(|e| format!("cluster.ca.crt: {e}"))?;
        Ok(Formation {
            os,
            kube,
            endpoint: seed.endpoint.clone(),
            kube_bind,
            machine_token: seed.machine_token.clone(),
            progress: Mutex::new(Progress::default()),
            stage: watch::channel(FormationStage::AwaitingBootstrap).0,
            kube_api: Mutex::new(None),
            retired: AtomicBool::new(false),
        })
    }

    fn progress(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn stage(&self) -> FormationStage {
        *self.stage.borrow()
    }

    /// Whether the node's kubelet registered its Node (the Kubernetes API lists it).
    pub fn registered(&self, node_index: usize) -> bool {
        self.progress().registered.contains(&node_index)
    }

    /// Whether the config's OS CA is this cluster's (a joining node's config must carry it).
    pub fn same_os_ca(&self, crt_pem: &str) -> bool {
        self.os.ca_pem().trim() == crt_pem.trim()
    }

    pub fn is_retired(&self) -> bool {
        self.retired.load(Ordering::Relaxed)
    }

    /// Every node is gone: the cluster stops answering and its name is free again.
    pub fn retire(&self) {
        self.retired.store(true, Ordering::Relaxed);
        if let Some((server, follower)) = self
            .kube_api
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            server.stop();
            follower.abort();
        }
    }

    fn set_stage(&self, stage: FormationStage) {
        self.stage.send_replace(stage);
    }
}

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

/// `MachineService.Bootstrap`, its answer recorded whatever it is (upstream logs "bootstrap
/// request received" before any check: v1alpha1_server.go `Bootstrap`).
pub(crate) fn bootstrap(core: &Arc<Core>, t: &Target) -> Result<(), Status> {
    let answer = answer_bootstrap(core, t);
    let code = answer
        .as_ref()
        .map_or_else(Status::code, |()| tonic::Code::Ok);
    core.fleet
        .record
        .bootstrap_answered(t.cluster.name(), t.node.name(), code);
    answer
}

/// Bootstrap as v1alpha1_server.go `Bootstrap` checks it, in its order: CRI up
/// (`IsBootstrapAllowed`), a control plane, then an empty etcd data directory.
fn answer_bootstrap(core: &Arc<Core>, t: &Target) -> Result<(), Status> {
    let status = t.node.status();
    let cri_up = status.up && !status.rebooting;
    if !cri_up {
        return Err(Status::failed_precondition(
            "bootstrap is not available yet",
        ));
    }
    if t.node.role() != NodeRole::ControlPlane {
        return Err(Status::failed_precondition(
            "bootstrap can only be performed on a control plane node",
        ));
    }
    let not_empty = || Status::already_exists("etcd data directory is not empty");
    // A cluster the sim started with was bootstrapped long ago: every control plane has data.
    let Some(f) = t.cluster.formation.clone() else {
        return Err(not_empty());
    };
    {
        let mut p = f.progress();
        if !p.booted.contains(&t.node.node_index) {
            return Err(Status::failed_precondition(
                "bootstrap is not available yet",
            ));
        }
        if !p.etcd_data.insert(t.node.node_index) {
            return Err(not_empty());
        }
    }
    super::machine_changes::record(core, t, "MachineService.Bootstrap");
    if f.stage() == FormationStage::AwaitingBootstrap {
        f.set_stage(FormationStage::EtcdStarting);
        tokio::spawn(form(
            core.clone(),
            t.cluster.clone(),
            t.node.clone(),
            f.clone(),
        ));
    }
    // A control plane still waiting to join a cluster already bootstrapped elsewhere starts a
    // second etcd upstream; the sim records the call and lets the node join the first one.
    Ok(())
}

/// etcd from bootstrap to quorum, then the API, then every booted node's kubelet.
async fn form(core: Arc<Core>, cluster: Arc<ClusterState>, first: Arc<SimNode>, f: Arc<Formation>) {
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
    *f.kube_api.lock().unwrap_or_else(|e| e.into_inner()) = Some((server, follower));
    Ok(())
}

/// `MachineService.Kubeconfig` as v1alpha1_server.go `Kubeconfig`: control planes only; the
/// admin kubeconfig (`kubeconfig.GenerateAdmin`: client certificate CN=admin,
/// O=system:masters from the cluster CA, server = `controlPlane.endpoint`) in a .tar.gz holding
/// one file `kubeconfig`, sent as one `common.Data`.
pub(crate) fn kubeconfig(t: &Target) -> Result<Vec<u8>, Status> {
    if t.node.role() != NodeRole::ControlPlane {
        return Err(Status::unimplemented(
            "kubeconfig is only available on control plane nodes",
        ));
    }
    let Some(f) = t.cluster.formation.clone() else {
        return Err(Status::unavailable(
            "this sim cluster has no cluster CA key (it was not formed from a machine config)",
        ));
    };
    let internal = |e: String| Status::internal(e);
    let client = f
        .kube
        .client_cert("admin", "system:masters", false)
        .map_err(|e| internal(e.to_string()))?;
    let name = t.cluster.name();
    let config = build(&[KubeconfigEntry {
        cluster: name.to_string(),
        context: format!("admin@{name}"),
        server: f.endpoint.clone(),
        ca_b64: f.kube.ca_b64(),
        client,
    }]);
    let text = serde_saphyr::to_string(&config).map_err(|e| internal(e.to_string()))?;
    tar_gz_one_file("kubeconfig", text.as_bytes()).map_err(|e| internal(e.to_string()))
}

fn tar_gz_one_file(name: &str, data: &[u8]) -> std::io::Result<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(data.len() as u64);
    header.set_mode(0o600);
    header.set_mtime(now_unix().max(0) as u64);
    header.set_cksum();
    tar.append_data(&mut header, name, data)?;
    tar.into_inner()?.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_bind_loopback_only() {
        assert_eq!(
            endpoint_bind("https://127.61.4.1:6443").unwrap(),
            "127.61.4.1:6443".parse().unwrap()
        );
        assert_eq!(
            endpoint_bind("https://127.0.0.9").unwrap(),
            "127.0.0.9:6443".parse().unwrap()
        );
        assert!(endpoint_bind("https://10.0.0.1:6443").is_err());
        assert!(endpoint_bind("http://127.0.0.1:6443").is_err());
        assert!(endpoint_bind("https://lab.example:6443").is_err());
    }

    /// Upstream's own secrets (Ed25519 OS CA in `ED25519 PRIVATE KEY`, SEC1 `EC PRIVATE KEY`
    /// Kubernetes CA) form a cluster whose CAs issue what the sim serves.
    #[test]
    fn upstream_secrets_form_a_cluster() {
        use base64::Engine as _;
        let text = include_str!("testdata/upstream_secrets_v1.11.3.yaml");
        let bundle: serde_json::Value = serde_saphyr::from_str(text).expect("secrets YAML");
        let pem = |path: &str| {
            let b64 = bundle.pointer(path).and_then(|v| v.as_str()).expect(path);
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("base64");
            String::from_utf8(bytes).expect("PEM")
        };
        let seed = ClusterSeed {
            endpoint: "https://127.61.0.1:6443".into(),
            os_ca: (pem("/certs/os/crt"), pem("/certs/os/key")),
            cluster_ca: (pem("/certs/k8s/crt"), pem("/certs/k8s/key")),
            machine_token: "oamejv.9tk1nhuwnlc2nghf".into(),
        };
        let f = Formation::new(&seed).expect("a cluster from upstream's secrets");
        assert!(f.same_os_ca(&seed.os_ca.0));
        f.os.client_cert(&["os:admin"], crate::pki::Validity::Current)
            .expect("an admin certificate from the OS CA");
        f.kube
            .server_cert(f.kube_bind.ip())
            .expect("the API's certificate from the cluster CA");
        f.kube
            .client_cert("admin", "system:masters", false)
            .expect("the kubeconfig's certificate");
    }

    #[test]
    fn the_archive_holds_one_file() {
        let gz = tar_gz_one_file("kubeconfig", b"apiVersion: v1\n").unwrap();
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(&gz[..]));
        let entries: Vec<(String, u64)> = archive
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.path().unwrap().display().to_string(), e.size())
            })
            .collect();
        assert_eq!(entries, [("kubeconfig".to_string(), 15)]);
    }
}
