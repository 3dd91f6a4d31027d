//! The live-data poller: one task per cluster that owns its Talos and kube
//! clients, polls the cluster on screen often and the others seldom, and sends
//! what it learns as [`FleetEvent`]s on a channel the app folds into its model.
//!
//! Choices:
//! - A round streams: each node's probe is sent as it answers, etcd as soon as
//!   every control plane answered (not after the last worker), the Kubernetes
//!   side concurrently. A dead node costs only its own call timeout.
//! - The node detail view (`WatchNode`) gets the node's Events stream, which
//!   beats polling: every machine event (sequence, phase, task, service state,
//!   machine status) arrives as it happens and survives reboots; services are
//!   read with ServiceList every focused interval beside it, and a machine
//!   status event re-probes the node at once so its row shows the new stage
//!   within a second.
//! - No per-node COSI MachineStatus watches for the whole focused cluster: a
//!   250-node cluster would hold 250 long-lived streams on the one endpoint
//!   connection, competing for HTTP/2 stream slots with the probes, for a
//!   gain the focused interval (5 s) already bounds; the node being looked at
//!   closely gets the real-time path above.
//! - The management clusters (Cluster API) are read by one task of their own at the
//!   background interval, reported only when what they say changed.
//! - The focused cluster's rounds skip the `max_concurrent_clusters` queue; a
//!   Refresh or Focus while a round runs does not start a second one (the
//!   running round brings fresh data), it only resets the schedule.
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::live::FleetEvent;
use crate::discovery::Cluster;
use crate::node_resources::NodeIdentity;

mod capi;
mod cluster;
mod drift;
mod restart;
mod usage;
mod watch;

pub use restart::LivePollers;
pub use watch::summarize_event;

/// How often and how widely the poller asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollerOptions {
    /// The cluster on screen (`--refresh`, default 5 s).
    pub focused_interval: Duration,
    /// Every other cluster (default 30 s).
    pub background_interval: Duration,
    /// Timeouts and per-cluster node fan-out.
    pub client: crate::talos::ClientOptions,
    /// How many clusters may be in a poll round at once.
    pub max_concurrent_clusters: usize,
}

impl Default for PollerOptions {
    fn default() -> Self {
        PollerOptions {
            focused_interval: Duration::from_secs(5),
            background_interval: Duration::from_secs(30),
            client: crate::talos::ClientOptions::default(),
            max_concurrent_clusters: 8,
        }
    }
}

/// What the app asks of the poller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PollerCommand {
    /// The cluster on screen, polled at the focused interval (`None`: the fleet view).
    Focus(Option<String>),
    /// Poll this cluster now (unless a round is already running).
    Refresh(String),
    /// Poll every cluster now.
    RefreshAll,
    /// Follow one node for its detail view: services and machine events.
    WatchNode { cluster: String, node: String },
    /// Stop following the watched node.
    UnwatchNode,
    /// Read the CPU, memory and disk use of these nodes of `cluster` (those on screen), one
    /// call per node every focused interval and at each Refresh, and stop reading any other
    /// cluster's (a change of focus stops them too); none: stop.
    ReadUsage {
        cluster: String,
        nodes: Vec<NodeIdentity>,
    },
    /// Read the machine configuration of these nodes of `cluster` (all of them) for the nodes
    /// pane's DRIFT column now, and again every `DRIFT_REREAD` while it is on screen.
    ReadConfigDrift {
        cluster: String,
        nodes: Vec<crate::machine_config::DriftTarget>,
    },
    /// Poll `cluster` through its context `context` (one in use or alternate) from now on:
    /// a round under way is dropped and the next starts at once with new clients.
    UseContext { cluster: String, context: String },
    /// Stop every task.
    Shutdown,
}

/// How long shutdown waits for tasks before aborting them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// The app's end of a running poller. Dropping it stops the poller too.
pub struct PollerHandle {
    commands: mpsc::UnboundedSender<PollerCommand>,
    supervisor: JoinHandle<()>,
}

impl PollerHandle {
    /// Sends a command; never blocks. Ignored once the poller has stopped.
    pub fn send(&self, cmd: PollerCommand) {
        if self.commands.send(cmd).is_err() {
            tracing::debug!("poller already stopped; command dropped");
        }
    }

    /// Whether the poller has stopped (shut down, or nobody listens any more).
    pub fn is_finished(&self) -> bool {
        self.supervisor.is_finished()
    }

    /// Stops every task and waits (boundedly) until they have ended.
    pub async fn shutdown(self) {
        let _ = self.commands.send(PollerCommand::Shutdown);
        let mut supervisor = self.supervisor;
        if tokio::time::timeout(SHUTDOWN_GRACE, &mut supervisor)
            .await
            .is_err()
        {
            tracing::warn!("poller did not stop within {SHUTDOWN_GRACE:?}; aborting it");
            supervisor.abort();
            let _ = supervisor.await;
        }
    }
}

/// Starts polling every cluster at once (the first round of each starts
/// immediately). Must be called inside a tokio runtime; clients are built on
/// the cluster tasks, never on the caller's thread.
pub fn spawn_poller(
    clusters: Vec<Cluster>,
    kubeconfig: Option<kube::config::Kubeconfig>,
    options: PollerOptions,
    events: mpsc::Sender<FleetEvent>,
) -> PollerHandle {
    let (commands, rx) = mpsc::unbounded_channel();
    let supervisor = tokio::spawn(supervise(
        clusters,
        kubeconfig.map(Arc::new),
        options,
        events,
        rx,
    ));
    PollerHandle {
        commands,
        supervisor,
    }
}

/// Routes the app's commands to the cluster tasks and ends them all on
/// shutdown, when the handle is dropped, or when nobody listens any more.
async fn supervise(
    clusters: Vec<Cluster>,
    kubeconfig: Option<Arc<kube::config::Kubeconfig>>,
    options: PollerOptions,
    events: mpsc::Sender<FleetEvent>,
    mut commands: mpsc::UnboundedReceiver<PollerCommand>,
) {
    let rounds = Arc::new(tokio::sync::Semaphore::new(
        options.max_concurrent_clusters.max(1),
    ));
    let mut tasks = tokio::task::JoinSet::new();
    let capi_refresh = Arc::new(tokio::sync::Notify::new());
    tasks.spawn(capi::watch_capi(
        clusters.clone(),
        kubeconfig.clone(),
        options.background_interval,
        capi_refresh.clone(),
        events.clone(),
    ));
    let mut routes: Vec<(String, mpsc::UnboundedSender<cluster::ClusterCommand>)> = Vec::new();
    for c in clusters {
        let (tx, rx) = mpsc::unbounded_channel();
        routes.push((c.name.clone(), tx));
        let task = cluster::ClusterTask::new(
            c,
            kubeconfig.clone(),
            options,
            rounds.clone(),
            events.clone(),
        );
        tasks.spawn(task.run(rx));
    }
    let route = |name: &str| routes.iter().find(|(n, _)| n == name).map(|(_, tx)| tx);
    let tell = |name: &str, cmd: cluster::ClusterCommand| match route(name) {
        Some(tx) => {
            let _ = tx.send(cmd);
        }
        None => tracing::debug!(cluster = name, "poller: no such cluster"),
    };
    let mut focused: Option<String> = None;
    let mut watched: Option<String> = None;
    let mut usage_of: Option<String> = None;
    loop {
        let cmd = tokio::select! {
            cmd = commands.recv() => cmd,
            _ = events.closed() => None,
        };
        let Some(cmd) = cmd else { break };
        match cmd {
            PollerCommand::Focus(name) => {
                if name == focused {
                    continue;
                }
                if let Some(old) = focused.take() {
                    tell(&old, cluster::ClusterCommand::Focused(false));
                }
                if let Some(new) = &name {
                    tell(new, cluster::ClusterCommand::Focused(true));
                }
                // The nodes on screen are the focused cluster's: leaving it stops their reads.
                if let Some(old) = usage_of.take_if(|c| Some(&*c) != name.as_ref()) {
                    tell(&old, cluster::ClusterCommand::ReadUsage(Vec::new()));
                }
                focused = name;
            }
            PollerCommand::Refresh(name) => tell(&name, cluster::ClusterCommand::PollNow),
            PollerCommand::RefreshAll => {
                for (_, tx) in &routes {
                    let _ = tx.send(cluster::ClusterCommand::PollNow);
                }
                capi_refresh.notify_one();
            }
            PollerCommand::WatchNode { cluster, node } => {
                if let Some(old) = watched.take()
                    && old != cluster
                {
                    tell(&old, cluster::ClusterCommand::Unwatch);
                }
                tell(&cluster, cluster::ClusterCommand::Watch(node));
                watched = Some(cluster);
            }
            PollerCommand::UnwatchNode => {
                if let Some(old) = watched.take() {
                    tell(&old, cluster::ClusterCommand::Unwatch);
                }
            }
            PollerCommand::ReadUsage { cluster, nodes } => {
                if let Some(old) = usage_of.take()
                    && old != cluster
                {
                    tell(&old, cluster::ClusterCommand::ReadUsage(Vec::new()));
                }
                if !nodes.is_empty() {
                    usage_of = Some(cluster.clone());
                }
                tell(&cluster, cluster::ClusterCommand::ReadUsage(nodes));
            }
            PollerCommand::UseContext { cluster, context } => {
                tell(&cluster, cluster::ClusterCommand::UseContext(context))
            }
            PollerCommand::ReadConfigDrift { cluster, nodes } => {
                tell(&cluster, cluster::ClusterCommand::ReadConfigDrift(nodes))
            }
            PollerCommand::Shutdown => break,
        }
    }
    // Aborting is immediate at the tasks' next await; their clients, streams
    // and node watches are dropped with them.
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    tracing::debug!("poller stopped");
}
