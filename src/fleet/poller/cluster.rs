//! One cluster's poller task: its schedule (focused or background, refresh on
//! demand, never two rounds at once), its clients, and the poll round that
//! streams node probes, etcd and the Kubernetes side as they answer.
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant as StdInstant};

use futures::StreamExt;
use futures::future::BoxFuture;
use kube::config::Kubeconfig;
use tokio::sync::{Semaphore, mpsc, watch as flag};
use tokio::time::Instant;

use super::watch::{NodeWatch, watch_node};
use super::{PollerOptions, pending_or};
use crate::discovery::Cluster;
use crate::fleet::collect::{cluster_members, collect_etcd, plan_nodes, probe_nodes};
use crate::fleet::kubernetes::KubernetesFacts;
use crate::fleet::kubernetes::{collect_kubernetes, kube_client_for, unusable_kube_context};
use crate::fleet::live::FleetEvent;
use crate::fleet::status::KubernetesReport;
use crate::fleet::status::{EtcdReport, NodeRole, NodeStatus};
use crate::kube::{KubeClient, KubeError};
use crate::talos::TalosClient;

/// How many nodes are asked at once for the member list.
const MEMBER_SOURCES: usize = 3;
/// Bound on building a kube client (an exec plugin may run, or hang).
const KUBE_CLIENT_BUILD_TIMEOUT: Duration = Duration::from_secs(30);

/// What the supervisor tells one cluster task.
#[derive(Debug)]
pub(super) enum ClusterCommand {
    Focused(bool),
    PollNow,
    Watch(String),
    Unwatch,
}

/// The receiver of events is gone: stop quietly.
struct Closed;

async fn emit(tx: &mpsc::Sender<FleetEvent>, event: FleetEvent) -> Result<(), Closed> {
    tx.send(event).await.map_err(|_| Closed)
}

/// The Talos side of a cluster, as far as its context allows.
#[derive(Clone)]
enum TalosSide {
    Ready {
        client: TalosClient,
        nodes: Vec<String>,
    },
    /// The context's certificates or endpoints are unusable.
    Unusable {
        role: String,
        error: String,
        nodes: Vec<String>,
    },
}

/// Where a round gets its kube client.
enum KubeSource {
    None,
    Client(KubeClient),
    Build(Arc<Cluster>, Option<Arc<Kubeconfig>>),
}

type Round = BoxFuture<'static, Result<Option<KubeClient>, Closed>>;

pub(super) struct ClusterTask {
    cluster: Arc<Cluster>,
    kubeconfig: Option<Arc<Kubeconfig>>,
    options: PollerOptions,
    rounds: Arc<Semaphore>,
    events: mpsc::Sender<FleetEvent>,
    /// Built on the task (not the caller's thread) at the first round.
    talos: Option<TalosSide>,
    talos_built: bool,
    kube: Option<KubeClient>,
    /// Whether the cluster is on screen; its rounds skip the queue.
    focused: flag::Sender<bool>,
}

impl ClusterTask {
    pub(super) fn new(
        cluster: Cluster,
        kubeconfig: Option<Arc<Kubeconfig>>,
        options: PollerOptions,
        rounds: Arc<Semaphore>,
        events: mpsc::Sender<FleetEvent>,
    ) -> Self {
        ClusterTask {
            cluster: Arc::new(cluster),
            kubeconfig,
            options,
            rounds,
            events,
            talos: None,
            talos_built: false,
            kube: None,
            focused: flag::Sender::new(false),
        }
    }

    fn name(&self) -> &str {
        &self.cluster.name
    }

    fn talos_side(&mut self) -> Option<TalosSide> {
        if !self.talos_built {
            self.talos_built = true;
            self.talos = self.cluster.talos.as_ref().map(|ctx| {
                let nodes = if ctx.nodes.is_empty() {
                    ctx.endpoints
                        .iter()
                        .filter_map(|e| crate::discovery::host_of(e))
                        .collect()
                } else {
                    ctx.nodes.clone()
                };
                match TalosClient::new(ctx, self.options.client) {
                    Ok(client) => TalosSide::Ready { client, nodes },
                    Err(err) => {
                        tracing::warn!(cluster = %self.cluster.name, "talos context unusable: {err}");
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
            });
        }
        self.talos.clone()
    }

    fn start_round(&mut self) -> Round {
        let talos = self.talos_side();
        let kube = match self.kube.take() {
            Some(client) if !client.credentials_expired() => KubeSource::Client(client),
            _ if self.cluster.kube.is_some() => {
                KubeSource::Build(self.cluster.clone(), self.kubeconfig.clone())
            }
            _ => KubeSource::None,
        };
        let client = self.options.client;
        Box::pin(poll_round(
            self.name().to_string(),
            talos,
            (kube, client.connect_timeout + client.call_timeout),
            self.rounds.clone(),
            self.focused.subscribe(),
            self.events.clone(),
        ))
    }

    fn interval(&self, focused: bool) -> Duration {
        if focused {
            self.options.focused_interval
        } else {
            self.options.background_interval
        }
    }

    /// Runs until the supervisor goes away or nobody listens for events.
    pub(super) async fn run(mut self, mut commands: mpsc::UnboundedReceiver<ClusterCommand>) {
        let mut focused = false;
        // The first round starts at once.
        let mut next_due = Instant::now();
        let mut last_finished: Option<Instant> = None;
        let mut round: Option<Round> = None;
        // A guard: dropping it stops the node watch.
        let mut _watch: Option<NodeWatch> = None;
        loop {
            tokio::select! {
                cmd = commands.recv() => {
                    let Some(cmd) = cmd else { return };
                    match cmd {
                        ClusterCommand::Focused(f) => {
                            focused = f;
                            self.focused.send_replace(f);
                            next_due = if f {
                                Instant::now()
                            } else {
                                last_finished.map_or_else(Instant::now, |t| t + self.interval(false))
                            };
                        }
                        // A running round already brings fresh data.
                        ClusterCommand::PollNow => next_due = Instant::now(),
                        ClusterCommand::Watch(node) => {
                            // The old watch stops before the new one opens.
                            drop(_watch.take());
                            _watch = self.watch(node).await;
                        }
                        ClusterCommand::Unwatch => _watch = None,
                    }
                }
                done = pending_or(round.as_mut()), if round.is_some() => {
                    round = None;
                    match done {
                        Ok(kube) => self.kube = kube,
                        Err(Closed) => return,
                    }
                    let now = Instant::now();
                    last_finished = Some(now);
                    next_due = now + self.interval(focused);
                }
                _ = tokio::time::sleep_until(next_due), if round.is_none() => {
                    round = Some(self.start_round());
                    // Held off until this round ends.
                    next_due = Instant::now() + self.interval(focused);
                }
            }
        }
    }

    async fn watch(&mut self, node: String) -> Option<NodeWatch> {
        let name = self.name().to_string();
        let every = self.options.focused_interval;
        match self.talos_side() {
            Some(TalosSide::Ready { client, .. }) => {
                Some(watch_node(client, name, node, every, self.events.clone()))
            }
            other => {
                let why = match other {
                    Some(TalosSide::Unusable { error, .. }) => error,
                    _ => format!("cluster {name} has no Talos context"),
                };
                let _ = self
                    .events
                    .send(FleetEvent::NodeServices {
                        cluster: name,
                        node,
                        services: Err(why),
                        at: StdInstant::now(),
                    })
                    .await;
                None
            }
        }
    }
}

/// One poll round: PollStarted, ClusterInfo, each node as it answers, etcd
/// once the control planes answered, Kubernetes beside it, PollFinished.
async fn poll_round(
    name: String,
    talos: Option<TalosSide>,
    (kube, kube_bound): (KubeSource, Duration),
    rounds: Arc<Semaphore>,
    mut focused: flag::Receiver<bool>,
    tx: mpsc::Sender<FleetEvent>,
) -> Result<Option<KubeClient>, Closed> {
    // The cluster on screen never waits behind background rounds. (The
    // semaphore is never closed, so `None` only means "no permit needed".)
    let _permit = tokio::select! {
        permit = rounds.acquire_owned() => permit.ok(),
        _ = focused.wait_for(|on_screen| *on_screen) => None,
    };
    let started = StdInstant::now();
    emit(
        &tx,
        FleetEvent::PollStarted {
            cluster: name.clone(),
            at: started,
        },
    )
    .await?;
    let has_talos = talos.is_some();
    let talos_part = async {
        match talos {
            None => {
                emit(
                    &tx,
                    FleetEvent::ClusterInfo {
                        cluster: name.clone(),
                        role: String::new(),
                        error: None,
                        at: StdInstant::now(),
                    },
                )
                .await
            }
            Some(TalosSide::Unusable { role, error, nodes }) => {
                report_unusable(&name, role, error, &nodes, &tx).await
            }
            Some(TalosSide::Ready { client, nodes }) => {
                emit(
                    &tx,
                    FleetEvent::ClusterInfo {
                        cluster: name.clone(),
                        role: client.roles().to_string(),
                        error: None,
                        at: StdInstant::now(),
                    },
                )
                .await?;
                poll_talos(&name, &client, &nodes, &tx).await
            }
        }
    };
    let kube_part = poll_kubernetes(&name, kube, kube_bound, has_talos, &tx);
    let (talos_done, kube_client) = tokio::join!(talos_part, kube_part);
    talos_done?;
    let kube_client = kube_client?;
    emit(
        &tx,
        FleetEvent::PollFinished {
            cluster: name.clone(),
            at: StdInstant::now(),
        },
    )
    .await?;
    tracing::debug!(cluster = %name, took = ?started.elapsed(), "poll round finished");
    Ok(kube_client)
}

async fn report_unusable(
    name: &str,
    role: String,
    error: String,
    nodes: &[String],
    tx: &mpsc::Sender<FleetEvent>,
) -> Result<(), Closed> {
    let at = StdInstant::now();
    emit(
        tx,
        FleetEvent::ClusterInfo {
            cluster: name.to_string(),
            role,
            error: Some(error.clone()),
            at,
        },
    )
    .await?;
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

/// Streams each node's probe as it answers; etcd is read as soon as every
/// node that may be a control plane has answered (or failed).
async fn poll_talos(
    name: &str,
    client: &TalosClient,
    nodes: &[String],
    tx: &mpsc::Sender<FleetEvent>,
) -> Result<(), Closed> {
    let members = cluster_members(client, nodes, MEMBER_SOURCES).await;
    let plans = plan_nodes(nodes, members.as_deref());
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
                emit(tx, FleetEvent::Node {
                    cluster: name.to_string(),
                    node: probe.status.clone(),
                    at: StdInstant::now(),
                }).await?;
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
                    at: StdInstant::now(),
                }).await?;
            }
        }
    }
    Ok(())
}

/// The Kubernetes side; builds the client on first use (it may run an exec
/// plugin) and hands it back for the next round. Bounded as a whole: kube's
/// own retries (503s are retried for minutes) never hold the round.
async fn poll_kubernetes(
    name: &str,
    source: KubeSource,
    bound: Duration,
    has_talos: bool,
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
            KubernetesFacts {
                report: KubernetesReport {
                    error: Some(
                        KubeError::Unreachable {
                            context: client.context().to_string(),
                            message: format!("no complete answer within {bound:?}"),
                        }
                        .to_string(),
                    ),
                    ..Default::default()
                },
                ..Default::default()
            }
        }
    };
    emit(
        tx,
        FleetEvent::Kubernetes {
            cluster: name.to_string(),
            facts,
            at: StdInstant::now(),
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
    let at = StdInstant::now();
    if !has_talos {
        // Nothing else can be asked: the cluster itself is in error.
        emit(
            tx,
            FleetEvent::ClusterInfo {
                cluster: name.to_string(),
                role: String::new(),
                error: Some(err.to_string()),
                at,
            },
        )
        .await?;
    }
    emit(
        tx,
        FleetEvent::Kubernetes {
            cluster: name.to_string(),
            facts: unusable_kube_context(err),
            at,
        },
    )
    .await?;
    Ok(None)
}
