//! `cluster.ClusterService/HealthCheck` as a simulated node answers it, following upstream's
//! server (siderolabs/talos internal/app/machined/internal/server/v1alpha1/v1alpha1_cluster.go,
//! v1.11): "discovered nodes", then each of `check.DefaultClusterChecks()`
//! (pkg/cluster/check/default.go) in order, reported as "waiting for <check>: <state>" whenever
//! the line changes, polled until it passes; the call fails when the wait timeout runs out.
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::apid::{Role, Route, Target, require, route, slow_down};
use crate::model::core::Core;
use crate::model::scenario::NodeRole;
use crate::model::state::{ClusterState, MachineStage, SimNode};
use taloscope_proto::cluster::cluster_service_server::ClusterService;
use taloscope_proto::cluster::{HealthCheckProgress, HealthCheckRequest};

/// Simulated seconds between two polls of a failing check.
const POLL_SECONDS: f64 = 1.0;
/// What a polling condition says before its first result and after a pass
/// (pkg/conditions/poll.go, `String`; pkg/conditions `OK`).
const PENDING: &str = "...";
const OK: &str = "OK";

/// Which nodes a check asks.
#[derive(Clone, Copy)]
enum Nodes {
    ControlPlanes,
    All,
}

/// What a check asserts of each node it asks.
#[derive(Clone, Copy)]
enum Assertion {
    /// The node answers (apid), and the service is healthy: etcd a healthy member.
    EtcdHealthy,
    /// apid answers.
    Answers,
    /// The node answers and its kubelet is healthy.
    KubeletHealthy,
    /// The boot sequence finished: stage running.
    Booted,
    /// Kubernetes reports the node Ready.
    KubeReady,
}

/// The checks in upstream's order: `PreBootSequenceChecks`, `K8sComponentsReadinessChecks`,
/// then the node readiness checks of `DefaultClusterChecks`.
const CHECKS: &[(&str, Nodes, Assertion)] = &[
    (
        "etcd to be healthy",
        Nodes::ControlPlanes,
        Assertion::EtcdHealthy,
    ),
    (
        "etcd members to be consistent across nodes",
        Nodes::ControlPlanes,
        Assertion::Answers,
    ),
    (
        "etcd members to be control plane nodes",
        Nodes::ControlPlanes,
        Assertion::Answers,
    ),
    ("apid to be ready", Nodes::All, Assertion::Answers),
    ("all nodes memory sizes", Nodes::All, Assertion::Answers),
    ("all nodes disk sizes", Nodes::All, Assertion::Answers),
    ("no diagnostics", Nodes::All, Assertion::Answers),
    (
        "kubelet to be healthy",
        Nodes::All,
        Assertion::KubeletHealthy,
    ),
    (
        "all nodes to finish boot sequence",
        Nodes::All,
        Assertion::Booted,
    ),
    ("all k8s nodes to report", Nodes::All, Assertion::KubeReady),
    (
        "all control plane static pods to be running",
        Nodes::ControlPlanes,
        Assertion::KubeReady,
    ),
    (
        "all control plane components to be ready",
        Nodes::ControlPlanes,
        Assertion::KubeReady,
    ),
    (
        "all k8s nodes to report ready",
        Nodes::All,
        Assertion::KubeReady,
    ),
    (
        "kube-proxy to report ready",
        Nodes::All,
        Assertion::KubeReady,
    ),
    ("coredns to report ready", Nodes::All, Assertion::KubeReady),
    (
        "all k8s nodes to report schedulable",
        Nodes::All,
        Assertion::KubeReady,
    ),
];

/// One node's failure of an assertion, as upstream's assertions word them
/// (pkg/cluster/check/service.go; an unreachable node fails with its connection error).
fn assert_node(
    cluster: &ClusterState,
    index: usize,
    node: &SimNode,
    a: Assertion,
) -> Option<String> {
    let s = node.status();
    let ip = s.address;
    if !s.up {
        return Some(format!(
            "{ip}: rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: dial tcp {ip}:50000: connect: connection refused\""
        ));
    }
    match a {
        Assertion::EtcdHealthy if !cluster.member_healthy(index) => {
            Some(format!("{ip}: service is not healthy: etcd"))
        }
        Assertion::KubeletHealthy | Assertion::KubeReady if !s.ready => Some(format!(
            "{ip}: service \"kubelet\" not in expected state \"Running\": current state [Preparing] Running pre state"
        )),
        Assertion::Booted if s.stage != MachineStage::Running => Some(format!(
            "{ip}: boot sequence not finished: stage {}",
            s.stage.as_str()
        )),
        _ => None,
    }
}

/// A check's state now: `OK`, or the errors of the nodes that fail it, joined as hashicorp's
/// multierror writes them.
fn check_state(cluster: &ClusterState, nodes: Nodes, assertion: Assertion) -> String {
    let errors: Vec<String> = cluster
        .nodes()
        .iter()
        .enumerate()
        .filter(|(_, n)| matches!(nodes, Nodes::All) || n.role() == NodeRole::ControlPlane)
        .filter_map(|(i, n)| assert_node(cluster, i, n, assertion))
        .collect();
    if errors.is_empty() {
        return OK.into();
    }
    let plural = if errors.len() == 1 { "error" } else { "errors" };
    let list: String = errors.iter().map(|e| format!("\n\t* {e}")).collect();
    format!("{} {plural} occurred:{list}\n\n", errors.len())
}

async fn send(tx: &mpsc::Sender<Result<HealthCheckProgress, Status>>, message: String) -> bool {
    let progress = HealthCheckProgress {
        metadata: None,
        message: message.trim().to_string(),
    };
    tx.send(Ok(progress)).await.is_ok()
}

/// Runs the checks one after another until each passes, reporting each changed line, or until
/// `deadline`, when the call ends with upstream's context error.
async fn run_checks(
    core: Arc<Core>,
    t: Target,
    deadline: Instant,
    tx: mpsc::Sender<Result<HealthCheckProgress, Status>>,
) {
    slow_down(&t.node).await;
    let ips: Vec<String> = t
        .cluster
        .nodes()
        .iter()
        .map(|n| format!("{:?}", n.address().to_string()))
        .collect();
    if !send(&tx, format!("discovered nodes: [{}]", ips.join(" "))).await {
        return;
    }
    for (name, nodes, assertion) in CHECKS {
        let mut last = format!("waiting for {name}: {PENDING}");
        if !send(&tx, last.clone()).await {
            return;
        }
        loop {
            let state = check_state(&t.cluster, *nodes, *assertion);
            let line = format!("waiting for {name}: {state}");
            if line != last {
                if !send(&tx, line.clone()).await {
                    return;
                }
                last = line;
            }
            if state == OK {
                break;
            }
            let poll = core.clock.real(POLL_SECONDS);
            if Instant::now() + poll > deadline {
                let _ = tx
                    .send(Err(Status::deadline_exceeded("context deadline exceeded")))
                    .await;
                return;
            }
            tokio::time::sleep(poll).await;
        }
    }
}

/// The ClusterService every simulated node serves.
pub struct ClusterApi {
    core: Arc<Core>,
}

impl ClusterApi {
    pub(crate) fn new(core: Arc<Core>) -> ClusterApi {
        ClusterApi { core }
    }
}

#[tonic::async_trait]
impl ClusterService for ClusterApi {
    type HealthCheckStream = ReceiverStream<Result<HealthCheckProgress, Status>>;

    /// Reader, as internal/app/machined/pkg/system/services/machined.go's rules say. The wait
    /// timeout is real time: it is the caller's deadline.
    async fn health_check(
        &self,
        request: Request<HealthCheckRequest>,
    ) -> Result<Response<Self::HealthCheckStream>, Status> {
        require(&request, Role::Reader)?;
        let routed = route(
            &self.core,
            &request,
            "/cluster.ClusterService/HealthCheck",
            true,
        )?;
        let Route::One(target) = routed else {
            return Err(Status::invalid_argument(
                "HealthCheck runs on one node: name one node",
            ));
        };
        let wait = request
            .into_inner()
            .wait_timeout
            .and_then(|d| Duration::try_from(d).ok())
            .unwrap_or_default();
        let (tx, rx) = mpsc::channel(16);
        tokio::spawn(run_checks(
            self.core.clone(),
            target,
            Instant::now() + wait,
            tx,
        ));
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}
