//! Following a Cluster API scale, pure part: what changed between two looks at the object's
//! Machines (created, got a node, Ready, deleting, deleted), and whether the scale is done
//! (as many Machines as asked, each with a Ready node, every control plane an etcd member).
use serde::Serialize;

use crate::capi::{ClusterTree, MachineNode};
use crate::fleet::ClusterStatus;
use crate::kube::ScaledKind;

use super::plan::ScalePlan;

/// One Machine as one look saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MachineSeen {
    pub name: String,
    pub phase: String,
    pub node: String,
    pub ready: bool,
    pub deleting: bool,
}

impl MachineSeen {
    pub fn of(m: &MachineNode) -> MachineSeen {
        MachineSeen {
            name: m.name.clone(),
            phase: m.phase.clone(),
            node: m.node.clone(),
            ready: m.ready,
            deleting: m.deleting,
        }
    }
}

/// The scaled object's Machines in `tree`, as seen now.
pub fn machines_seen(plan: &ScalePlan, tree: &ClusterTree) -> Vec<MachineSeen> {
    plan.machines_of(tree)
        .into_iter()
        .map(MachineSeen::of)
        .collect()
}

/// What happened to one Machine between two looks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "change")]
pub enum MachineChange {
    Created { machine: String, phase: String },
    GotNode { machine: String, node: String },
    Ready { machine: String, node: String },
    Deleting { machine: String },
    Deleted { machine: String },
}

impl MachineChange {
    /// "Machine w-cp-x7k2p: node w-cp-x7k2p Ready".
    pub fn line(&self) -> String {
        match self {
            MachineChange::Created { machine, phase } => {
                format!("Machine {machine}: created ({phase})")
            }
            MachineChange::GotNode { machine, node } => format!("Machine {machine}: node {node}"),
            MachineChange::Ready { machine, node } => {
                format!("Machine {machine}: node {node} Ready")
            }
            MachineChange::Deleting { machine } => format!("Machine {machine}: deleting"),
            MachineChange::Deleted { machine } => format!("Machine {machine}: deleted"),
        }
    }
}

/// The changes from `before` to `after`, Machine by Machine in `after`'s order, the deleted
/// ones last.
pub fn machine_changes(before: &[MachineSeen], after: &[MachineSeen]) -> Vec<MachineChange> {
    let mut changes = Vec::new();
    for now in after {
        let machine = now.name.clone();
        let was = before.iter().find(|b| b.name == now.name);
        if was.is_none() {
            changes.push(MachineChange::Created {
                machine: machine.clone(),
                phase: now.phase.clone(),
            });
        }
        if !now.node.is_empty() && was.is_none_or(|b| b.node.is_empty()) {
            changes.push(MachineChange::GotNode {
                machine: machine.clone(),
                node: now.node.clone(),
            });
        }
        if now.ready && was.is_none_or(|b| !b.ready) {
            changes.push(MachineChange::Ready {
                machine: machine.clone(),
                node: now.node.clone(),
            });
        }
        if now.deleting && was.is_none_or(|b| !b.deleting) {
            changes.push(MachineChange::Deleting { machine });
        }
    }
    for gone in before
        .iter()
        .filter(|b| !after.iter().any(|a| a.name == b.name))
    {
        changes.push(MachineChange::Deleted {
            machine: gone.name.clone(),
        });
    }
    changes
}

/// Where a scale stands after one look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScaleState {
    Done,
    /// What it still waits for, in the operator's words.
    Waiting(String),
    /// It cannot end as planned.
    Failed(String),
}

/// Done once the object asks for `plan.to`, has that many Machines, none deleting, each with
/// a node Ready in CAPI and (when Kubernetes answered) in Kubernetes, and for control planes
/// as many etcd members.
pub fn scale_state(plan: &ScalePlan, tree: &ClusterTree, status: &ClusterStatus) -> ScaleState {
    let Some(counts) = plan.counts_in(tree) else {
        return ScaleState::Failed(format!("{} is gone", plan.object()));
    };
    if counts.replicas != plan.to {
        return ScaleState::Failed(format!(
            "{} spec.replicas is now {}, not {}: changed by someone else",
            plan.object(),
            counts.replicas,
            plan.to
        ));
    }
    let machines = plan.machines_of(tree);
    if let Some(m) = machines.iter().find(|m| m.deleting) {
        return ScaleState::Waiting(format!("Machine {} being deleted", m.name));
    }
    if machines.len() != plan.to as usize {
        return ScaleState::Waiting(format!("{} of {} Machines", machines.len(), plan.to));
    }
    if let Some(m) = machines.iter().find(|m| m.node.is_empty()) {
        return ScaleState::Waiting(format!("Machine {} has no node yet", m.name));
    }
    if let Some(m) = machines.iter().find(|m| !m.ready) {
        return ScaleState::Waiting(format!("Machine {} not Ready", m.name));
    }
    if let Some(waiting) = kubernetes_waiting(&machines, status) {
        return ScaleState::Waiting(waiting);
    }
    let members = status.etcd.quorum.members;
    if plan.kind == ScaledKind::TalosControlPlane && members != plan.to as usize {
        return ScaleState::Waiting(format!("{members} etcd members, {} wanted", plan.to));
    }
    ScaleState::Done
}

/// A Machine whose node Kubernetes does not show Ready, when Kubernetes listed its nodes.
fn kubernetes_waiting(machines: &[&MachineNode], status: &ClusterStatus) -> Option<String> {
    let listed = status
        .kubernetes
        .as_ref()
        .is_some_and(|k| k.error.is_none());
    if !listed {
        return None;
    }
    machines.iter().find_map(|m| {
        let ready = status
            .nodes
            .iter()
            .find(|n| n.name == m.node)
            .and_then(|n| n.k8s_ready);
        (ready != Some(true)).then(|| format!("Kubernetes node {} not Ready yet", m.node))
    })
}

/// How many Machines of the change are done: created and Ready, or gone.
pub fn machines_done(plan: &ScalePlan, before: &[String], now: &[MachineSeen]) -> usize {
    if plan.create > 0 {
        now.iter()
            .filter(|m| !before.contains(&m.name) && m.ready)
            .count()
    } else {
        before
            .iter()
            .filter(|b| !now.iter().any(|m| &m.name == *b))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(name: &str, node: &str, ready: bool, deleting: bool) -> MachineSeen {
        MachineSeen {
            name: name.into(),
            phase: if node.is_empty() {
                "Provisioning"
            } else {
                "Running"
            }
            .into(),
            node: node.into(),
            ready,
            deleting,
        }
    }

    #[test]
    fn each_step_of_a_machine_is_told_once() {
        let a = seen("a", "a", true, false);
        let before = vec![a.clone(), seen("old", "old", true, false)];
        let lines = |c: Vec<MachineChange>| c.iter().map(MachineChange::line).collect::<Vec<_>>();
        let created = vec![
            a.clone(),
            seen("old", "old", true, true),
            seen("b", "", false, false),
        ];
        assert_eq!(
            lines(machine_changes(&before, &created)),
            vec!["Machine old: deleting", "Machine b: created (Provisioning)"]
        );
        let joined = vec![a.clone(), seen("b", "b", true, false)];
        assert_eq!(
            lines(machine_changes(&created, &joined)),
            vec![
                "Machine b: node b",
                "Machine b: node b Ready",
                "Machine old: deleted"
            ]
        );
        assert!(machine_changes(&joined, &joined).is_empty());
    }
}
