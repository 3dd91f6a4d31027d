//! The simulated Kubernetes API server: per cluster an HTTPS listener on
//! loopback with client-certificate auth, serving discovery, nodes (list,
//! watch, cordon patch), kube-system static pods and the kube-proxy DaemonSet,
//! all derived from facts the Talos sim publishes, and Leases kept in memory; with no etcd to
//! reach, storage requests time out and the health endpoints fail (etcd_down).
pub(crate) mod clusters;
mod disruption;
mod etcd_down;
mod facts;
pub mod kubeconfig;
mod leases;
mod manifests;
pub(crate) mod objects;
pub(crate) mod patch;
pub use crate::model::kube_pki as pki;
pub(crate) mod removed_versions;
mod routes;
mod workloads;

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use facts::{KubeClusterFacts, KubeNodeFacts, StaticPodFacts};
pub(crate) use routes::object_matches;
pub use workloads::{KubeAction, KubeActionKind};

pub type Body = BoxBody<Bytes, Infallible>;

#[derive(Debug, thiserror::Error)]
pub enum KubeApiError {
    #[error("kubernetes API sim for {cluster}: cannot listen on {addr}: {source}")]
    Listen {
        cluster: String,
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("kubernetes API sim for {cluster}: TLS setup: {message}")]
    Tls { cluster: String, message: String },
}

/// Resources a management cluster's API serves beside the built-in ones, as CRDs are served
/// (the Cluster API objects and their Secrets: crate::capi hands its store in).
pub(crate) trait CustomResources: Send + Sync {
    /// Whether a request path is one of these resources' (or the CRDs').
    fn owns(&self, segments: &[&str]) -> bool;
    /// The answer to a request on one of those paths.
    fn answer(&self, request: &CustomRequest<'_>) -> (hyper::StatusCode, serde_json::Value);
    /// The API groups they add to `/apis`.
    fn api_groups(&self) -> Vec<serde_json::Value>;
    /// The resources they add to the core group's `/api/v1` list.
    fn core_resources(&self) -> Vec<serde_json::Value>;
}

/// One request on a custom resource's path.
pub(crate) struct CustomRequest<'a> {
    pub method: &'a hyper::Method,
    pub segments: &'a [&'a str],
    pub query: &'a BTreeMap<String, String>,
    pub wants_table: bool,
    pub content_type: &'a str,
    pub body: &'a [u8],
}

/// Shared by every connection of one API server.
pub(crate) struct ApiState {
    pub facts: watch::Receiver<KubeClusterFacts>,
    /// Nodes an operator cordoned through the API.
    pub cordoned: Mutex<BTreeSet<String>>,
    /// Annotations clients set on nodes with merge patches (node name -> key -> value).
    pub node_annotations: Mutex<std::collections::HashMap<String, BTreeMap<String, String>>>,
    /// Bumped on every change; doubles as the resourceVersion.
    pub generation: watch::Sender<u64>,
    pub server_url: String,
    /// `coordination.k8s.io/v1` Leases, created and updated by clients.
    pub leases: leases::LeaseStore,
    /// Objects still stored in API versions a later Kubernetes removes: (list path, count).
    pub removed_api_objects: Mutex<Vec<(String, usize)>>,
    /// Workload pods, evictions and the record of cordons and evictions.
    pub workloads: workloads::Workloads,
    /// The kube-proxy DaemonSet; `None` with `cluster.proxy.disabled`.
    pub kube_proxy: Mutex<Option<manifests::KubeProxyDaemonSet>>,
    /// The custom resources a management cluster serves (the CAPI objects: crate::capi).
    pub custom: std::sync::OnceLock<Arc<dyn CustomResources>>,
}

impl ApiState {
    pub fn resource_version(&self) -> u64 {
        *self.generation.borrow()
    }

    pub fn is_cordoned(&self, node: &str) -> bool {
        self.cordoned
            .lock()
            .map(|c| c.contains(node))
            .unwrap_or(false)
    }
}

/// Drains nodes of one cluster's API (`workloads::drain`), and sets the disruption budget that
/// may refuse the drain's evictions.
#[derive(Clone)]
pub(crate) struct NodeDrainer(Arc<ApiState>);

impl NodeDrainer {
    /// Cordons `node` and evicts its pods; the pods still on it, each with why.
    pub(crate) fn drain(&self, node: &str) -> Vec<(String, String)> {
        workloads::drain(&self.0, node)
    }

    /// The PodDisruptionBudget over the Deployment's pods (see `set_disruption_budget`).
    pub(crate) fn set_disruption_budget(&self, min_available: Option<usize>) {
        self.0.workloads.set_disruption_budget(min_available);
        self.0.generation.send_modify(|g| *g += 1);
    }
}

/// A running API server; dropping it does not stop it, `stop` does.
pub struct KubeApiServer {
    pub url: String,
    pub addr: SocketAddr,
    accept_task: JoinHandle<()>,
    facts_task: JoinHandle<()>,
    state: Arc<ApiState>,
}

impl KubeApiServer {
    /// Listens on `ip` (ephemeral port) with `server` as its certificate and
    /// `client_ca_pem` as the only CA it accepts client certificates from.
    pub async fn start(
        ip: IpAddr,
        server: &pki::CertPair,
        client_ca_pem: &str,
        facts: watch::Receiver<KubeClusterFacts>,
    ) -> Result<KubeApiServer, KubeApiError> {
        Self::start_at(SocketAddr::new(ip, 0), server, client_ca_pem, facts).await
    }

    /// Listens on `bind` exactly (a formed cluster's `controlPlane.endpoint`), else as `start`.
    pub async fn start_at(
        bind: SocketAddr,
        server: &pki::CertPair,
        client_ca_pem: &str,
        facts: watch::Receiver<KubeClusterFacts>,
    ) -> Result<KubeApiServer, KubeApiError> {
        let cluster = facts.borrow().cluster.clone();
        let tls = tls_config(server, client_ca_pem).map_err(|message| KubeApiError::Tls {
            cluster: cluster.clone(),
            message,
        })?;
        let listener = TcpListener::bind(bind)
            .await
            .map_err(|source| KubeApiError::Listen {
                cluster: cluster.clone(),
                addr: bind,
                source,
            })?;
        let addr = listener
            .local_addr()
            .map_err(|source| KubeApiError::Listen {
                cluster: cluster.clone(),
                addr: bind,
                source,
            })?;
        let url = format!("https://{addr}");
        let (generation, _) = watch::channel(1u64);
        let state = Arc::new(ApiState {
            facts: facts.clone(),
            cordoned: Mutex::new(BTreeSet::new()),
            node_annotations: Mutex::default(),
            generation,
            server_url: url.clone(),
            leases: leases::LeaseStore::default(),
            removed_api_objects: Mutex::new(Vec::new()),
            workloads: workloads::Workloads::default(),
            kube_proxy: Mutex::new(Some(manifests::KubeProxyDaemonSet::created(
                &facts.borrow().kube_proxy_version,
            ))),
            custom: std::sync::OnceLock::new(),
        });
        let facts_task = tokio::spawn(bump_on_fact_changes(state.clone(), facts));
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
        let accept_task = tokio::spawn(accept_loop(listener, acceptor, state.clone()));
        Ok(KubeApiServer {
            url,
            addr,
            accept_task,
            facts_task,
            state,
        })
    }

    /// `cluster.proxy.disabled: true`: Talos renders no kube-proxy manifest
    /// (siderolabs/talos internal/app/machined/pkg/controllers/k8s/render_manifests.go), so the
    /// API has no kube-proxy DaemonSet.
    pub fn disable_kube_proxy(&self) {
        if let Ok(mut ds) = self.state.kube_proxy.lock() {
            *ds = None;
        }
    }

    /// Stores `count` objects under each list path (e.g.
    /// `/apis/flowcontrol.apiserver.k8s.io/v1beta3/flowschemas`), served as a list.
    pub fn store_removed_api_objects(&self, objects: Vec<(String, usize)>) {
        if let Ok(mut stored) = self.state.removed_api_objects.lock() {
            *stored = objects;
        }
        self.state.generation.send_modify(|g| *g += 1);
    }

    /// Cordons, uncordons and evictions clients made, in order, with their times.
    pub fn actions(&self) -> Vec<KubeAction> {
        self.state.workloads.actions()
    }

    /// The next `count` evictions are refused with 429, as a PodDisruptionBudget would.
    pub fn refuse_evictions(&self, count: usize) {
        self.state.workloads.refuse_evictions(count);
    }

    /// Puts a PodDisruptionBudget with `minAvailable: min_available` over the Deployment's
    /// pods (`None` removes it): evictions it would violate are refused with 429.
    pub fn set_disruption_budget(&self, min_available: Option<usize>) {
        self.state.workloads.set_disruption_budget(min_available);
        self.state.generation.send_modify(|g| *g += 1);
    }

    /// A handle that drains this cluster's nodes in-process (the Cluster API machine
    /// controller's drain, which talks to the workload cluster's API).
    pub(crate) fn drainer(&self) -> NodeDrainer {
        NodeDrainer(self.state.clone())
    }

    /// Makes this API server a management cluster serving `resources` (the CAPI objects).
    pub(crate) fn serve_custom(&self, resources: Arc<dyn CustomResources>) {
        let _ = self.state.custom.set(resources);
        self.state.generation.send_modify(|g| *g += 1);
    }

    /// Stops listening and drops every open connection's task.
    pub fn stop(&self) {
        self.accept_task.abort();
        self.facts_task.abort();
    }
}

impl Drop for KubeApiServer {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn bump_on_fact_changes(state: Arc<ApiState>, mut facts: watch::Receiver<KubeClusterFacts>) {
    while facts.changed().await.is_ok() {
        state.generation.send_modify(|g| *g += 1);
    }
}

fn tls_config(server: &pki::CertPair, client_ca_pem: &str) -> Result<rustls::ServerConfig, String> {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(server.cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("server certificate: {e}"))?;
    let key = PrivateKeyDer::from_pem_slice(server.key_pem.as_bytes())
        .map_err(|e| format!("server key: {e}"))?;
    let mut roots = rustls::RootCertStore::empty();
    for ca in CertificateDer::pem_slice_iter(client_ca_pem.as_bytes()) {
        let ca = ca.map_err(|e| format!("client CA: {e}"))?;
        roots.add(ca).map_err(|e| format!("client CA: {e}"))?;
    }
    let verifier = rustls::server::WebPkiClientVerifier::builder(Arc::new(roots))
        .build()
        .map_err(|e| format!("client verifier: {e}"))?;
    let mut cfg = rustls::ServerConfig::builder()
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs, key)
        .map_err(|e| format!("certificate: {e}"))?;
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(cfg)
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    state: Arc<ApiState>,
) {
    loop {
        let Ok((tcp, peer)) = listener.accept().await else {
            continue;
        };
        let acceptor = acceptor.clone();
        let state = state.clone();
        tokio::spawn(async move {
            let tls = match acceptor.accept(tcp).await {
                Ok(tls) => tls,
                Err(e) => {
                    tracing::debug!(%peer, error = %e, "kube API sim: TLS handshake refused");
                    return;
                }
            };
            let service = hyper::service::service_fn(move |req| routes::handle(state.clone(), req));
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            if let Err(e) = builder.serve_connection(TokioIo::new(tls), service).await {
                tracing::debug!(%peer, error = %e, "kube API sim: connection ended");
            }
        });
    }
}
