//! A finding's fix as a plan with guards: removing an orphaned member is etcd_maintenance's
//! own remove-member plan and guards; deleting a stuck Machine is checked to be the stuck one
//! and to leave etcd its quorum; rebooting the node of a stopped single member is node_actions'
//! reboot plan, checked to be that node, answering, with no rollout holding the cluster. Pure.
use serde::Serialize;

use super::diagnose::{Finding, Fix, diagnose, stopped_evidence};
use crate::approval::MutatingAction;
use crate::capi::{ClusterTree, MachineRole};
use crate::etcd_maintenance::{EtcdPlan, EtcdRequest, plan_guards};
use crate::fleet::ClusterStatus;
use crate::guards::{Guard, GuardId};
use crate::node_actions::{NodeActionPlan, NodeOperation};
use crate::rollout::LeaseReading;
use crate::talos::Roles;
use crate::upgrade::guards::no_other_rollout_read;
use crate::upgrade::quorum_without;

/// Deleting the Machine a control-plane rollout is stuck on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeletion {
    /// The workload cluster (the discovered cluster's name, the one typed to confirm).
    pub cluster: String,
    /// The management cluster's kube context, and the `cluster.x-k8s.io` version it serves.
    pub management: String,
    pub api_version: String,
    pub namespace: String,
    pub machine: String,
    pub node: String,
    /// The node's etcd member (16 hex digits), when it has one.
    pub member_id: Option<String>,
}

/// The plan of one fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum FixPlan {
    /// etcd_maintenance's remove-member plan.
    Etcd(EtcdPlan),
    DeleteMachine(MachineDeletion),
    /// node_actions' reboot of the stopped single member's node.
    RebootNode(NodeActionPlan),
}

impl FixPlan {
    /// The plan of `finding`'s fix over the workload cluster's `status` and its `tree`;
    /// `Err` when the finding has no fix that is safe to automate (the text says why).
    pub fn new(
        finding: &Finding,
        tree: &ClusterTree,
        status: &ClusterStatus,
    ) -> Result<FixPlan, String> {
        match &finding.fix {
            None => Err(format!(
                "{}: no fix is safe to automate. {}",
                finding.id, finding.explanation
            )),
            Some(Fix::RemoveEtcdMember { member_id, .. }) => {
                let request = EtcdRequest::RemoveMember {
                    member: member_id.clone(),
                };
                EtcdPlan::new(status, &request)
                    .map(FixPlan::Etcd)
                    .map_err(|e| e.to_string())
            }
            Some(Fix::DeleteMachine {
                namespace,
                machine,
                node,
                member_id,
            }) => Ok(FixPlan::DeleteMachine(MachineDeletion {
                cluster: status.name.clone(),
                management: tree.management.clone(),
                api_version: tree.api_version.clone(),
                namespace: namespace.clone(),
                machine: machine.clone(),
                node: node.clone(),
                member_id: member_id.clone(),
            })),
            // The Kubernetes API is down with etcd: the reboot drains nothing.
            Some(Fix::RebootNode { node, .. }) => {
                NodeActionPlan::new(status, node, NodeOperation::Reboot, false)
                    .map(FixPlan::RebootNode)
                    .map_err(|e| e.to_string())
            }
        }
    }

    /// The action the dispatcher approves for this plan.
    pub fn mutating_action(&self) -> MutatingAction {
        match self {
            FixPlan::Etcd(plan) => plan.mutating_action(),
            FixPlan::DeleteMachine(d) => MutatingAction::CapiDeleteMachine {
                cluster: d.cluster.clone(),
                namespace: d.namespace.clone(),
                machine: d.machine.clone(),
            },
            FixPlan::RebootNode(p) => MutatingAction::Node {
                cluster: p.cluster.clone(),
                node: p.node.clone(),
                operation: p.operation.clone(),
            },
        }
    }

    /// The workload cluster the fix changes.
    pub fn cluster(&self) -> &str {
        match self {
            FixPlan::Etcd(plan) => &plan.cluster,
            FixPlan::DeleteMachine(d) => &d.cluster,
            FixPlan::RebootNode(p) => &p.cluster,
        }
    }

    /// What the plan does, one line per step.
    pub fn steps(&self) -> Vec<String> {
        match self {
            FixPlan::Etcd(plan) => plan
                .steps
                .iter()
                .map(|s| format!("{} through {}", plan.action.as_str(), s.node))
                .collect(),
            FixPlan::DeleteMachine(d) => vec![
                format!(
                    "delete Machine {}/{} on {} ({})",
                    d.namespace, d.machine, d.management, d.api_version
                ),
                "follow: the provider removes the member left behind and rolls on".to_string(),
            ],
            FixPlan::RebootNode(p) => vec![
                format!(
                    "reboot node {} ({}); nothing is drained: the Kubernetes API is down with etcd",
                    p.node, p.address
                ),
                "follow: until Talos started etcd at boot and it answers with one healthy member and a leader".to_string(),
            ],
        }
    }
}

/// `finding` found again over the latest tree and status, its plan made again and its guards
/// evaluated; a finding that no longer holds leaves no plan.
pub fn evaluate_fix(
    finding: &mut Finding,
    plan: &mut Result<FixPlan, String>,
    tree: Option<&ClusterTree>,
    status: &ClusterStatus,
    roles: &Roles,
    other: &LeaseReading,
) -> Vec<Guard> {
    let Some(tree) = tree else {
        *plan = Err(format!("{}: the Cluster API tree is not read", finding.id));
        return Vec::new();
    };
    match diagnose(tree, status)
        .into_iter()
        .find(|f| f.id == finding.id)
    {
        Some(now) => *finding = now,
        None => {
            *plan = Err(format!("{} no longer holds: nothing to fix", finding.id));
            return Vec::new();
        }
    }
    *plan = FixPlan::new(finding, tree, status);
    match plan {
        Ok(p) => fix_guards(p, tree, status, roles, other),
        Err(_) => Vec::new(),
    }
}

/// Every guard of the plan: the etcd plan's own; for a Machine deletion that it is still the
/// stuck one and that etcd keeps its quorum without its member; for a reboot the client's role,
/// no rollout holding the cluster's Lease (`other`, read by the caller) and that the node is
/// still the stopped single member's, answering and running. The Lease cannot be read while
/// the cluster's Kubernetes API is down with that etcd: that guard then warns, asking for an
/// acknowledgement, rather than pass on a read that failed.
pub fn fix_guards(
    plan: &FixPlan,
    tree: &ClusterTree,
    status: &ClusterStatus,
    roles: &Roles,
    other: &LeaseReading,
) -> Vec<Guard> {
    match plan {
        FixPlan::RebootNode(p) => vec![
            crate::node_actions::guards::role(roles),
            no_other_rollout_read(&p.cluster, other, Some(API_DOWN_WITH_ETCD)),
            stopped_member(p, tree, status),
        ],
        FixPlan::Etcd(etcd) => plan_guards(etcd, status, roles, other),
        FixPlan::DeleteMachine(d) => {
            let mut guards = vec![stuck_machine(d, tree, status)];
            if let Some(id) = &d.member_id {
                guards.push(quorum_without(status, id, &d.node));
            }
            guards
        }
    }
}

/// Why the Lease of a cluster whose only etcd member stopped cannot be read.
const API_DOWN_WITH_ETCD: &str = "its Kubernetes API is down with its only etcd member, the \
     fault this reboot repairs";

fn stuck_machine(d: &MachineDeletion, tree: &ClusterTree, status: &ClusterStatus) -> Guard {
    let id = GuardId::StuckMachine;
    let others = tree
        .machines
        .iter()
        .filter(|m| m.role == MachineRole::Controlplane && !m.deleting && m.name != d.machine)
        .count();
    if others == 0 {
        return Guard::fail(
            id,
            format!("{} is the only control-plane Machine", d.machine),
        );
    }
    let still = diagnose(tree, status).into_iter().find(
        |f| matches!(&f.fix, Some(Fix::DeleteMachine { machine, .. }) if machine == &d.machine),
    );
    match still {
        Some(f) if f.kind == super::diagnose::FindingKind::StuckRollout => Guard::pass(
            id,
            format!(
                "the rollout waits on the etcd member of {} ({}); {others} other Machine(s) stay",
                d.machine, d.node
            ),
        ),
        Some(f) => Guard::pass(
            id,
            format!(
                "still found: {}; {others} other Machine(s) stay",
                crate::printable::line(&f.summary)
            ),
        ),
        None => Guard::fail(
            id,
            format!(
                "the rollout is no longer stuck on {}: nothing to delete",
                d.machine
            ),
        ),
    }
}

/// The node to reboot still answers the Talos API, runs (no sequence under way) and is the
/// node of the stopped single member; a reboot changes no data, so a damaged database shows
/// only as etcd not coming back, which the follow reports with the recovery.
fn stopped_member(p: &NodeActionPlan, tree: &ClusterTree, status: &ClusterStatus) -> Guard {
    let id = GuardId::EtcdStopped;
    let node = &p.node;
    let Some(answering) = status.node(node).filter(|n| n.error.is_none()) else {
        return Guard::fail(
            id,
            format!("{node} does not answer the Talos API: a reboot cannot be asked"),
        );
    };
    let still = diagnose(tree, status)
        .iter()
        .any(|f| matches!(&f.fix, Some(Fix::RebootNode { node: n, .. }) if n == node));
    if !still {
        return Guard::fail(
            id,
            format!("etcd on {node} is no longer a stopped single member: nothing to reboot"),
        );
    }
    let member = status
        .etcd
        .members
        .iter()
        .find(|m| super::diagnose::is_member_of(&m.hostname, node));
    let evidence = stopped_evidence(answering, member).unwrap_or_default();
    match answering.stage {
        Some(crate::talos::MachineStage::Running) => Guard::pass(
            id,
            format!("{node} answers and runs; its etcd {evidence}; Talos starts etcd at boot"),
        ),
        Some(stage) => Guard::fail(
            id,
            format!("{node} is in stage {stage}: wait for its sequence to end"),
        ),
        None => Guard::fail(id, format!("{node}: its stage is unknown")),
    }
}
