//! Workload pods of the Kubernetes API sim, for drains: a Deployment's pods spread over the
//! schedulable workers and a DaemonSet's pod on every node; the Eviction subresource (the pod
//! goes, its ReplicaSet's replacement lands on another schedulable worker, or stays Pending);
//! and a timed record of cordons and evictions to line up with the Talos sim's upgrade windows.
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use hyper::StatusCode;
use serde_json::{Value, json};

use super::ApiState;
use super::disruption::{BUDGET, BudgetStatus};
use super::facts::KubeClusterFacts;
use super::objects::{rfc3339, status_error, uid};

const NAMESPACE: &str = "default";
const DEPLOYMENT: &str = BUDGET;
const REPLICA_SET: &str = "web-5d8f7c9b6d";
const DAEMON_SET: &str = "log-agent";
const PODS_PER_WORKER: usize = 2;
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// Something a client did to the cluster's nodes through the API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeAction {
    pub node: String,
    pub kind: KubeActionKind,
    pub at: Instant,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KubeActionKind {
    Cordoned,
    Uncordoned,
    /// `namespace/name` evicted from the node; where its replacement was scheduled (`None`:
    /// Pending, no schedulable worker).
    Evicted {
        pod: String,
        replaced_on: Option<String>,
    },
}

/// One of the Deployment's pods; `node` is `None` while Pending.
#[derive(Clone, Debug)]
struct WorkloadPod {
    name: String,
    node: Option<String>,
}

#[derive(Default)]
struct Inner {
    seeded: bool,
    pods: Vec<WorkloadPod>,
    next_id: u64,
    actions: Vec<KubeAction>,
    /// Evictions still to answer with 429, as a PodDisruptionBudget would.
    refused_evictions: usize,
    /// `minAvailable` of the PodDisruptionBudget over the Deployment's pods, when there is one.
    disruption_budget: Option<usize>,
}

/// Shared by every connection of one API server.
#[derive(Default)]
pub(crate) struct Workloads {
    inner: Mutex<Inner>,
}

impl Workloads {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A cordon or uncordon through a node PATCH.
    pub(super) fn note_cordon(&self, node: &str, cordoned: bool) {
        self.lock().actions.push(KubeAction {
            node: node.to_string(),
            kind: if cordoned {
                KubeActionKind::Cordoned
            } else {
                KubeActionKind::Uncordoned
            },
            at: Instant::now(),
        });
    }

    pub(crate) fn actions(&self) -> Vec<KubeAction> {
        self.lock().actions.clone()
    }

    /// The next `count` evictions are refused with 429, as a disruption budget would.
    pub(crate) fn refuse_evictions(&self, count: usize) {
        self.lock().refused_evictions = count;
    }

    pub(crate) fn set_disruption_budget(&self, min_available: Option<usize>) {
        self.lock().disruption_budget = min_available;
    }
}

impl Inner {
    /// The budget's status over the Deployment's pods now: a pod is healthy when it runs on
    /// a Ready node (the sim's pods are Ready as soon as they run).
    fn budget(&self, facts: &KubeClusterFacts) -> Option<BudgetStatus> {
        let min_available = self.disruption_budget?;
        let healthy = self
            .pods
            .iter()
            .filter(|p| node_ready(facts, p.node.as_deref()))
            .count();
        Some(BudgetStatus {
            min_available,
            current_healthy: healthy,
            expected_pods: self.pods.len(),
        })
    }

    fn new_pod(&mut self, node: Option<String>) -> WorkloadPod {
        self.next_id += 1;
        WorkloadPod {
            name: format!("{REPLICA_SET}-{:05x}", self.next_id * 7919 % 0xfffff),
            node,
        }
    }

    /// The Deployment's pods on first use, then Pending pods onto schedulable workers.
    fn reconcile(&mut self, state: &ApiState, facts: &KubeClusterFacts) {
        if !self.seeded {
            self.seeded = true;
            for n in facts.nodes.iter().filter(|n| !n.control_plane) {
                for _ in 0..PODS_PER_WORKER {
                    let pod = self.new_pod(Some(n.name.clone()));
                    self.pods.push(pod);
                }
            }
        }
        for i in 0..self.pods.len() {
            if self.pods[i].node.is_none() {
                self.pods[i].node = self.least_busy(state, facts, None);
            }
        }
    }

    /// The schedulable worker (Ready, not cordoned) with the fewest pods, except `not`.
    fn least_busy(
        &self,
        state: &ApiState,
        facts: &KubeClusterFacts,
        not: Option<&str>,
    ) -> Option<String> {
        facts
            .nodes
            .iter()
            .filter(|n| !n.control_plane && n.ready && Some(n.name.as_str()) != not)
            .filter(|n| !state.is_cordoned(&n.name))
            .min_by_key(|n| {
                let load = self
                    .pods
                    .iter()
                    .filter(|p| p.node.as_deref() == Some(&n.name))
                    .count();
                (load, n.name.clone())
            })
            .map(|n| n.name.clone())
    }
}

/// Every pod the API serves: the kubelet's mirror pods (`static_pods`, annotated as the kubelet
/// annotates them), the DaemonSet's pod on each node and the Deployment's pods.
pub(super) fn all_pods(state: &ApiState, static_pods: Vec<Value>) -> Vec<Value> {
    let facts = state.facts.borrow().clone();
    let mut inner = state.workloads.lock();
    inner.reconcile(state, &facts);
    let mut pods: Vec<Value> = static_pods.into_iter().map(mark_mirror).collect();
    for n in &facts.nodes {
        let name = format!("{DAEMON_SET}-{}", n.name);
        pods.push(pod(&facts, &name, "DaemonSet", DAEMON_SET, Some(&n.name)));
    }
    for p in &inner.pods {
        pods.push(pod(
            &facts,
            &p.name,
            "ReplicaSet",
            REPLICA_SET,
            p.node.as_deref(),
        ));
    }
    pods
}

/// `POST /api/v1/namespaces/NS/pods/NAME/eviction`: 201 and the pod gone (its replacement
/// scheduled elsewhere); 429 while a disruption budget refuses; 404 for no such pod.
pub(super) fn evict(state: &ApiState, namespace: &str, name: &str) -> (StatusCode, Value) {
    let facts = state.facts.borrow().clone();
    let mut inner = state.workloads.lock();
    inner.reconcile(state, &facts);
    let daemon = facts
        .nodes
        .iter()
        .any(|n| format!("{DAEMON_SET}-{}", n.name) == name);
    let index = inner.pods.iter().position(|p| p.name == name);
    if namespace != NAMESPACE || (index.is_none() && !daemon) {
        return (
            StatusCode::NOT_FOUND,
            status_error(404, "NotFound", &format!("pods \"{name}\" not found")),
        );
    }
    if inner.refused_evictions > 0 {
        inner.refused_evictions -= 1;
        return (
            StatusCode::TOO_MANY_REQUESTS,
            status_error(
                429,
                "TooManyRequests",
                "Cannot evict pod as it would violate the pod's disruption budget.",
            ),
        );
    }
    let Some(index) = index else {
        // A DaemonSet's pod: its controller puts it straight back on the same node.
        return (StatusCode::CREATED, eviction_success());
    };
    // eviction.go `canIgnorePDB`: a Pending pod goes without asking its budget.
    let running = node_ready(&facts, inner.pods[index].node.as_deref());
    if let Some(refusal) = inner
        .budget(&facts)
        .filter(|_| running)
        .and_then(|b| b.refusal())
    {
        return (StatusCode::TOO_MANY_REQUESTS, refusal);
    }
    let evicted = inner.pods.remove(index);
    let from = evicted.node.clone().unwrap_or_default();
    let target = inner.least_busy(state, &facts, Some(&from));
    let replacement = inner.new_pod(target.clone());
    inner.pods.push(replacement);
    inner.actions.push(KubeAction {
        node: from,
        kind: KubeActionKind::Evicted {
            pod: format!("{NAMESPACE}/{}", evicted.name),
            replaced_on: target,
        },
        at: Instant::now(),
    });
    drop(inner);
    state.generation.send_modify(|g| *g += 1);
    (StatusCode::CREATED, eviction_success())
}

/// Drains `node` as a client's drain does (cluster-api internal/controllers/machine/drain/
/// drain.go: cordon, then evict every pod but the DaemonSet's): the pods whose eviction was
/// refused, each with the refusal's message.
pub(super) fn drain(state: &ApiState, node: &str) -> Vec<(String, String)> {
    let newly_cordoned = state
        .cordoned
        .lock()
        .map(|mut c| c.insert(node.to_string()))
        .unwrap_or(false);
    if newly_cordoned {
        state.workloads.note_cordon(node, true);
        state.generation.send_modify(|g| *g += 1);
    }
    let on_node: Vec<String> = {
        let facts = state.facts.borrow().clone();
        let mut inner = state.workloads.lock();
        inner.reconcile(state, &facts);
        inner
            .pods
            .iter()
            .filter(|p| p.node.as_deref() == Some(node))
            .map(|p| p.name.clone())
            .collect()
    };
    on_node
        .into_iter()
        .filter_map(|pod| {
            let (status, answer) = evict(state, NAMESPACE, &pod);
            (status != StatusCode::CREATED).then(|| {
                let why = answer["message"].as_str().unwrap_or("eviction refused");
                (format!("{NAMESPACE}/{pod}"), why.to_string())
            })
        })
        .collect()
}

/// The PodDisruptionBudgets of `namespace` (`None`: all), as policy/v1 lists them.
pub(super) fn disruption_budgets(state: &ApiState, namespace: Option<&str>) -> Vec<Value> {
    let facts = state.facts.borrow().clone();
    let mut inner = state.workloads.lock();
    inner.reconcile(state, &facts);
    if namespace.is_some_and(|ns| ns != NAMESPACE) {
        return Vec::new();
    }
    inner
        .budget(&facts)
        .map(|b| b.object(NAMESPACE, facts.created_unix))
        .into_iter()
        .collect()
}

/// Whether a pod on `node` runs: the node exists and is Ready.
fn node_ready(facts: &KubeClusterFacts, node: Option<&str>) -> bool {
    node.and_then(|n| facts.nodes.iter().find(|f| f.name == n))
        .is_some_and(|n| n.ready)
}

fn eviction_success() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
}

fn mark_mirror(mut pod: Value) -> Value {
    let hash = uid("mirror", pod["metadata"]["name"].as_str().unwrap_or(""));
    if let Some(annotations) = pod["metadata"]["annotations"].as_object_mut() {
        annotations
            .entry(MIRROR_ANNOTATION)
            .or_insert_with(|| json!(hash));
    } else {
        pod["metadata"]["annotations"] = json!({ MIRROR_ANNOTATION: hash });
    }
    pod
}

fn pod(
    facts: &KubeClusterFacts,
    name: &str,
    owner_kind: &str,
    owner: &str,
    node: Option<&str>,
) -> Value {
    let app = if owner_kind == "DaemonSet" {
        DAEMON_SET
    } else {
        DEPLOYMENT
    };
    let node_facts = node.and_then(|n| facts.nodes.iter().find(|f| f.name == n));
    let running = node_ready(facts, node);
    let ready = if running { "True" } else { "False" };
    let mut spec = json!({
        "containers": [{"name": app, "image": format!("registry.example/{app}:1.0")}],
    });
    if let Some(n) = node {
        spec["nodeName"] = json!(n);
    }
    json!({
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": uid("Pod", name),
            "creationTimestamp": rfc3339(facts.created_unix),
            "labels": {"app": app},
            "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": owner_kind, "name": owner,
                "uid": uid(owner_kind, owner), "controller": true, "blockOwnerDeletion": true,
            }],
        },
        "spec": spec,
        "status": {
            "phase": if running { "Running" } else { "Pending" },
            "hostIP": node_facts.map(|n| n.address.to_string()),
            "conditions": [{"type": "Ready", "status": ready}],
        },
    })
}
