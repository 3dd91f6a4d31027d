//! The Talos OS rolling upgrade as a rollout: the step executor the rollout engine drives (plan
//! guards before the first node, step guards before each, one node's upgrade per step), and the
//! entry points that start a new run or resume one from its journal.
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use kube::config::Kubeconfig;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::UnboundedSender;

use super::guards::{plan_guards, step_guards};
use super::launch::{Launch, NewJournal, guards_pass, journal_plan, new_journal, refuse};
use super::node_step::NodeUpgrade;
use super::observe::ClusterObserver;
use super::plan::{StepState, UpgradePlan};
use crate::approval::{ApprovedAction, MutatingAction};
use crate::discovery::Cluster;
use crate::kube::DrainOptions;
pub use crate::rollout::engine::RolloutHandle;
use crate::rollout::engine::{StepExecutor, StepReport};
use crate::rollout::journal::RolloutJournal;
use crate::rollout::{RolloutEvent, RolloutKind, StepPhase, StepProgress};
use crate::talos::ClientOptions;

/// How a run behaves.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// How long one node may take before the rollout halts with it failed.
    pub node_timeout: Duration,
    /// How often the cluster status is read while a node upgrades.
    pub poll_interval: Duration,
    /// The rollout Lease's duration; it is renewed well within it.
    pub lease_duration: Duration,
    /// Where the journal goes (`<state dir>/rollouts/`); a rollout without
    /// one halts before its first node, since it could not be resumed.
    pub state_dir: Option<PathBuf>,
    /// The merged kubeconfig; default: read from the file of the cluster's kube context.
    pub kubeconfig: Option<Kubeconfig>,
    pub client: ClientOptions,
    /// Cordon and drain each Kubernetes node before its reboot on the LifecycleService path,
    /// uncordon it once back (talosctl's `--drain`, default true).
    pub drain: bool,
    /// The most one node's evictions may take (talosctl's `--drain-timeout`, 5 min).
    pub drain_timeout: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            node_timeout: Duration::from_secs(15 * 60),
            poll_interval: Duration::from_secs(2),
            lease_duration: Duration::from_secs(60),
            state_dir: None,
            kubeconfig: None,
            client: ClientOptions::default(),
            drain: true,
            drain_timeout: Duration::from_secs(5 * 60),
        }
    }
}

/// The timings kept in the journal, so a resumed run behaves like the first.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct JournalOptions {
    node_timeout_secs: u64,
    poll_interval_ms: u64,
    lease_duration_secs: u64,
    /// Absent in journals written before drains existed: drain, as talosctl does by default.
    #[serde(default = "drain_by_default")]
    drain: bool,
    #[serde(default)]
    drain_timeout_secs: Option<u64>,
}

fn drain_by_default() -> bool {
    true
}

impl RunOptions {
    pub(crate) fn for_journal(&self) -> JournalOptions {
        JournalOptions {
            node_timeout_secs: self.node_timeout.as_secs(),
            poll_interval_ms: self.poll_interval.as_millis() as u64,
            lease_duration_secs: self.lease_duration.as_secs(),
            drain: self.drain,
            drain_timeout_secs: Some(self.drain_timeout.as_secs()),
        }
    }

    pub(crate) fn from_journal(value: &serde_json::Value) -> RunOptions {
        let defaults = RunOptions::default();
        match serde_json::from_value::<JournalOptions>(value.clone()) {
            Ok(j) => RunOptions {
                node_timeout: Duration::from_secs(j.node_timeout_secs.max(1)),
                poll_interval: Duration::from_millis(j.poll_interval_ms.max(10)),
                lease_duration: Duration::from_secs(j.lease_duration_secs.max(1)),
                drain: j.drain,
                drain_timeout: j
                    .drain_timeout_secs
                    .map_or(defaults.drain_timeout, |s| Duration::from_secs(s.max(1))),
                ..defaults
            },
            Err(_) => defaults,
        }
    }

    pub(crate) fn journal_dir(&self) -> Result<PathBuf, String> {
        self.state_dir
            .clone()
            .ok_or_else(|| "no state dir to keep the rollout journal in".to_string())
    }
}

/// A confirmed upgrade, ready to run.
pub struct TalosUpgradeRun {
    pub approved: ApprovedAction,
    pub plan: UpgradePlan,
    /// Typed acknowledgements (e.g. [`super::SINGLE_CONTROL_PLANE_ACK`]).
    pub acks: Vec<String>,
    pub cluster: Cluster,
    pub options: RunOptions,
}

/// Starts a new rolling upgrade on the current tokio runtime. Refusals (a plan guard fails,
/// another rollout holds the cluster, the approval does not match) arrive as
/// `Finished { Halted }` before any node is touched.
pub fn spawn_talos_upgrade(
    run: TalosUpgradeRun,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutHandle {
    let journal = new_journal(NewJournal {
        kind: RolloutKind::TalosUpgrade,
        cluster: &run.plan.cluster,
        target: run.plan.target.to_string(),
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

/// Resumes a rollout a killed console left in its journal: from the first unfinished step,
/// after the guards pass again. The caller passes the options: `RunOptions::from_journal`
/// gives the journal's timings; the state dir, kubeconfig and client timeouts are the caller's.
pub fn resume_talos_upgrade_with(
    journal: RolloutJournal,
    approved: ApprovedAction,
    cluster: Cluster,
    options: RunOptions,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutHandle {
    match journal_plan::<UpgradePlan>(&journal, RolloutKind::TalosUpgrade) {
        Ok(plan) => start(journal, plan, approved, cluster, options, events, true),
        Err(reason) => refuse(journal, reason, events),
    }
}

fn initial_steps(plan: &UpgradePlan) -> Vec<StepProgress> {
    plan.steps
        .iter()
        .map(|s| {
            let (label, phase) = match s.state {
                StepState::Upgrade => (format!("upgrade to {}", plan.target), StepPhase::Pending),
                StepState::AlreadyOnTarget => {
                    (format!("already on {}", plan.target), StepPhase::Skipped)
                }
                StepState::LeftOut => ("left out".to_string(), StepPhase::Skipped),
            };
            let mut p = StepProgress::pending(&s.node, &label);
            p.phase = phase;
            p
        })
        .collect()
}

fn check_approval(approved: &ApprovedAction, plan: &UpgradePlan) -> Result<(), String> {
    let target = plan.target.to_string();
    match approved.action() {
        MutatingAction::UpgradeTalos {
            cluster,
            target: approved_target,
        } if *cluster == plan.cluster && *approved_target == target => Ok(()),
        other => Err(format!(
            "the confirmed action ({} in {}) is not this upgrade (Talos {target} in {})",
            other.describe(),
            other.cluster(),
            plan.cluster
        )),
    }
}

fn start(
    journal: RolloutJournal,
    plan: UpgradePlan,
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
        needs_kube: false,
        resumed,
    };
    super::launch::launch(launch, events, move |observer, journal, options| {
        let executor = TalosExecutor {
            acks: journal.acks.clone(),
            batches: plan.batches(),
            plan,
            observer,
            poll_interval: options.poll_interval,
            drain: options.drain.then_some(DrainOptions {
                timeout: options.drain_timeout,
                retry_every: options.poll_interval,
            }),
        };
        let batches = executor.batches.clone();
        (Arc::new(executor), batches)
    })
}

struct TalosExecutor {
    plan: UpgradePlan,
    acks: Vec<String>,
    batches: Vec<Vec<usize>>,
    observer: ClusterObserver,
    poll_interval: Duration,
    drain: Option<DrainOptions>,
}

impl TalosExecutor {
    fn node(&self, index: usize) -> Result<NodeUpgrade<'_>, String> {
        let step = self.plan.steps.get(index).ok_or_else(|| {
            format!(
                "the plan for {} has no step {}",
                self.plan.cluster,
                index + 1
            )
        })?;
        Ok(NodeUpgrade {
            observer: &self.observer,
            plan: &self.plan,
            step,
            poll_interval: self.poll_interval,
            drain: self.drain,
        })
    }
}

impl StepExecutor for TalosExecutor {
    fn preflight(&self) -> BoxFuture<'_, Result<(), String>> {
        async move {
            let status = self.observer.status().await;
            let roles = self.observer.talos.roles();
            guards_pass(&plan_guards(&self.plan, &status, roles, None), &self.acks)
        }
        .boxed()
    }

    fn check_before(&self, index: usize) -> BoxFuture<'_, Result<(), String>> {
        async move {
            let status = self.observer.status().await;
            guards_pass(&step_guards(&self.plan, index, &status), &self.acks)
        }
        .boxed()
    }

    fn settle(&self, index: usize) -> BoxFuture<'_, Result<bool, String>> {
        async move { self.node(index)?.settle().await }.boxed()
    }

    fn run_step(&self, index: usize, report: StepReport) -> BoxFuture<'_, Result<(), String>> {
        async move { self.node(index)?.run(&report).await }.boxed()
    }
}
