//! The CAPI-way upgrade as an operation: one step per phase (the TalosControlPlane, then each
//! MachineDeployment, as the providers' docs order them). Before each phase its guards are read
//! again from the management cluster and the workload cluster's Talos endpoints; the step
//! copies the machine template and patches the object (unless a killed run already did), then
//! follows the providers as they replace its Machines, with etcd's quorum checked on every
//! poll, each Machine bounded on its own and the phase by all of them. The workload cluster's
//! rollout Lease is held from the first phase to the end, renewed on every poll.
use std::path::Path;
use std::time::Duration;

use tokio::time::Instant;

use super::{Operation, OperationKind, Step, StepContext, StepError};
use crate::approval::MutatingAction;
use crate::capi::ClusterTree;
use crate::fleet::RolloutLease;
use crate::guards::{Guard, GuardId, Verdict};
use crate::journal::ACTIONS;
use crate::journal::action::ActionRecord;
use crate::kube::KubeClient;
use crate::rollout::{LeaseProgress, RolloutKind};
use crate::run_holder::RunHolder;
use crate::talos::ClientOptions;
use crate::upgrade::capi::guards::{quorum_kept, version_path};
use crate::upgrade::capi::phase::{machine_changes, machine_states, next_on_delete, phase_waiting};
use crate::upgrade::capi::plan::phase_machines;
use crate::upgrade::capi::{
    CapiAccess, CapiPhase, CapiProduct, CapiUpgradePlan, capi_action, capi_phase_guards,
};

/// How a run polls and holds its Lease, and whose Lease it takes over.
#[derive(Debug, Clone)]
pub struct CapiUpgradeOptions {
    /// How often the management cluster and etcd are read while a phase rolls.
    pub poll: Duration,
    /// The rollout Lease's duration; it is renewed on every poll.
    pub lease_duration: Duration,
    /// The Talos client's timeouts towards the workload cluster's nodes.
    pub client: ClientOptions,
    /// The run of this same upgrade that was interrupted (its journal's holder): its Lease is
    /// taken over, since its process is gone.
    pub displaces: Option<String>,
}

impl Default for CapiUpgradeOptions {
    fn default() -> Self {
        CapiUpgradeOptions {
            poll: Duration::from_secs(2),
            lease_duration: Duration::from_secs(60),
            client: ClientOptions::default(),
            displaces: None,
        }
    }
}

/// A planned CAPI-way upgrade with its management cluster connected.
pub struct CapiUpgrade {
    plan: CapiUpgradePlan,
    access: CapiAccess,
    /// The workload cluster's own Kubernetes API: where its rollout Lease lives.
    workload: Option<KubeClient>,
    options: CapiUpgradeOptions,
    holder: String,
    lease: Option<RolloutLease>,
    /// What the phase under way waits for, as last seen.
    waiting: String,
}

/// The longest a phase may take: each Machine it replaces bounded on its own, and one more
/// bound for the patch and the last Machine's settling.
pub fn phase_bound(plan: &CapiUpgradePlan, phase: &CapiPhase) -> Duration {
    let machine = Duration::from_secs(plan.machine_timeout_secs.max(1));
    machine * (phase.replace.len() as u32 + 1)
}

/// Phase `phase`'s step as the run and its progress name it:
/// "TalosControlPlane/work-cp: 3 machine(s) to v1.34.2".
pub fn phase_step(plan: &CapiUpgradePlan, phase: &CapiPhase) -> String {
    format!(
        "{}: {} machine(s) to {}",
        phase.label(),
        phase.replace.len(),
        plan.version
    )
}

/// The unfinished record a killed run of the upgrade `plan` left in the cluster's action
/// journal (no outcome, or reported interrupted since): the run this one resumes.
pub fn interrupted_run(state_dir: &Path, plan: &CapiUpgradePlan) -> Option<ActionRecord> {
    let path = ACTIONS.path_for(state_dir, &plan.cluster);
    let record: ActionRecord = ACTIONS.load(&path).ok().flatten()?;
    let unfinished = record.outcome.as_deref().is_none_or(|o| o == "interrupted");
    (unfinished && record.action == capi_action(plan).describe()).then_some(record)
}

/// The phase a run of `plan` has work in, counted from 1, as `tree` shows the cluster: the
/// first whose Machines are not all on the target and Ready (past the last when none).
pub fn first_phase_to_roll(plan: &CapiUpgradePlan, tree: &ClusterTree) -> usize {
    plan.phases
        .iter()
        .position(|p| phase_waiting(plan, p, tree).is_err())
        .map_or(plan.phases.len(), |i| i + 1)
}

impl CapiUpgrade {
    /// The upgrade of `plan`, reaching its management cluster through `kubeconfig` and the
    /// workload cluster's Kubernetes API through `workload`.
    pub async fn connect(
        plan: CapiUpgradePlan,
        kubeconfig: &kube::config::Kubeconfig,
        workload: Option<KubeClient>,
        options: CapiUpgradeOptions,
    ) -> Result<CapiUpgrade, String> {
        let access = CapiAccess::connect(kubeconfig, &plan.owner())
            .await
            .map_err(|e| format!("management cluster {}: {e}", plan.management))?;
        Ok(CapiUpgrade::new(plan, access, workload, options))
    }

    /// The upgrade of `plan` on its connected management cluster.
    pub fn new(
        plan: CapiUpgradePlan,
        access: CapiAccess,
        workload: Option<KubeClient>,
        options: CapiUpgradeOptions,
    ) -> CapiUpgrade {
        CapiUpgrade {
            plan,
            access,
            workload,
            options,
            holder: RunHolder::this_process().to_string(),
            lease: None,
            waiting: String::new(),
        }
    }

    fn rollout_kind(&self) -> RolloutKind {
        match self.plan.product {
            CapiProduct::Kubernetes => RolloutKind::KubernetesUpgrade,
            CapiProduct::TalosOs => RolloutKind::TalosUpgrade,
        }
    }

    /// Takes the workload cluster's rollout Lease, once: one run changes a cluster at a time.
    async fn take_lease(&mut self, step: &StepContext<'_>) -> Result<(), StepError> {
        if self.lease.is_some() {
            return Ok(());
        }
        let kube = self.workload.as_ref().ok_or_else(|| {
            format!(
                "{} has no kube context: its rollout Lease cannot be taken",
                self.plan.cluster
            )
        })?;
        let lease = kube
            .acquire_rollout_lease(
                &self.plan.cluster,
                &self.holder,
                self.options.displaces.as_deref(),
                (
                    self.rollout_kind(),
                    &self.plan.target,
                    self.plan.phases.len(),
                ),
                self.options.lease_duration,
            )
            .await
            .map_err(|e| format!("refused: {e}"))?;
        if let Some(before) = &self.options.displaces {
            step.say(format!(
                "rollout Lease taken over from the interrupted run {}",
                crate::run_holder::holder_described(before)
            ));
        }
        self.lease = Some(lease);
        Ok(())
    }

    async fn renew(&mut self, index: usize, phase: &CapiPhase) -> Result<(), StepError> {
        let Some(lease) = self.lease.as_mut() else {
            return Ok(());
        };
        let progress = LeaseProgress {
            node_index: index + 1,
            current_node: Some(phase.label()),
            phase: "replacing machines".into(),
        };
        lease
            .renew(&progress)
            .await
            .map_err(|e| StepError::Failed(e.to_string()))
    }

    /// Copies the template and patches the object, each only when not done yet.
    async fn patch(&self, phase: &CapiPhase, step: &StepContext<'_>) -> Result<(), String> {
        let tree = self.access.tree().await?;
        if crate::upgrade::capi::guards::is_patched(&self.plan, phase, &tree) {
            step.say(format!(
                "{} already patched; following its rollout",
                phase.label()
            ));
            return Ok(());
        }
        if let Some(copy) = &phase.template
            && self.access.copy_template(copy).await?
        {
            step.say(format!(
                "{}: {} {} created from {}",
                phase.label(),
                copy.kind,
                copy.to,
                copy.from
            ));
        }
        self.access
            .patch(phase.kind(), &phase.name, &phase.patch)
            .await?;
        step.say(format!(
            "{} patched to {}",
            phase.label(),
            self.plan.version
        ));
        Ok(())
    }

    /// etcd's quorum over the Talos API, from the Secret's current endpoints: `Err` when it
    /// is lost; whether every member is healthy (an OnDelete phase deletes a Machine only
    /// then).
    async fn check_quorum(&self) -> Result<bool, String> {
        let observer = self
            .access
            .workload_observer(&self.plan, self.workload.clone(), self.options.client)
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

    /// Phase `index`: patched, then followed until every Machine runs the target and is
    /// Ready; no Machine created, Ready or deleted for a Machine's bound stops it.
    async fn roll(&mut self, index: usize, step: &StepContext<'_>) -> Result<String, StepError> {
        let phase = self.plan.phases[index].clone();
        let label = phase.label();
        self.patch(&phase, step).await?;
        let bound = Duration::from_secs(self.plan.machine_timeout_secs.max(1));
        let mut seen = machine_states(&phase_machines(&self.access.tree().await?, &phase));
        let mut progress_at = Instant::now();
        self.waiting.clear();
        loop {
            let tree = self.access.tree().await?;
            let now = machine_states(&phase_machines(&tree, &phase));
            for line in machine_changes(&seen, &now) {
                step.say(format!("{label}: {line}"));
                progress_at = Instant::now();
            }
            seen = now;
            let waiting = match phase_waiting(&self.plan, &phase, &tree) {
                Ok(()) => {
                    return Ok(format!(
                        "{label}: every Machine on {}, Ready",
                        self.plan.version
                    ));
                }
                Err(waiting) => waiting,
            };
            if waiting != self.waiting {
                step.say(format!("{label}: waiting: {waiting}"));
                self.waiting = waiting.clone();
            }
            let etcd_healthy = self.check_quorum().await?;
            if etcd_healthy && let Some(next) = next_on_delete(&self.plan, &phase, &tree) {
                // The OnDelete step: the provider makes the replacement once it is gone
                // (cluster-api-control-plane-provider-talos controllers/upgrade.go).
                self.access.delete_machine(next).await?;
                step.say(format!("{label}: machine {next} deleted (OnDelete)"));
                progress_at = Instant::now();
            }
            if progress_at.elapsed() > bound {
                return Err(StepError::Failed(format!(
                    "{label}: no Machine created, Ready or deleted for {}s ({waiting})",
                    bound.as_secs()
                )));
            }
            self.renew(index, &phase).await?;
            step.wait(self.options.poll, &format!("{label}: {waiting}"))
                .await?;
        }
    }
}

impl Operation for CapiUpgrade {
    fn kind(&self) -> OperationKind {
        OperationKind::CapiUpgrade
    }

    fn action(&self) -> MutatingAction {
        capi_action(&self.plan)
    }

    fn steps(&self) -> Vec<Step> {
        self.plan
            .phases
            .iter()
            .map(|p| Step {
                what: phase_step(&self.plan, p),
                timeout: phase_bound(&self.plan, p),
            })
            .collect()
    }

    /// Before each phase, read again: the version path (before the first), no rollout of the
    /// providers under way, the phase's wait able to finish, and the cluster healthy (or,
    /// for a phase this upgrade already patched, etcd's quorum).
    async fn guards(&self, index: usize) -> Vec<Guard> {
        let read = self
            .access
            .tree_and_status(&self.plan, self.workload.clone(), self.options.client)
            .await;
        let (tree, status) = match read {
            Ok(read) => read,
            Err(e) => {
                return vec![Guard::fail(
                    GuardId::CapiOwned,
                    format!("cannot read {}: {e}", self.plan.owner()),
                )];
            }
        };
        let mut guards = capi_phase_guards(&self.plan, index, &tree, &status);
        if index == 0 {
            let status = crate::upgrade::capi::guards::machines_only(&status, &tree);
            guards.push(version_path(&self.plan, &tree, &status));
        }
        guards
    }

    async fn run_step(
        &mut self,
        index: usize,
        step: &StepContext<'_>,
    ) -> Result<String, StepError> {
        if index >= self.plan.phases.len() {
            return Err(format!(
                "the upgrade of {} has no phase {}",
                self.plan.cluster,
                index + 1
            )
            .into());
        }
        self.take_lease(step).await?;
        self.roll(index, step).await
    }

    /// A phase stopped while it waits stays patched: the providers go on replacing its
    /// Machines without this run.
    fn stopped_at(&self, index: usize) -> String {
        let Some(phase) = self.plan.phases.get(index) else {
            return String::new();
        };
        let waiting = if self.waiting.is_empty() {
            String::new()
        } else {
            format!(" (it waited for: {})", self.waiting)
        };
        format!(
            "; {} stays patched to {}{waiting}: the providers go on replacing its Machines, and the same upgrade run again follows it to the end",
            phase.label(),
            self.plan.version
        )
    }

    async fn release(&mut self) -> Option<String> {
        crate::fleet::give_back(self.lease.take()).await
    }

    fn finished(&self, done: &[String]) -> String {
        format!(
            "rollout of {} completed: {} of {} phases, every Machine on {}",
            self.plan.cluster,
            done.len(),
            self.plan.phases.len(),
            self.plan.version
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::tree_tests::fixture_tree;
    use crate::kube::CapiVersion;

    fn k8s_plan() -> CapiUpgradePlan {
        let tree = fixture_tree(CapiVersion::V1beta2);
        crate::upgrade::capi::plan::tests::k8s_plan(&tree, "v1.34.2")
    }

    #[test]
    fn a_phase_is_bounded_by_each_of_its_machines_and_one_more() {
        let mut plan = k8s_plan();
        plan.machine_timeout_secs = 600;
        let phase = plan.phases[0].clone();
        assert_eq!(
            phase_bound(&plan, &phase),
            Duration::from_secs(600 * (phase.replace.len() as u64 + 1))
        );
    }

    #[test]
    fn the_phase_with_work_is_the_first_not_on_the_target() {
        let mut tree = fixture_tree(CapiVersion::V1beta2);
        let plan = k8s_plan();
        assert_eq!(first_phase_to_roll(&plan, &tree), 1);
        tree.control_plane.as_mut().unwrap().version = "v1.34.2".into();
        let names = plan.phases[0].replace.clone();
        for m in tree.machines.iter_mut().filter(|m| names.contains(&m.name)) {
            m.version = "v1.34.2".into();
            m.ready = true;
            m.deleting = false;
        }
        assert_eq!(first_phase_to_roll(&plan, &tree), 2);
    }

    #[test]
    fn an_interrupted_run_of_the_same_upgrade_is_found_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let plan = k8s_plan();
        assert!(interrupted_run(dir.path(), &plan).is_none());
        let action = capi_action(&plan).describe();
        let journal =
            crate::journal::action::begin_action(dir.path(), &plan.cluster, &action, None).unwrap();
        drop(journal);
        let found = interrupted_run(dir.path(), &plan).expect("the killed run");
        assert_eq!(found.holder, RunHolder::this_process().to_string());
        let mut other = plan.clone();
        other.target = "1.35.0".into();
        assert!(
            interrupted_run(dir.path(), &other).is_none(),
            "another target"
        );
        let mut journal =
            crate::journal::action::begin_action(dir.path(), &plan.cluster, &action, None).unwrap();
        journal
            .update(|r| r.outcome = Some("finished".into()))
            .unwrap();
        drop(journal);
        assert!(
            interrupted_run(dir.path(), &plan).is_none(),
            "a finished run"
        );
    }
}
