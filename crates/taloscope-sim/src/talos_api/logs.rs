//! `MachineService.Logs` and `MachineService.Dmesg` as a simulated node answers them: which log
//! a request names (a system service, or a pod's container in the CRI namespace), the
//! tail, 1024-byte chunks as upstream's stream chunker reads them, and following, where new
//! lines appear as simulated time passes. Line texts come from log_lines.
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Status};

use super::apid::{Role, Route, Target, error_metadata, require, route, slow_down};
use super::log_lines::{BOOT_RECORDS, EtcdPeers, Micros, Writer, kernel_record, log_line, seed};
use super::machine_reads;
use crate::model::core::Core;
use crate::model::machine_inventory;
use crate::model::scenario::NodeRole;
use crate::node_life::node::service_ids;
use taloscope_proto::common::{ContainerDriver, Data, Metadata};
use taloscope_proto::machine::{DmesgRequest, LogsRequest};

pub(crate) type DataStream = ReceiverStream<Result<Data, Status>>;

/// Lines a service wrote before the sim started (its in-memory log is bounded upstream too).
const BACKLOG: u64 = 400;
/// The chunk size of upstream's stream chunker (siderolabs/talos pkg/chunker/stream/stream.go,
/// `NewChunker`: `Size: 1024`): a chunk may end in the middle of a line.
const CHUNK: usize = 1024;
/// containerd's namespace of Talos's own services (pkg/machinery/constants, `SystemContainerdNamespace`).
const SYSTEM_NAMESPACE: &str = "system";
/// containerd's namespace of the CRI's containers (`K8sContainerdNamespace`).
const CRI_NAMESPACE: &str = "k8s.io";
/// Simulated seconds between two kernel messages once the node runs.
const KERNEL_PERIOD: f64 = 15.0;

/// One log as a function of its line number: who writes it, how often, and since when.
#[derive(Clone)]
struct Feed {
    writer: Option<Writer>,
    seed: u64,
    /// Simulated seconds between two lines.
    period: f64,
    /// Lines written before simulated time 0.
    backlog: u64,
    peers: EtcdPeers,
}

impl Feed {
    /// How many lines the log holds at simulated time `now` (seconds since the sim started).
    fn count(&self, now: f64) -> u64 {
        self.backlog + (now.max(0.0) / self.period) as u64 + 1
    }

    /// When line `i` is written, in simulated seconds since the sim started.
    fn due(&self, i: u64) -> f64 {
        (i as f64 - self.backlog as f64) * self.period
    }

    fn text(&self, i: u64, at: Micros) -> String {
        match &self.writer {
            Some(w) => log_line(w, i, self.seed, at, &self.peers),
            None => kernel_record(i, self.seed, at),
        }
    }
}

/// Where reading starts: the last `n` lines, everything, or only what comes next.
#[derive(Clone, Copy)]
enum Start {
    Tail(u64),
    All,
    New,
}

/// The system service's writer, as the service logs on Talos v1.11.
fn system_writer(id: &str) -> Writer {
    match id {
        "etcd" => Writer::Etcd,
        "kubelet" => Writer::Kubelet,
        "apid" | "trustd" => Writer::GoLog,
        "machined" => Writer::Machined,
        _ => Writer::Logrus,
    }
}

/// The etcd peer this member fails to reach, if one is down.
fn etcd_peers(t: &Target) -> EtcdPeers {
    let unreachable = t.cluster.nodes().iter().enumerate().find_map(|(i, n)| {
        (n.name() != t.node.name()
            && n.role() == NodeRole::ControlPlane
            && !t.cluster.member_healthy(i))
        .then(|| (n.etcd_member_id(), n.address().to_string()))
    });
    EtcdPeers { unreachable }
}

/// The pod container a CRI id names (`kube-system/kube-proxy-1a2b3:kube-proxy`, optionally
/// `:<container id>` or a part of it), as upstream's CRI inspector finds it by the pod's
/// namespace and name and the container's name (internal/pkg/containers/cri/cri.go,
/// `parseContainerDisplay`, `Container`, `findContainer`); a pod sandbox has no log.
fn pod_container(t: &Target, id: &str) -> Option<String> {
    let (namespace, rest) = id.split_once('/')?;
    let (pod, rest) = rest.split_once(':')?;
    let (name, container_id) = match rest.split_once(':') {
        Some((name, container_id)) => (name, Some(container_id)),
        None => (rest, None),
    };
    machine_inventory::pod_containers(&t.node, !t.cluster.kube_proxy_disabled)
        .into_iter()
        .find(|c| c.namespace == namespace && c.pod == pod && c.name == name)
        .filter(|c| {
            container_id.is_none_or(|part| machine_reads::container_id(c.pid).contains(part))
        })
        .map(|c| c.name)
}

/// The log a `LogsRequest` names, as upstream's `Logs` chooses it
/// (internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go): the system namespace or
/// the id `kubelet` read the service's log (one never written reads empty); any other namespace
/// goes to the container inspector, which fails for a container it does not find.
fn feed_for(t: &Target, req: &LogsRequest) -> Result<Feed, Status> {
    let node = t.node.name();
    if req.namespace == SYSTEM_NAMESPACE || req.id == "kubelet" {
        let known = service_ids(t.node.role()).contains(&req.id.as_str());
        let writer = system_writer(&req.id);
        let period = match writer {
            Writer::Etcd => 2.0,
            Writer::Kubelet => 3.0,
            _ => 10.0,
        };
        let peers = if writer == Writer::Etcd {
            etcd_peers(t)
        } else {
            EtcdPeers::default()
        };
        return Ok(Feed {
            writer: Some(writer),
            seed: seed(node, &req.id),
            period,
            backlog: if known { BACKLOG } else { 0 },
            peers,
        });
    }
    let cri = req.namespace == CRI_NAMESPACE
        || req.driver == ContainerDriver::Cri as i32 && req.namespace.is_empty();
    match cri.then(|| pod_container(t, &req.id)).flatten() {
        Some(component) => Ok(Feed {
            writer: Some(Writer::Cri { component }),
            seed: seed(node, &req.id),
            period: 5.0,
            backlog: BACKLOG,
            peers: EtcdPeers::default(),
        }),
        None => Err(Status::unknown(format!("container {:?} not found", req.id))),
    }
}

/// The kernel log: the boot messages, then one every [`KERNEL_PERIOD`].
fn kernel_feed(t: &Target) -> Feed {
    Feed {
        writer: None,
        seed: seed(t.node.name(), "kmsg"),
        period: KERNEL_PERIOD,
        backlog: BOOT_RECORDS,
        peers: EtcdPeers::default(),
    }
}

fn sim_now(core: &Core) -> f64 {
    core.started.elapsed().as_secs_f64() * core.clock.scale()
}

/// The wall-clock microseconds of simulated time `sim` (a log's timestamps run at sim speed).
fn wall_micros(core: &Core, sim: f64) -> Micros {
    let start = core
        .started_wall
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    start + (sim * 1e6) as i64
}

/// Sends a log from `start`, in chunks, then (following) each new line when it is due, until
/// the caller hangs up, the node goes down or the sim stops.
async fn pump(
    core: Arc<Core>,
    t: Target,
    feed: Feed,
    start: Start,
    follow: bool,
    metadata: Option<Metadata>,
    tx: mpsc::Sender<Result<Data, Status>>,
) {
    slow_down(&t.node).await;
    let mut stop = core.stop.subscribe();
    let mut status = t.node.subscribe();
    let count = feed.count(sim_now(&core));
    let mut next = match start {
        Start::Tail(n) => count.saturating_sub(n),
        Start::All => 0,
        Start::New => count,
    };
    loop {
        let count = feed.count(sim_now(&core));
        let text: String = (next..count)
            .map(|i| feed.text(i, wall_micros(&core, feed.due(i))))
            .collect();
        next = count;
        for chunk in text.as_bytes().chunks(CHUNK) {
            let data = Data {
                metadata: metadata.clone(),
                bytes: chunk.to_vec(),
            };
            if tx.send(Ok(data)).await.is_err() {
                return;
            }
        }
        if !follow {
            return;
        }
        let wait = core.clock.real(feed.due(next) - sim_now(&core));
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = stop.changed() => return,
            changed = status.changed() => {
                if changed.is_err() || !status.borrow().up {
                    return;
                }
            }
        }
        if *stop.borrow() {
            return;
        }
    }
}

/// Starts one pump per routed node: one-to-one streams carry no metadata, one-to-many ones the
/// node's hostname, and a node that cannot answer a metadata-only error chunk.
fn serve(
    core: &Arc<Core>,
    routed: Route,
    start: Start,
    follow: bool,
    feed_of: impl Fn(&Target) -> Result<Feed, Status>,
) -> Result<DataStream, Status> {
    let (tx, rx) = mpsc::channel(16);
    let targets: Vec<(Option<String>, Result<Target, Status>)> = match routed {
        Route::One(t) => {
            let feed = feed_of(&t)?;
            tokio::spawn(pump(core.clone(), t, feed, start, follow, None, tx));
            return Ok(ReceiverStream::new(rx));
        }
        Route::Many(list) => list.into_iter().map(|(n, t)| (Some(n), t)).collect(),
    };
    for (name, target) in targets {
        let hostname = name.unwrap_or_default();
        let tx = tx.clone();
        match target.and_then(|t| feed_of(&t).map(|f| (t, f))) {
            Ok((t, feed)) => {
                let metadata = Some(Metadata {
                    hostname,
                    ..Metadata::default()
                });
                tokio::spawn(pump(core.clone(), t, feed, start, follow, metadata, tx));
            }
            Err(status) => {
                let data = Data {
                    metadata: Some(error_metadata(&hostname, &status)),
                    bytes: Vec::new(),
                };
                tokio::spawn(async move {
                    let _ = tx.send(Ok(data)).await;
                });
            }
        }
    }
    Ok(ReceiverStream::new(rx))
}

/// `Logs` (reader, as internal/app/machined/pkg/system/services/machined.go's rules say):
/// a negative `tail_lines` reads the whole log, as upstream's `if req.TailLines >= 0`.
pub(crate) async fn logs(
    core: &Arc<Core>,
    request: Request<LogsRequest>,
) -> Result<DataStream, Status> {
    require(&request, Role::Reader)?;
    let routed = route(core, &request, "/machine.MachineService/Logs", true)?;
    let req = request.into_inner();
    let start = match u64::try_from(req.tail_lines) {
        Ok(n) => Start::Tail(n),
        Err(_) => Start::All,
    };
    serve(core, routed, start, req.follow, |t| feed_for(t, &req))
}

/// `Dmesg` (reader): the kernel log from boot, or with `tail` only what comes next
/// (go-kmsg's `FromTail`, which makes sense with `follow`).
pub(crate) async fn dmesg(
    core: &Arc<Core>,
    request: Request<DmesgRequest>,
) -> Result<DataStream, Status> {
    require(&request, Role::Reader)?;
    let routed = route(core, &request, "/machine.MachineService/Dmesg", true)?;
    let req = request.into_inner();
    let start = if req.tail { Start::New } else { Start::All };
    serve(core, routed, start, req.follow, |t| Ok(kernel_feed(t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_feed_counts_its_backlog_and_one_line_per_period() {
        let feed = Feed {
            writer: Some(Writer::Etcd),
            seed: 1,
            period: 2.0,
            backlog: 400,
            peers: EtcdPeers::default(),
        };
        assert_eq!(feed.count(0.0), 401);
        assert_eq!(feed.count(3.9), 402);
        assert_eq!(feed.due(400), 0.0);
        assert_eq!(feed.due(0), -800.0);
    }
}
