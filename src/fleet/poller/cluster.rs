//! One cluster's poller task: its schedule (focused or background, refresh on
//! demand, never two rounds at once) and its clients; each round is the one
//! collector's (`fleet::round`), which `status` runs too.
use std::sync::Arc;
use std::time::{Duration, Instant as StdInstant};

use futures::future::BoxFuture;
use kube::config::Kubeconfig;
use tokio::sync::{Semaphore, mpsc, watch as flag};
use tokio::time::Instant;

use super::PollerOptions;
use super::drift::{DRIFT_REREAD, read_drift};
use super::usage::{Held, UsageSchedule, read_nodes};
use super::watch::{NodeWatch, watch_node};
use crate::discovery::Cluster;
use crate::fleet::cert_expiry::{
    CertExpiry, cluster_cert_expiry, kubeconfig_client_cert, served_cert_expiry,
};
use crate::fleet::collect::CollectOptions;
use crate::fleet::live::FleetEvent;
use crate::fleet::round::{Closed, KubeSource, TalosSide, collect_round, emit, pending_or};
use crate::kube::KubeClient;
use crate::machine_config::DriftTarget;
use crate::node_resources::NodeIdentity;

/// How many nodes are asked at once for the member lists.
const MEMBER_SOURCES: usize = 3;

/// What the supervisor tells one cluster task.
#[derive(Debug)]
pub(super) enum ClusterCommand {
    Focused(bool),
    PollNow,
    Watch(String),
    Unwatch,
    /// Use this context of the cluster (in use or alternate) from the next round.
    UseContext(String),
    /// Read these nodes' usage, each once per focused interval (none: stop).
    ReadUsage(Vec<NodeIdentity>),
    /// Read these nodes' configurations now and every `DRIFT_REREAD` while focused.
    ReadConfigDrift(Vec<DriftTarget>),
}

type Round = BoxFuture<'static, Result<Option<KubeClient>, Closed>>;

type UsageRead = BoxFuture<'static, Result<Held, Closed>>;

type DriftRead = BoxFuture<'static, Result<(), Closed>>;

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
    /// The certificates the cluster's servers presented at the last reading.
    served: ServedCerts,
    /// The nodes whose usage is read (those on screen), when, and what their reads learned.
    usage: UsageSchedule,
    /// The nodes whose configurations the DRIFT column compares.
    drift_nodes: Vec<DriftTarget>,
}

/// The last reading of the certificates a cluster's servers present, and when it was made.
/// Shared with the rounds, which read them again only every `SERVED_CERTS_EVERY`: each
/// reading is a TLS handshake without a client certificate, which apid logs as a failure.
type ServedCerts = Arc<std::sync::Mutex<Option<(StdInstant, Vec<CertExpiry>)>>>;

/// How often the servers' certificates are read again (they change when renewed, which
/// Talos does at half their validity: months, not minutes).
const SERVED_CERTS_EVERY: Duration = Duration::from_secs(600);

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
            served: ServedCerts::default(),
            usage: UsageSchedule::default(),
            drift_nodes: Vec::new(),
        }
    }

    fn name(&self) -> &str {
        &self.cluster.name
    }

    /// Switches to the cluster's context `context` and drops the clients of the old one, so
    /// the next round (and node watch) builds them anew. False: not one of its contexts.
    fn use_context(&mut self, context: &str) -> bool {
        let Some(chosen) = self.cluster.with_context(context) else {
            tracing::warn!(
                cluster = self.name(),
                context,
                "poller: not a context of this cluster"
            );
            return false;
        };
        self.cluster = Arc::new(chosen);
        self.talos = None;
        self.talos_built = false;
        self.kube = None;
        true
    }

    fn talos_side(&mut self) -> Option<TalosSide> {
        if !self.talos_built {
            self.talos_built = true;
            let options = self.options.client;
            self.talos = self
                .cluster
                .talos
                .as_ref()
                .map(|ctx| TalosSide::for_context(&self.cluster.name, ctx, options));
        }
        self.talos.clone()
    }

    fn start_round(&mut self) -> Round {
        let talos = self.talos_side();
        let kube = match self.kube.take() {
            Some(client) => KubeSource::Client(client),
            _ if self.cluster.kube.is_some() => {
                KubeSource::Build(self.cluster.clone(), self.kubeconfig.clone())
            }
            _ => KubeSource::None,
        };
        let options = CollectOptions {
            client: self.options.client,
            member_sources: MEMBER_SOURCES,
        };
        Box::pin(poll_round(
            self.name().to_string(),
            talos,
            (kube, options),
            (
                self.cluster.clone(),
                self.kubeconfig.clone(),
                self.served.clone(),
            ),
            self.rounds.clone(),
            self.focused.subscribe(),
            self.events.clone(),
        ))
    }

    /// A read of the usage of the nodes on screen that are due; `None` without them or a
    /// Talos client (they are asked again an interval later).
    fn start_usage_read(&mut self) -> Option<UsageRead> {
        let every = self.interval(true);
        let (nodes, held) = self.usage.take_due(Instant::now(), every);
        if nodes.is_empty() {
            return None;
        }
        let Some(TalosSide::Ready { client, .. }) = self.talos_side() else {
            self.usage.put_back(held);
            return None;
        };
        Some(Box::pin(read_nodes(
            client,
            self.name().to_string(),
            nodes,
            held,
            self.options.client.concurrency,
            self.events.clone(),
        )))
    }

    /// A read of the nodes' configurations; `None` without them or a Talos client.
    fn start_drift_read(&mut self) -> Option<DriftRead> {
        if self.drift_nodes.is_empty() {
            return None;
        }
        let Some(TalosSide::Ready { client, .. }) = self.talos_side() else {
            return None;
        };
        let (name, nodes) = (self.name().to_string(), self.drift_nodes.clone());
        Some(Box::pin(read_drift(
            client,
            name,
            nodes,
            self.events.clone(),
        )))
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
        let mut watched: Option<String> = None;
        let mut usage: Option<UsageRead> = None;
        let mut drift: Option<DriftRead> = None;
        let mut drift_due: Option<Instant> = None;
        loop {
            // A usage read waits for the round under way: the nodes and their state come
            // first (the usage columns never hold back a cluster's nodes), and it starts as
            // the round ends.
            let usage_due = match (&usage, &round) {
                (None, None) => self.usage.due(Instant::now(), self.interval(true)),
                _ => None,
            };
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
                        // A running round already brings fresh data; the usage of the
                        // nodes on screen is read again too.
                        ClusterCommand::PollNow => {
                            next_due = Instant::now();
                            self.usage.refresh();
                        }
                        ClusterCommand::Watch(node) => {
                            // The old watch stops before the new one opens.
                            drop(_watch.take());
                            watched = Some(node.clone());
                            _watch = self.watch(node).await;
                        }
                        ClusterCommand::Unwatch => (_watch, watched) = (None, None),
                        ClusterCommand::ReadUsage(nodes) => self.usage.set_nodes(nodes),
                        ClusterCommand::ReadConfigDrift(nodes) => {
                            self.drift_nodes = nodes;
                            drift_due = Some(Instant::now());
                        }
                        ClusterCommand::UseContext(context) => {
                            if self.use_context(&context) {
                                // What the old context's round brings is not wanted any more.
                                round = None;
                                drift = None;
                                drift_due = (!self.drift_nodes.is_empty()).then(Instant::now);
                                next_due = Instant::now();
                                drop(_watch.take());
                                if let Some(node) = watched.clone() {
                                    _watch = self.watch(node).await;
                                }
                            }
                        }
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
                done = pending_or(usage.as_mut()), if usage.is_some() => {
                    usage = None;
                    match done {
                        Ok(held) => self.usage.put_back(held),
                        Err(Closed) => return,
                    }
                }
                done = pending_or(drift.as_mut()), if drift.is_some() => {
                    drift = None;
                    if done.is_err() {
                        return;
                    }
                    drift_due = Some(Instant::now() + DRIFT_REREAD);
                }
                // Read for the cluster on screen only; a due read waits for its next show.
                _ = sleep_until_some(drift_due), if focused && drift.is_none() && drift_due.is_some() => {
                    drift_due = None;
                    drift = self.start_drift_read();
                }
                _ = sleep_until_some(usage_due), if usage_due.is_some() => {
                    usage = self.start_usage_read();
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

/// Sleeps until `due`; never returns without one (its branch is disabled then).
async fn sleep_until_some(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}

/// When the certificates of the cluster's contexts and servers end, as `taloscope certs`
/// reads them; each server's within `within`.
async fn certificates(
    cluster: &Cluster,
    kubeconfig: Option<&Kubeconfig>,
    within: Duration,
    served: &ServedCerts,
) -> FleetEvent {
    let kube_cert = |user: &str| kubeconfig_client_cert(kubeconfig, user);
    let now = crate::clock::unix_now() as i64;
    let mut certs = cluster_cert_expiry(cluster, &kube_cert, now);
    certs.extend(served_certs(cluster, within, now, served).await);
    FleetEvent::Certificates {
        cluster: cluster.name.clone(),
        certs,
        at: StdInstant::now(),
    }
}

/// The servers' certificates: the last reading while it is younger than `SERVED_CERTS_EVERY`,
/// else a new one (kept for the next rounds).
async fn served_certs(
    cluster: &Cluster,
    within: Duration,
    now: i64,
    served: &ServedCerts,
) -> Vec<CertExpiry> {
    let last = served.lock().ok().and_then(|last| last.clone());
    if let Some((read_at, certs)) = last
        && read_at.elapsed() < SERVED_CERTS_EVERY
    {
        return certs;
    }
    let (certs, unread) = served_cert_expiry(cluster, within, now).await;
    for why in unread {
        tracing::debug!(cluster = %cluster.name, "served certificate not read: {why}");
    }
    if let Ok(mut last) = served.lock() {
        *last = Some((StdInstant::now(), certs.clone()));
    }
    certs
}

/// One poll round: PollStarted, the certificates, the one collector's round, PollFinished.
async fn poll_round(
    name: String,
    talos: Option<TalosSide>,
    (kube, options): (KubeSource, CollectOptions),
    (cluster, kubeconfig, served): (Arc<Cluster>, Option<Arc<Kubeconfig>>, ServedCerts),
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
    let within = options.client.connect_timeout + options.client.call_timeout;
    let certs = async {
        let event = certificates(&cluster, kubeconfig.as_deref(), within, &served).await;
        emit(&tx, event).await
    };
    let (certs, kube_client) = tokio::join!(certs, collect_round(&name, talos, kube, options, &tx));
    certs?;
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
