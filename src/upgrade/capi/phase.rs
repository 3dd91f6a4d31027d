//! Where one phase of the CAPI-way upgrade stands, pure: what it still waits for (Machines
//! to replace, not Ready, too few), the Machine an OnDelete phase deletes next (each once the
//! last replacement is Ready), and the progress lines between two looks at its Machines
//! (created, node Ready, deleted). `operation::capi_upgrade` follows a phase with them.
use std::collections::BTreeMap;

use super::guards::is_patched;
use super::plan::{CapiPhase, CapiUpgradePlan, PhaseObject, phase_machines};
use crate::capi::{ClusterTree, MachineNode};

/// `Ok` when every Machine of the phase runs the target, is ready and none is left over;
/// otherwise what it still waits for.
pub fn phase_waiting(
    plan: &CapiUpgradePlan,
    phase: &CapiPhase,
    tree: &ClusterTree,
) -> Result<(), String> {
    if !is_patched(plan, phase, tree) {
        return Err(format!(
            "{} does not ask for {} yet",
            phase.label(),
            plan.version
        ));
    }
    let machines = phase_machines(tree, phase);
    let outdated: Vec<&str> = machines
        .iter()
        .filter(|m| !plan.is_on_target(phase, m))
        .map(|m| m.name.as_str())
        .collect();
    if !outdated.is_empty() {
        return Err(format!("to replace: {}", outdated.join(", ")));
    }
    let unready: Vec<&str> = machines
        .iter()
        .filter(|m| !m.ready || m.deleting)
        .map(|m| m.name.as_str())
        .collect();
    if !unready.is_empty() {
        return Err(format!("not ready yet: {}", unready.join(", ")));
    }
    let wanted = desired(phase, tree);
    if machines.len() as u32 != wanted {
        return Err(format!("{} of {wanted} Machines", machines.len()));
    }
    Ok(())
}

/// The object's replicas now (an operator may scale it meanwhile), else the planned ones.
fn desired(phase: &CapiPhase, tree: &ClusterTree) -> u32 {
    let now = match phase.object {
        PhaseObject::TalosControlPlane => tree.control_plane.as_ref().map(|c| c.counts.replicas),
        PhaseObject::MachineDeployment => tree
            .machine_deployments
            .iter()
            .find(|d| d.name == phase.name)
            .map(|d| d.counts.replicas),
    };
    now.unwrap_or(phase.replicas)
}

/// The Machine an OnDelete phase deletes next: the first outdated one in the plan's order,
/// once every Machine of the phase is Ready, none is being deleted and there are as many as
/// the object asks for (the last replacement has joined); `None` while one is in flight.
pub fn next_on_delete<'a>(
    plan: &CapiUpgradePlan,
    phase: &'a CapiPhase,
    tree: &ClusterTree,
) -> Option<&'a str> {
    if !phase.on_delete || !is_patched(plan, phase, tree) {
        return None;
    }
    let machines = phase_machines(tree, phase);
    let settled = machines.iter().all(|m| m.ready && !m.deleting)
        && machines.len() as u32 == desired(phase, tree);
    if !settled {
        return None;
    }
    phase
        .replace
        .iter()
        .find(|name| {
            machines
                .iter()
                .any(|m| &m.name == *name && !plan.is_on_target(phase, m))
        })
        .map(String::as_str)
}

/// What a phase's Machines look like to the progress lines: by name, ready or not.
pub type MachineStates = BTreeMap<String, bool>;

pub fn machine_states(machines: &[&MachineNode]) -> MachineStates {
    machines
        .iter()
        .map(|m| (m.name.clone(), m.ready && !m.node.is_empty()))
        .collect()
}

/// The progress lines between two looks at a phase's Machines: created, node Ready, deleted.
pub fn machine_changes(before: &MachineStates, after: &MachineStates) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, &ready) in after {
        match before.get(name) {
            None => {
                lines.push(format!("machine {name} created"));
                if ready {
                    lines.push(format!("node {name} Ready"));
                }
            }
            Some(false) if ready => lines.push(format!("node {name} Ready")),
            _ => {}
        }
    }
    for name in before.keys().filter(|n| !after.contains_key(*n)) {
        lines.push(format!("old machine {name} deleted"));
    }
    lines
}

#[cfg(test)]
#[path = "phase_tests.rs"]
mod tests;
