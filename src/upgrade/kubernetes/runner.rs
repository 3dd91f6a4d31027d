//! The Kubernetes upgrade as a rollout on the shared engine: the step executor (plan guards and
//! the removed-API check before the first step, step guards before each, one component on one
//! node per step) and the entry points that start a new run or resume one from its journal.
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::guards::{KubeGuardInput, kubernetes_plan_guards, kubernetes_step_guards};
use super::plan::{KubeStepState, KubernetesUpgradePlan};
use super::step::{ComponentStep, pre_pull};
use crate::app::dispatcher::{ApprovedAction, MutatingAction, local_identity};
use crate::discovery::Cluster;
use crate::kube::removed_apis::RemovedApiCount;
use crate::rollout::engine::{EngineSetup, RolloutHandle, StepExecutor, StepReport, run_rollout};
use crate::rollout::journal::{JOURNAL_FORMAT, RolloutJournal, unix_now};
use crate::rollout::{RolloutEvent, RolloutKind, RolloutOutcome, StepPhase, StepProgress};
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::runner::{RunOptions, connect, first_blocking, refuse, take_lease};

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
    let journal = RolloutJournal {
        format: JOURNAL_FORMAT,
        cluster: run.plan.cluster.clone(),
        kind: RolloutKind::KubernetesUpgrade,
        target: target_text(&run.plan),
        holder: local_identity(),
        acks: run.acks.clone(),
        plan: serde_json::to_value(&run.plan).unwrap_or(serde_json::Value::Null),
        options: serde_json::to_value(run.options.for_journal()).unwrap_or(serde_json::Value::Null),
        steps: initial_steps(&run.plan),
        paused: false,
        outcome: None,
        updated_unix: unix_now(),
    };
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
/// step, after the guards pass again. Timings come from the journal.
pub fn resume_kubernetes_upgrade(
    journal: RolloutJournal,
    approved: ApprovedAction,
    cluster: Cluster,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutHandle {
    let options = RunOptions::from_journal(&journal.options);
    resume_kubernetes_upgrade_with(journal, approved, cluster, options, events)
}

/// [`resume_kubernetes_upgrade`] with explicit options (state dir, kubeconfig, client timeouts).
pub fn resume_kubernetes_upgrade_with(
    journal: RolloutJournal,
    approved: ApprovedAction,
    cluster: Cluster,
    options: RunOptions,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutHandle {
    if journal.kind != RolloutKind::KubernetesUpgrade {
        let reason = format!(
            "the journal of {} is a {}, not a Kubernetes upgrade",
            journal.cluster,
            journal.kind.describe()
        );
        return refuse(journal, reason, events);
    }
    match serde_json::from_value::<KubernetesUpgradePlan>(journal.plan.clone()) {
        Ok(plan) => start(journal, plan, approved, cluster, options, events, true),
        Err(e) => {
            let reason = format!(
                "the journal of {} holds no readable Kubernetes upgrade plan: {e}",
                journal.cluster
            );
            refuse(journal, reason, events)
        }
    }
}

fn initial_steps(plan: &KubernetesUpgradePlan) -> Vec<StepProgress> {
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
    if let Err(reason) = check_approval(&approved, &plan) {
        return refuse(journal, reason, events);
    }
    let (control, control_rx) = unbounded_channel();
    let task = tokio::spawn(async move {
        let halt = |journal: &RolloutJournal, reason: String| {
            let _ = events.send(RolloutEvent::Started(journal.summary()));
            let outcome = RolloutOutcome::Halted(reason);
            let _ = events.send(RolloutEvent::Finished {
                cluster: journal.cluster.clone(),
                outcome: outcome.clone(),
            });
            outcome
        };
        let observer = match connect(&cluster, &options).await {
            Ok(observer) if observer.kube.is_some() => observer,
            Ok(_) => {
                let reason = format!(
                    "cluster {} has no kube context; the Kubernetes upgrade needs the Kubernetes API",
                    cluster.name
                );
                return halt(&journal, reason);
            }
            Err(reason) => return halt(&journal, reason),
        };
        let lock = match take_lease(&observer, &journal, &options).await {
            Ok(lock) => lock,
            Err(reason) => return halt(&journal, reason),
        };
        let journal_path = RolloutJournal::path_for(&options.journal_dir(), &journal.cluster);
        let batches = plan.batches();
        let executor = Arc::new(KubernetesExecutor {
            acks: journal.acks.clone(),
            plan,
            observer,
            poll_interval: options.poll_interval,
        });
        let setup = EngineSetup {
            batches,
            journal,
            journal_path,
            step_timeout: options.node_timeout,
            renew_every: options.lease_duration / 3,
            lock,
            resumed,
        };
        run_rollout(setup, executor, control_rx, events).await
    });
    RolloutHandle { control, task }
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
            if let Some(reason) = first_blocking(&guards, &self.acks) {
                return Err(reason);
            }
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
            let guards = kubernetes_step_guards(&status);
            match first_blocking(&guards, &self.acks) {
                Some(reason) => Err(reason),
                None => Ok(()),
            }
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
