//! The Kubernetes upgrade as a rollout on the shared engine: the step executor (plan guards and
//! the removed-API check before the first step, step guards before each, one component on one
//! node per step) and the entry points that start a new run or resume one from its journal.
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::mpsc::UnboundedSender;

use super::guards::{KubeGuardInput, kubernetes_plan_guards, kubernetes_step_guards};
use super::plan::{KubeStepState, KubernetesUpgradePlan};
use super::step::{ComponentStep, pre_pull};
use crate::approval::{ApprovedAction, MutatingAction};
use crate::discovery::Cluster;
use crate::kube::removed_apis::RemovedApiCount;
use crate::rollout::engine::{RolloutHandle, StepExecutor, StepReport};
use crate::rollout::journal::RolloutJournal;
use crate::rollout::{RolloutEvent, RolloutKind, StepPhase, StepProgress};
use crate::upgrade::launch::{Launch, NewJournal, guards_pass, journal_plan, new_journal, refuse};
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::runner::RunOptions;

/// The target as the journal, the Lease and the dispatcher name it: `1.35.0`.
pub fn target_text(plan: &KubernetesUpgradePlan) -> String {
    plan.target.to_string().trim_start_matches('v').to_string()
}

/// A confirmed Kubernetes upgrade, ready to run. `options.node_timeout` is the per-step timeout.
pub struct KubernetesUpgradeRun {
    pub approved: ApprovedAction,
    pub plan: KubernetesUpgradePlan,
    /// Typed acknowledgements (e.g. [`super::REMOVED_APIS_ACK`]).
    pub acks: Vec<String>,
    pub cluster: Cluster,
    pub options: RunOptions,
}

/// Starts a new Kubernetes upgrade on the current tokio runtime. Refusals (a guard fails, another
/// rollout holds the cluster, the approval does not match) arrive as `Finished { Halted }` before
/// any node is touched.
pub fn spawn_kubernetes_upgrade(
    run: KubernetesUpgradeRun,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutHandle {
    let journal = new_journal(NewJournal {
        kind: RolloutKind::KubernetesUpgrade,
        cluster: &run.plan.cluster,
        target: target_text(&run.plan),
        acks: &run.acks,
        plan: &run.plan,
        options: &run.options,
        steps: initial_steps(&run.plan),
    });
    start(
        journal,
        run.plan,
        run.approved,
        run.cluster,
        run.options,
        events,
        false,
    )
}

/// Resumes a Kubernetes upgrade a killed console left in its journal: from the first unfinished
/// step, after the guards pass again. The caller passes the options: `RunOptions::from_journal`
/// gives the journal's timings; the state dir, kubeconfig and client timeouts are the caller's.
pub fn resume_kubernetes_upgrade_with(
    journal: RolloutJournal,
    approved: ApprovedAction,
    cluster: Cluster,
    options: RunOptions,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutHandle {
    match journal_plan::<KubernetesUpgradePlan>(&journal, RolloutKind::KubernetesUpgrade) {
        Ok(plan) => start(journal, plan, approved, cluster, options, events, true),
        Err(reason) => refuse(journal, reason, events),
    }
}

/// The steps a new run starts with: pending, and skipped where a component is already on target.
pub fn initial_steps(plan: &KubernetesUpgradePlan) -> Vec<StepProgress> {
    plan.steps
        .iter()
        .map(|s| {
            let mut p = StepProgress::pending(&s.node, &s.label(&plan.target));
            if s.state == KubeStepState::AlreadyOnTarget {
                p.phase = StepPhase::Skipped;
                p.detail = format!("already on {}", plan.target);
            }
            p
        })
        .collect()
}

fn check_approval(approved: &ApprovedAction, plan: &KubernetesUpgradePlan) -> Result<(), String> {
    let target = target_text(plan);
    match approved.action() {
        MutatingAction::UpgradeKubernetes {
            cluster,
            target: approved_target,
        } if *cluster == plan.cluster && approved_target.trim_start_matches('v') == target => {
            Ok(())
        }
        other => Err(format!(
            "the confirmed action ({} in {}) is not this upgrade (Kubernetes {target} in {})",
            other.describe(),
            other.cluster(),
            plan.cluster
        )),
    }
}

fn start(
    journal: RolloutJournal,
    plan: KubernetesUpgradePlan,
    approved: ApprovedAction,
    cluster: Cluster,
    options: RunOptions,
    events: UnboundedSender<RolloutEvent>,
    resumed: bool,
) -> RolloutHandle {
    let launch = Launch {
        approval: check_approval(&approved, &plan),
        journal,
        cluster,
        options,
        needs_kube: true,
        resumed,
    };
    crate::upgrade::launch::launch(launch, events, move |observer, journal, options| {
        let batches = plan.batches();
        let executor = KubernetesExecutor {
            acks: journal.acks.clone(),
            plan,
            observer,
            poll_interval: options.poll_interval,
        };
        (Arc::new(executor), batches)
    })
}

/// Objects stored in API versions the plan's target removes, as the removed-API guard reads them.
pub async fn count_removed_apis(
    observer: &ClusterObserver,
    plan: &KubernetesUpgradePlan,
) -> Result<Vec<RemovedApiCount>, String> {
    let Some(kube) = &observer.kube else {
        return Err("no kube context".into());
    };
    kube.removed_api_objects(&plan.from.to_string(), &plan.target.to_string())
        .await
        .map_err(|e| e.to_string())
}

struct KubernetesExecutor {
    plan: KubernetesUpgradePlan,
    acks: Vec<String>,
    observer: ClusterObserver,
    poll_interval: Duration,
}

impl KubernetesExecutor {
    fn step(&self, index: usize) -> Result<ComponentStep<'_>, String> {
        let step = self.plan.steps.get(index).ok_or_else(|| {
            format!(
                "the plan for {} has no step {}",
                self.plan.cluster,
                index + 1
            )
        })?;
        Ok(ComponentStep {
            observer: &self.observer,
            plan: &self.plan,
            step,
            poll_interval: self.poll_interval,
        })
    }
}

impl StepExecutor for KubernetesExecutor {
    fn preflight(&self) -> BoxFuture<'_, Result<(), String>> {
        async move {
            let (status, removed) = tokio::join!(
                self.observer.status(),
                count_removed_apis(&self.observer, &self.plan)
            );
            let roles = self.observer.talos.roles();
            let input = KubeGuardInput {
                roles,
                // The rollout Lease is already ours: no other rollout can be running.
                other_rollout: None,
                removed_apis: &removed,
                acks: &self.acks,
            };
            let guards = kubernetes_plan_guards(&self.plan, &status, input);
            guards_pass(&guards, &self.acks)?;
            if self.plan.pre_pull {
                for line in pre_pull(&self.observer, &self.plan.images_to_pull()).await? {
                    tracing::info!(cluster = %self.plan.cluster, "pre-pull: {line}");
                }
            }
            Ok(())
        }
        .boxed()
    }

    fn check_before(&self, _index: usize) -> BoxFuture<'_, Result<(), String>> {
        async move {
            let status = self.observer.status().await;
            guards_pass(&kubernetes_step_guards(&status), &self.acks)
        }
        .boxed()
    }

    fn settle(&self, index: usize) -> BoxFuture<'_, Result<bool, String>> {
        async move { self.step(index)?.settle().await }.boxed()
    }

    fn run_step(&self, index: usize, report: StepReport) -> BoxFuture<'_, Result<(), String>> {
        async move { self.step(index)?.run(&report).await }.boxed()
    }
}
