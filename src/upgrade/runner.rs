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
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::guards::{Guard, plan_guards, step_guards};
use super::node_step::NodeUpgrade;
use super::observe::ClusterObserver;
use super::plan::{StepState, UpgradePlan};
use crate::app::dispatcher::{ApprovedAction, MutatingAction, local_identity};
use crate::discovery::Cluster;
use crate::fleet::CollectOptions;
use crate::kube::{DrainOptions, KubeClient, LeaseError, LeaseProgress, RolloutLease};
use crate::paths::Paths;
pub use crate::rollout::engine::RolloutHandle;
use crate::rollout::engine::{
    EngineSetup, LockProgress, RenewFailure, RolloutLock, StepExecutor, StepReport, run_rollout,
};
use crate::rollout::journal::{JOURNAL_FORMAT, RolloutJournal, unix_now};
use crate::rollout::{
    RolloutControl, RolloutEvent, RolloutKind, RolloutOutcome, StepPhase, StepProgress,
};
use crate::talos::{ClientOptions, TalosClient};

/// How a run behaves.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// How long one node may take before the rollout halts with it failed.
    pub node_timeout: Duration,
    /// How often the cluster status is read while a node upgrades.
    pub poll_interval: Duration,
    /// The rollout Lease's duration; it is renewed well within it.
    pub lease_duration: Duration,
    /// Where the journal goes (`<state dir>/rollouts/`); default the XDG state dir.
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

    pub(crate) fn journal_dir(&self) -> PathBuf {
        self.state_dir
            .clone()
            .unwrap_or_else(|| Paths::resolve().state_dir)
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
    let journal = RolloutJournal {
        format: JOURNAL_FORMAT,
        cluster: run.plan.cluster.clone(),
        kind: RolloutKind::TalosUpgrade,
        target: run.plan.target.to_string(),
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

/// Resumes a rollout a killed console left in its journal: from the first unfinished step,
/// after the guards pass again. Timings come from the journal.
pub fn resume_talos_upgrade(
    journal: RolloutJournal,
    approved: ApprovedAction,
    cluster: Cluster,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutHandle {
    let options = RunOptions::from_journal(&journal.options);
    resume_talos_upgrade_with(journal, approved, cluster, options, events)
}

/// [`resume_talos_upgrade`] with explicit options (state dir, kubeconfig, client timeouts).
pub fn resume_talos_upgrade_with(
    journal: RolloutJournal,
    approved: ApprovedAction,
    cluster: Cluster,
    options: RunOptions,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutHandle {
    match serde_json::from_value::<UpgradePlan>(journal.plan.clone()) {
        Ok(plan) => start(journal, plan, approved, cluster, options, events, true),
        Err(e) => {
            let reason = format!(
                "the journal of {} holds no readable upgrade plan: {e}",
                journal.cluster
            );
            refuse(journal, reason, events)
        }
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

/// A run that ends before it starts: Started, then Finished with the reason.
pub(crate) fn refuse(
    journal: RolloutJournal,
    reason: String,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutHandle {
    let (control, _rx) = unbounded_channel::<RolloutControl>();
    let task = tokio::spawn(async move {
        let _ = events.send(RolloutEvent::Started(journal.summary()));
        let outcome = RolloutOutcome::Halted(reason);
        let _ = events.send(RolloutEvent::Finished {
            cluster: journal.cluster.clone(),
            outcome: outcome.clone(),
        });
        outcome
    });
    RolloutHandle { control, task }
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
    if let Err(reason) = check_approval(&approved, &plan) {
        return refuse(journal, reason, events);
    }
    let (control, control_rx) = unbounded_channel();
    let task = tokio::spawn(async move {
        let observer = match connect(&cluster, &options).await {
            Ok(observer) => observer,
            Err(reason) => {
                let _ = events.send(RolloutEvent::Started(journal.summary()));
                let outcome = RolloutOutcome::Halted(reason);
                let _ = events.send(RolloutEvent::Finished {
                    cluster: journal.cluster.clone(),
                    outcome: outcome.clone(),
                });
                return outcome;
            }
        };
        let lock = match take_lease(&observer, &journal, &options).await {
            Ok(lock) => lock,
            Err(reason) => {
                let _ = events.send(RolloutEvent::Started(journal.summary()));
                let outcome = RolloutOutcome::Halted(reason);
                let _ = events.send(RolloutEvent::Finished {
                    cluster: journal.cluster.clone(),
                    outcome: outcome.clone(),
                });
                return outcome;
            }
        };
        let journal_path = RolloutJournal::path_for(&options.journal_dir(), &journal.cluster);
        let executor = Arc::new(TalosExecutor {
            acks: journal.acks.clone(),
            batches: plan.batches(),
            plan,
            observer,
            poll_interval: options.poll_interval,
            drain: options.drain.then_some(DrainOptions {
                timeout: options.drain_timeout,
                retry_every: options.poll_interval,
            }),
        });
        let setup = EngineSetup {
            batches: executor.batches.clone(),
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

/// Takes the cluster's rollout Lease for this console (its holder from the journal). Without a
/// paired kube context there is no Lease to take; the rollout still runs, alone on this host.
pub(crate) async fn take_lease(
    observer: &ClusterObserver,
    journal: &RolloutJournal,
    options: &RunOptions,
) -> Result<Option<Box<dyn RolloutLock>>, String> {
    let Some(kube) = &observer.kube else {
        return Ok(None);
    };
    let lease = kube
        .acquire_rollout_lease(
            &journal.cluster,
            &journal.holder,
            journal.kind,
            &journal.target,
            journal.steps.len(),
            options.lease_duration,
        )
        .await
        .map_err(|e| match e {
            LeaseError::HeldBy { .. } => format!("refused: {e}"),
            other => format!("cannot take the rollout lease: {other}"),
        })?;
    Ok(Some(Box::new(LeaseLock(lease))))
}

/// The Kubernetes Lease as the engine's lock.
struct LeaseLock(RolloutLease);

impl RolloutLock for LeaseLock {
    fn renew<'a>(
        &'a mut self,
        progress: &'a LockProgress,
    ) -> BoxFuture<'a, Result<(), RenewFailure>> {
        async move {
            let progress = LeaseProgress {
                node_index: progress.node_index,
                current_node: Some(progress.current_node.clone()),
                phase: progress.phase.clone(),
            };
            self.0.renew(&progress).await.map_err(|e| match e {
                LeaseError::Lost { .. } | LeaseError::HeldBy { .. } => {
                    RenewFailure::Lost(e.to_string())
                }
                LeaseError::Kube(_) => RenewFailure::Failed(e.to_string()),
            })
        }
        .boxed()
    }

    fn release(self: Box<Self>) -> BoxFuture<'static, Result<(), String>> {
        async move { self.0.release().await.map_err(|e| e.to_string()) }.boxed()
    }
}

/// The Talos client of the cluster's talosconfig context, and its kube client when paired.
pub(crate) async fn connect(
    cluster: &Cluster,
    options: &RunOptions,
) -> Result<ClusterObserver, String> {
    let Some(ctx) = &cluster.talos else {
        return Err(format!(
            "cluster {} has no talosconfig context; the upgrade needs the Talos API",
            cluster.name
        ));
    };
    let talos = TalosClient::new(ctx, options.client).map_err(|e| e.to_string())?;
    let kube = match &cluster.kube {
        None => None,
        Some(kube_ctx) => {
            let kubeconfig = match &options.kubeconfig {
                Some(k) => k.clone(),
                None => Kubeconfig::read_from(&kube_ctx.file).map_err(|e| {
                    format!(
                        "kube context {}: cannot read {}: {e}",
                        kube_ctx.name,
                        kube_ctx.file.display()
                    )
                })?,
            };
            let client = KubeClient::new(&kubeconfig, &kube_ctx.name, Default::default())
                .await
                .map_err(|e| e.to_string())?;
            Some(client)
        }
    };
    Ok(ClusterObserver {
        cluster: cluster.name.clone(),
        talos,
        kube,
        nodes: ctx.nodes.clone(),
        options: CollectOptions {
            client: options.client,
            ..CollectOptions::default()
        },
    })
}

/// The first guard that blocks, as one line naming it.
pub(crate) fn first_blocking(guards: &[Guard], acks: &[String]) -> Option<String> {
    guards.iter().find(|g| g.blocks(acks)).map(|g| {
        let mut line = format!("{}: {}", g.id.title(), g.reason);
        if let Some(ack) = &g.needs_ack {
            line.push_str(&format!(" (acknowledge with \"{ack}\")"));
        }
        line
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
            let guards = plan_guards(&self.plan, &status, roles, None);
            match first_blocking(&guards, &self.acks) {
                Some(reason) => Err(reason),
                None => Ok(()),
            }
        }
        .boxed()
    }

    fn check_before(&self, index: usize) -> BoxFuture<'_, Result<(), String>> {
        async move {
            let status = self.observer.status().await;
            let guards = step_guards(&self.plan, index, &status);
            match first_blocking(&guards, &self.acks) {
                Some(reason) => Err(reason),
                None => Ok(()),
            }
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
