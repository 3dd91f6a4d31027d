//! One phase of the CAPI-way upgrade on the live management cluster: copy the machine
//! template and patch the object (unless a killed run already did), then follow the providers
//! as they replace its Machines one at a time, saying each Machine created, node Ready and old
//! Machine deleted, with etcd's quorum checked on every poll and a bound on each Machine. An
//! OnDelete object's Machines are deleted here, one at a time, each once the last replacement
//! is Ready and every etcd member healthy.
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::guards::{is_patched, quorum_kept};
use super::plan::{CapiPhase, CapiUpgradePlan, PhaseObject, phase_machines};
use super::read::CapiAccess;
use crate::capi::{ClusterTree, MachineNode};
use crate::guards::Verdict;
use crate::rollout::StepPhase;
use crate::rollout::StepReport;
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::runner::KindStep;

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

/// A step of the phase's progress: the step's detail (the command prints each) and a line
/// of the event log (the console's progress pane keeps each).
fn say(report: &StepReport, line: String) {
    report.log(&line);
    report.phase(StepPhase::Installing, line);
}

/// One phase, connected.
pub struct PhaseRollout<'a> {
    pub plan: &'a CapiUpgradePlan,
    pub phase: &'a CapiPhase,
    pub access: CapiAccess,
    pub observer: ClusterObserver,
    pub poll_interval: Duration,
}

impl PhaseRollout<'_> {
    /// Copies the template and patches the object, each only when not done yet.
    async fn patch(&self, tree: &ClusterTree, report: &StepReport) -> Result<(), String> {
        if is_patched(self.plan, self.phase, tree) {
            say(
                report,
                format!(
                    "{} already patched; following its rollout",
                    self.phase.label()
                ),
            );
            return Ok(());
        }
        if let Some(copy) = &self.phase.template
            && self.access.copy_template(copy).await?
        {
            say(
                report,
                format!("{} {} created from {}", copy.kind, copy.to, copy.from),
            );
        }
        self.access
            .patch(self.phase.kind(), &self.phase.name, &self.phase.patch)
            .await?;
        say(
            report,
            format!("{} patched to {}", self.phase.label(), self.plan.version),
        );
        Ok(())
    }

    /// The etcd quorum over the Talos API, from the Secret's current endpoints; whether
    /// every member is healthy (an OnDelete phase deletes a Machine only then).
    async fn check_quorum(&self) -> Result<bool, String> {
        let observer = self
            .access
            .workload_observer(
                self.plan,
                self.observer.kube.clone(),
                self.observer.options.client,
            )
            .await?;
        let status = observer.status().await;
        let guard = quorum_kept(&status);
        match guard.verdict {
            Verdict::Fail => Err(format!("{}: {}", guard.id.title(), guard.reason)),
            _ => Ok(
                !status.etcd.members.is_empty() && status.etcd.members.iter().all(|m| m.healthy)
            ),
        }
    }
}

impl KindStep for PhaseRollout<'_> {
    async fn settle(&self) -> Result<bool, String> {
        let tree = self.access.tree().await?;
        Ok(phase_waiting(self.plan, self.phase, &tree).is_ok())
    }

    async fn run(&self, report: &StepReport) -> Result<(), String> {
        let tree = self.access.tree().await?;
        self.patch(&tree, report).await?;
        let bound = Duration::from_secs(self.plan.machine_timeout_secs.max(1));
        let mut seen = machine_states(&phase_machines(&tree, self.phase));
        let mut progress_at = Instant::now();
        loop {
            let tree = self.access.tree().await?;
            let now = machine_states(&phase_machines(&tree, self.phase));
            for line in machine_changes(&seen, &now) {
                say(report, line);
                progress_at = Instant::now();
            }
            seen = now;
            let waiting = match phase_waiting(self.plan, self.phase, &tree) {
                Ok(()) => return Ok(()),
                Err(waiting) => waiting,
            };
            let etcd_healthy = self.check_quorum().await?;
            if etcd_healthy && let Some(next) = next_on_delete(self.plan, self.phase, &tree) {
                // The OnDelete step: the provider makes the replacement once it is gone
                // (cluster-api-control-plane-provider-talos controllers/upgrade.go).
                self.access.delete_machine(next).await?;
                say(report, format!("machine {next} deleted (OnDelete)"));
                progress_at = Instant::now();
            }
            if progress_at.elapsed() > bound {
                return Err(format!(
                    "no Machine created, Ready or deleted for {}s ({waiting})",
                    bound.as_secs()
                ));
            }
            tokio::time::sleep(self.poll_interval).await;
        }
    }
}

#[cfg(test)]
#[path = "phase_tests.rs"]
mod tests;
