//! A cluster the sim forms from a machine config (a VM booting a config that names a cluster the
//! sim does not have): its PKI from the config's own CAs, how far it has formed (etcd waiting for
//! `Bootstrap`, etcd up, the Kubernetes API answering on `controlPlane.endpoint`), and which
//! nodes booted, hold etcd data and registered. node_life/formation.rs moves it along.
use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use tokio::sync::watch;

use super::kube_pki::KubePki;
use super::pki::{Pki, load_key_pem};

/// `controlPlane.endpoint` without a port: Kubernetes API's default.
const DEFAULT_API_PORT: u16 = 6443;

/// The Kubernetes API a formed cluster serves once etcd has quorum, stopped when the cluster
/// retires. The layer that starts it hands it in, so the model holds no server.
pub(crate) trait ServedApi: Send {
    fn stop(self: Box<Self>);
}

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
pub(crate) struct Progress {
    /// Nodes whose boot finished (apid up with the cluster's certificate).
    pub(crate) booted: BTreeSet<usize>,
    /// Nodes whose etcd data directory is not empty (bootstrapped or joined).
    pub(crate) etcd_data: BTreeSet<usize>,
    /// Nodes whose kubelet registered a Node.
    pub(crate) registered: BTreeSet<usize>,
}

/// A formed cluster's own state, beside its `ClusterState`.
pub(crate) struct Formation {
    pub os: Pki,
    pub(crate) kube: KubePki,
    pub endpoint: String,
    pub(crate) kube_bind: SocketAddr,
    pub machine_token: String,
    progress: Mutex<Progress>,
    stage: watch::Sender<FormationStage>,
    api: Mutex<Option<Box<dyn ServedApi>>>,
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
            api: Mutex::new(None),
            retired: AtomicBool::new(false),
        })
    }

    pub(crate) fn progress(&self) -> MutexGuard<'_, Progress> {
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
        if let Some(api) = self.api.lock().unwrap_or_else(|e| e.into_inner()).take() {
            api.stop();
        }
    }

    pub(crate) fn set_stage(&self, stage: FormationStage) {
        self.stage.send_replace(stage);
    }

    /// Keeps the cluster's Kubernetes API until the cluster retires.
    pub(crate) fn serve_api(&self, api: Box<dyn ServedApi>) {
        *self.api.lock().unwrap_or_else(|e| e.into_inner()) = Some(api);
    }
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
        let text = include_str!("../testdata/upstream_secrets_v1.11.3.yaml");
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
        f.os.client_cert(&["os:admin"], crate::model::pki::Validity::Current)
            .expect("an admin certificate from the OS CA");
        f.kube
            .server_cert(f.kube_bind.ip())
            .expect("the API's certificate from the cluster CA");
        f.kube
            .client_cert("admin", "system:masters", false)
            .expect("the kubeconfig's certificate");
    }
}
