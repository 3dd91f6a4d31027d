//! The one collector: a round over one cluster that lists its nodes from every
//! source (`membership`), probes them, reads etcd and the Kubernetes side, and
//! reports each answer as a [`FleetEvent`]. The console's poller streams its
//! rounds to the app; `status`, the headless commands and the upgrade runner
//! fold one round with the same `ClusterLive::apply`, so all see one model.
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::BoxFuture;
use kube::config::Kubeconfig;
use tokio::sync::{mpsc, oneshot};

use super::collect::{CollectOptions, cluster_members, collect_etcd, etcd_members, probe_nodes};
use super::kubernetes::{
    KubernetesFacts, collect_kubernetes, kube_client_for, unusable_kube_context,
};
use super::live::{ClusterLive, FleetEvent};
use super::membership::{NodePlan, NodeSources, node_list};
use super::status::{ClusterStatus, EtcdReport, KubernetesReport, NodeRole, NodeStatus};
use crate::discovery::{Cluster, TalosContext};
use crate::kube::{KubeClient, KubeError, KubeNode};
use crate::talos::{ClientOptions, TalosClient};

/// Bound on building a kube client (an exec plugin may run, or hang).
const KUBE_CLIENT_BUILD_TIMEOUT: Duration = Duration::from_secs(30);

/// The receiver of events is gone: stop quietly.
#[derive(Debug)]
pub struct Closed;

pub async fn emit(tx: &mpsc::Sender<FleetEvent>, event: FleetEvent) -> Result<(), Closed> {
    tx.send(event).await.map_err(|_| Closed)
}

/// The Talos side of a cluster, as far as its context allows.
#[derive(Clone)]
pub enum TalosSide {
    Ready {
        client: TalosClient,
        /// The talosconfig context's nodes (its endpoints when it names none).
        nodes: Vec<String>,
    },
    /// The context's certificates or endpoints are unusable.
    Unusable {
        role: String,
        error: String,
        nodes: Vec<String>,
    },
}

impl TalosSide {
    /// The client for `ctx`, or why there is none.
    pub fn for_context(cluster: &str, ctx: &TalosContext, options: ClientOptions) -> TalosSide {
        let nodes = if ctx.nodes.is_empty() {
            ctx.endpoints
                .iter()
                .filter_map(|e| crate::discovery::host_of(e))
                .collect()
        } else {
            ctx.nodes.clone()
        };
        match TalosClient::new(ctx, options) {
            Ok(client) => TalosSide::Ready { client, nodes },
            Err(err) => {
                tracing::warn!(cluster, "talos context unusable: {err}");
                let role = crate::talos::tls::read_client_certificate(&ctx.name, &ctx.crt_pem)
                    .map(|c| c.roles.to_string())
                    .unwrap_or_default();
                TalosSide::Unusable {
                    role,
                    error: err.to_string(),
                    nodes,
                }
            }
        }
    }

    /// An existing client on the context's `nodes` (its endpoints when empty).
    pub fn with_client(client: TalosClient, nodes: &[String]) -> TalosSide {
        let nodes = if nodes.is_empty() {
            client
                .endpoints()
                .iter()
                .filter_map(|e| crate::discovery::host_of(e))
                .collect()
        } else {
            nodes.to_vec()
        };
        TalosSide::Ready { client, nodes }
    }
}

/// Where a round gets its kube client.
pub enum KubeSource {
    None,
    Client(KubeClient),
    Build(Arc<Cluster>, Option<Arc<Kubeconfig>>),
}

/// The whole status of one cluster from one round: what `status` prints and
/// the upgrade runner watches, folded exactly as the console folds its rounds.
pub async fn collect_status(
    name: &str,
    talos: Option<TalosSide>,
    kube: KubeSource,
    options: CollectOptions,
) -> ClusterStatus {
    let (tx, mut rx) = mpsc::channel(64);
    let mut live = ClusterLive::named(name);
    let round = async move {
        // Nobody stops listening before the round ends, so Closed cannot happen.
        let _ = collect_round(name, talos, kube, options, &tx).await;
    };
    let fold = async {
        while let Some(event) = rx.recv().await {
            live.apply(event);
        }
    };
    tokio::join!(round, fold);
    live.status
}

/// Status of a discovered cluster: its Talos context and its paired kube context.
pub async fn collect_discovered(
    cluster: &Cluster,
    kubeconfig: Option<Arc<Kubeconfig>>,
    options: CollectOptions,
) -> ClusterStatus {
    let talos = cluster
        .talos
        .as_ref()
        .map(|ctx| TalosSide::for_context(&cluster.name, ctx, options.client));
    let kube = if cluster.kube.is_some() {
        KubeSource::Build(Arc::new(cluster.clone()), kubeconfig)
    } else {
        KubeSource::None
    };
    collect_status(&cluster.name, talos, kube, options).await
}

/// Status of one cluster's Talos side through an existing client (`nodes`
/// empty: the endpoints), without Kubernetes.
pub async fn collect_cluster(
    client: &TalosClient,
    name: &str,
    nodes: &[String],
    options: &CollectOptions,
) -> ClusterStatus {
    let talos = TalosSide::with_client(client.clone(), nodes);
    collect_status(name, Some(talos), KubeSource::None, *options).await
}

/// Status of one cluster's Talos side from its talosconfig context. A context
/// whose certificates or endpoints are unusable yields a cluster with `error` set.
pub async fn collect_context(
    name: &str,
    ctx: &TalosContext,
    options: &CollectOptions,
) -> ClusterStatus {
    let talos = TalosSide::for_context(name, ctx, options.client);
    collect_status(name, Some(talos), KubeSource::None, *options).await
}

/// One round: ClusterInfo, each node as it answers, etcd once the control
/// planes answered, Kubernetes beside it, and the node list last (nodes that
/// left go). Hands back the kube client for the next round.
pub async fn collect_round(
    name: &str,
    talos: Option<TalosSide>,
    kube: KubeSource,
    options: CollectOptions,
    tx: &mpsc::Sender<FleetEvent>,
) -> Result<Option<KubeClient>, Closed> {
    let has_talos = talos.is_some();
    let (kube_nodes_tx, kube_nodes) = oneshot::channel();
    let talos_part = async {
        match talos {
            None => emit(tx, cluster_info(name, String::new(), None)).await,
            Some(TalosSide::Unusable { role, error, nodes }) => {
                report_unusable(name, role, error, &nodes, tx).await
            }
            Some(TalosSide::Ready { client, nodes }) => {
                let role = client.roles().to_string();
                emit(tx, cluster_info(name, role, None)).await?;
                let asked = (nodes.as_slice(), options.member_sources);
                poll_talos(name, &client, asked, kube_nodes, tx).await
            }
        }
    };
    let bound = options.client.connect_timeout + options.client.call_timeout;
    let kube_part = poll_kubernetes(name, kube, bound, has_talos, kube_nodes_tx, tx);
    let (talos_done, kube_client) = tokio::join!(talos_part, kube_part);
    talos_done?;
    kube_client
}

fn cluster_info(name: &str, role: String, error: Option<String>) -> FleetEvent {
    FleetEvent::ClusterInfo {
        cluster: name.to_string(),
        role,
        error,
        at: Instant::now(),
    }
}

async fn report_unusable(
    name: &str,
    role: String,
    error: String,
    nodes: &[String],
    tx: &mpsc::Sender<FleetEvent>,
) -> Result<(), Closed> {
    emit(tx, cluster_info(name, role, Some(error.clone()))).await?;
    let at = Instant::now();
    for node in nodes {
        let status = NodeStatus {
            name: node.clone(),
            address: node.clone(),
            error: Some(error.clone()),
            ..Default::default()
        };
        emit(
            tx,
            FleetEvent::Node {
                cluster: name.to_string(),
                node: status,
                at,
            },
        )
        .await?;
    }
    Ok(())
}

/// Lists the nodes (talosconfig, discovery members, etcd members), probes
/// them, then adds the nodes only Kubernetes knows once its answer is in,
/// and reports the final list.
async fn poll_talos(
    name: &str,
    client: &TalosClient,
    (nodes, member_sources): (&[String], usize),
    kube_nodes: oneshot::Receiver<Vec<KubeNode>>,
    tx: &mpsc::Sender<FleetEvent>,
) -> Result<(), Closed> {
    let (members, etcd) = tokio::join!(
        cluster_members(client, nodes, member_sources),
        etcd_members(client, nodes, member_sources),
    );
    let mut sources = NodeSources {
        talosconfig: nodes,
        members: members.as_deref(),
        etcd: etcd.as_deref(),
        kubernetes: None,
    };
    let first = node_list(&sources);
    probe_streaming(name, client, first.clone(), tx).await?;
    let kube = kube_nodes.await.ok();
    sources.kubernetes = kube.as_deref();
    let last = node_list(&sources);
    let only_kubernetes: Vec<NodePlan> = last
        .iter()
        .filter(|p| !first.iter().any(|f| f.address == p.address))
        .cloned()
        .collect();
    let mut probes = probe_nodes(client, only_kubernetes);
    while let Some(probe) = probes.next().await {
        emit(tx, node_event(name, probe.status)).await?;
    }
    emit(
        tx,
        FleetEvent::Membership {
            cluster: name.to_string(),
            nodes: last,
            answered: sources.answered(),
            at: Instant::now(),
        },
    )
    .await
}

fn node_event(name: &str, node: NodeStatus) -> FleetEvent {
    FleetEvent::Node {
        cluster: name.to_string(),
        node,
        at: Instant::now(),
    }
}

/// Streams each node's probe as it answers; etcd is read as soon as every
/// node that may be a control plane has answered (or failed).
async fn probe_streaming(
    name: &str,
    client: &TalosClient,
    plans: Vec<NodePlan>,
    tx: &mpsc::Sender<FleetEvent>,
) -> Result<(), Closed> {
    let mut control_planes: HashSet<String> = plans
        .iter()
        .filter(|p| p.role != NodeRole::Worker)
        .map(|p| p.address.clone())
        .collect();
    let mut answered_cps = Vec::new();
    let read_etcd = |probes: Vec<_>| -> BoxFuture<'_, EtcdReport> {
        Box::pin(async move { collect_etcd(client, &probes).await })
    };
    let mut etcd = control_planes.is_empty().then(|| read_etcd(Vec::new()));
    let mut etcd_sent = false;
    let mut probes = probe_nodes(client, plans);
    let mut probes_done = false;
    while !(probes_done && etcd_sent) {
        tokio::select! {
            probe = probes.next(), if !probes_done => {
                let Some(probe) = probe else {
                    probes_done = true;
                    if etcd.is_none() {
                        etcd = Some(read_etcd(std::mem::take(&mut answered_cps)));
                    }
                    continue;
                };
                emit(tx, node_event(name, probe.status.clone())).await?;
                if control_planes.remove(&probe.status.address) {
                    answered_cps.push(probe);
                    if control_planes.is_empty() && etcd.is_none() {
                        etcd = Some(read_etcd(std::mem::take(&mut answered_cps)));
                    }
                }
            }
            report = pending_or(etcd.as_mut()), if etcd.is_some() && !etcd_sent => {
                etcd_sent = true;
                emit(tx, FleetEvent::Etcd {
                    cluster: name.to_string(),
                    etcd: report,
                    at: Instant::now(),
                }).await?;
            }
        }
    }
    Ok(())
}

/// The Kubernetes side; builds the client on first use (it may run an exec
/// plugin) and hands it back for the next round. Bounded as a whole: kube's
/// own retries (503s are retried for minutes) never hold the round. The node
/// list goes to the Talos side when the API listed it.
async fn poll_kubernetes(
    name: &str,
    source: KubeSource,
    bound: Duration,
    has_talos: bool,
    kube_nodes: oneshot::Sender<Vec<KubeNode>>,
    tx: &mpsc::Sender<FleetEvent>,
) -> Result<Option<KubeClient>, Closed> {
    let client = match source {
        KubeSource::None => return Ok(None),
        KubeSource::Client(client) => client,
        KubeSource::Build(cluster, kubeconfig) => {
            let built = tokio::time::timeout(
                KUBE_CLIENT_BUILD_TIMEOUT,
                kube_client_for(&cluster, kubeconfig.as_deref()),
            )
            .await;
            match built {
                Ok(None) => return Ok(None),
                Ok(Some(Ok(client))) => client,
                Ok(Some(Err(err))) => return report_kube_failure(name, &err, has_talos, tx).await,
                Err(_) => {
                    let err = KubeError::Config {
                        context: cluster.kube_context().unwrap_or_default().to_string(),
                        message: format!(
                            "building the client took longer than {KUBE_CLIENT_BUILD_TIMEOUT:?}"
                        ),
                    };
                    return report_kube_failure(name, &err, has_talos, tx).await;
                }
            }
        }
    };
    let facts = match tokio::time::timeout(bound, collect_kubernetes(&client)).await {
        Ok(facts) => facts,
        Err(_) => {
            tracing::debug!(cluster = %name, "Kubernetes API did not answer within {bound:?}");
            let error = KubeError::Unreachable {
                context: client.context().to_string(),
                message: format!("no complete answer within {bound:?}"),
            }
            .to_string();
            // The Lease was not read either (an API down with its etcd answers only at the
            // request deadline): said, not taken for none.
            KubernetesFacts {
                report: KubernetesReport {
                    error: Some(error.clone()),
                    ..Default::default()
                },
                rollout_unread: Some(error),
                ..Default::default()
            }
        }
    };
    if facts.nodes_listed() {
        let _ = kube_nodes.send(facts.nodes.clone());
    }
    emit(
        tx,
        FleetEvent::Kubernetes {
            cluster: name.to_string(),
            facts: Box::new(facts),
            at: Instant::now(),
        },
    )
    .await?;
    Ok(Some(client))
}

async fn report_kube_failure(
    name: &str,
    err: &KubeError,
    has_talos: bool,
    tx: &mpsc::Sender<FleetEvent>,
) -> Result<Option<KubeClient>, Closed> {
    tracing::warn!(cluster = %name, "kube client unusable: {err}");
    if !has_talos {
        // Nothing else can be asked: the cluster itself is in error.
        emit(tx, cluster_info(name, String::new(), Some(err.to_string()))).await?;
    }
    emit(
        tx,
        FleetEvent::Kubernetes {
            cluster: name.to_string(),
            facts: Box::new(unusable_kube_context(err)),
            at: Instant::now(),
        },
    )
    .await?;
    Ok(None)
}

/// Awaits an optional in-flight future; never resolves when there is none
/// (the `select!` branch using it is disabled then anyway).
pub async fn pending_or<F: std::future::Future + Unpin>(fut: Option<&mut F>) -> F::Output {
    match fut {
        Some(fut) => fut.await,
        None => std::future::pending().await,
    }
}
