//! Guarded actions on one node (reboot, drain, a service restart...: `NodeOperation`, each
//! one's facts said in approval.rs). The plan (which node, its Kubernetes node and etcd
//! member, the pods a drain evicts), its guards, and how it runs (`operation::node` carries it
//! out).
pub mod guards;

use std::time::Duration;

use serde::Serialize;

pub use crate::approval::NodeOperation;
use crate::approval::OfferedOn;
use crate::fleet::{ClusterStatus, NodeRole, NodeStatus};
use crate::kube::{DisruptionBudget, DrainOptions, NodePod, match_talos_node};
use crate::talos::ServiceStatus;
use crate::upgrade::observe::ClusterObserver;
pub use guards::{action_guards, gather_guards};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NodeActionError {
    #[error(
        "cluster {cluster} has no node {node:?}; `taloscope status --context {cluster}` lists them"
    )]
    UnknownNode { cluster: String, node: String },
    #[error(
        "{what} node {node} needs the Kubernetes API, and cluster {cluster} has no paired kube context"
    )]
    NoKubernetes {
        cluster: String,
        node: String,
        what: String,
    },
}

/// How a node action runs.
#[derive(Debug, Clone, Copy)]
pub struct NodeActionOptions {
    /// The most each of its steps may take (`--node-timeout`).
    pub node_timeout: Duration,
    /// Between two status reads while following the node.
    pub poll_interval: Duration,
    pub drain: DrainOptions,
}

impl NodeActionOptions {
    /// The command line's defaults (`--node-timeout 900 --drain-timeout 300`), polling every
    /// second: what the console runs an action with.
    pub fn console() -> NodeActionOptions {
        NodeActionOptions {
            node_timeout: Duration::from_secs(900),
            poll_interval: Duration::from_secs(1),
            drain: DrainOptions {
                timeout: Duration::from_secs(300),
                retry_every: Duration::from_secs(1),
            },
        }
    }
}

/// One action on one node, as planned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeActionPlan {
    pub cluster: String,
    pub operation: NodeOperation,
    /// The Talos node, by name, and the address it is reached at.
    pub node: String,
    pub address: String,
    pub role: NodeRole,
    /// Its etcd member id, when it has one.
    pub etcd_member: Option<String>,
}

impl NodeActionPlan {
    /// The plan for `operation` on `node` (its name or address) in `status`. Cordon, uncordon
    /// and drain need the Kubernetes API (`kube_paired`).
    pub fn new(
        status: &ClusterStatus,
        node: &str,
        operation: NodeOperation,
        kube_paired: bool,
    ) -> Result<NodeActionPlan, NodeActionError> {
        let Some(found) = status.node(node) else {
            return Err(NodeActionError::UnknownNode {
                cluster: status.name.clone(),
                node: node.to_string(),
            });
        };
        if operation.facts().needs_kube && !kube_paired {
            return Err(NodeActionError::NoKubernetes {
                cluster: status.name.clone(),
                node: found.name.clone(),
                what: operation.verb(),
            });
        }
        let etcd_member = status.etcd_member_of(found);
        Ok(NodeActionPlan {
            cluster: status.name.clone(),
            operation,
            node: found.name.clone(),
            address: found.address.clone(),
            role: found.role,
            etcd_member,
        })
    }

    /// What the dispatcher is asked to approve for this plan.
    pub fn mutating_action(&self) -> crate::approval::MutatingAction {
        crate::approval::MutatingAction::Node {
            cluster: self.cluster.clone(),
            node: self.node.clone(),
            operation: self.operation.clone(),
        }
    }

    /// Whether the action takes the node down (reboot, shutdown).
    pub fn takes_node_down(&self) -> bool {
        self.operation.facts().takes_node_down
    }

    /// Whether the action evicts the node's pods first (drain, and a reboot or shutdown
    /// of a node Kubernetes knows).
    pub fn drains(&self) -> bool {
        self.operation.facts().drains
    }
}

/// The pods on a Kubernetes node and the cluster's disruption budgets.
#[derive(Debug, Clone, Default)]
pub struct NodeWorkloads {
    pub pods: Vec<NodePod>,
    pub budgets: Vec<DisruptionBudget>,
}

/// What the guards look at besides the status, read once before planning is shown.
#[derive(Debug, Clone, Default)]
pub struct NodeSurvey {
    /// The Kubernetes node's name, when a kube context is paired and a node matches.
    pub kube_node: Option<String>,
    /// The pods on the Kubernetes node and the cluster's disruption budgets (drains only);
    /// `Err` says why they could not be read.
    pub workloads: Option<Result<NodeWorkloads, String>>,
    /// The node's services (service restarts only).
    pub services: Option<Result<Vec<ServiceStatus>, String>>,
}

impl NodeSurvey {
    /// Reads what `plan`'s guards need from the node and its Kubernetes side.
    pub async fn read(plan: &NodeActionPlan, observer: &ClusterObserver) -> NodeSurvey {
        let mut survey = NodeSurvey::default();
        if plan.operation.facts().reads_services {
            let services = observer.talos.service_list(&plan.address).await;
            survey.services = Some(services.map_err(|e| e.to_string()));
        }
        let Some(kube) = &observer.kube else {
            return survey;
        };
        let nodes = match kube.nodes().await {
            Ok(nodes) => nodes,
            Err(e) => {
                survey.workloads = Some(Err(format!("reading the Kubernetes nodes: {e}")));
                return survey;
            }
        };
        survey.kube_node =
            match_talos_node(&plan.address, &plan.node, &nodes).map(|n| n.name.clone());
        if let (true, Some(name)) = (plan.drains(), &survey.kube_node) {
            let read = async {
                let pods = kube.pods_on_node(name).await?;
                let budgets = kube.disruption_budgets().await?;
                Ok::<_, crate::kube::KubeError>(NodeWorkloads { pods, budgets })
            };
            survey.workloads = Some(read.await.map_err(|e| e.to_string()));
        }
        survey
    }

    /// The survey of `plan` when the cluster could not be reached (`why`): every read it
    /// needs failing with why, so the guards that need them fail.
    pub fn unread(plan: &NodeActionPlan, why: String) -> NodeSurvey {
        NodeSurvey {
            kube_node: None,
            workloads: plan.drains().then(|| Err(why.clone())),
            services: plan.operation.facts().reads_services.then_some(Err(why)),
        }
    }
}

/// The actions offered on `node` of `status`, only those whose subject exists (each one's
/// `MenuOffer`: cordon when its Kubernetes node is schedulable, uncordon when it is cordoned,
/// drain when it has one); then a restart of each of `services` Talos restarts through its
/// API (node detail lists them).
pub fn offered(
    status: &ClusterStatus,
    node: &NodeStatus,
    services: &[String],
) -> Vec<NodeOperation> {
    let on = OfferedOn {
        cordoned: node.cordoned,
        etcd_member: status.etcd_member_of(node).is_some(),
    };
    let mut offered: Vec<NodeOperation> = (NodeOperation::ON_NODE.into_iter())
        .filter(|op| op.facts().menu.offered(on))
        .collect();
    offered.extend(
        (services.iter())
            .filter(|s| guards::api_restartable(s))
            .map(|s| NodeOperation::ServiceRestart(s.clone())),
    );
    offered
}
