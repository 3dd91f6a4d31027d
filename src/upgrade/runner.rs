//! What every upgrade rollout is made of, parameterised by its kind (the Talos OS upgrade, the
//! Kubernetes upgrade, the CAPI-way upgrades): the run options and the timings kept in the
//! journal, the kind's plan, guards and steps, and the check that a journal's steps are the
//! ones its plan makes today. `operation::upgrade` runs them through the one pipeline.
use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use futures::future::BoxFuture;
use kube::config::Kubeconfig;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::observe::ClusterObserver;
use crate::approval::MutatingAction;
use crate::kube::DrainOptions;
use crate::rollout::journal::RolloutJournal;
use crate::rollout::{RolloutKind, StepProgress, StepReport};
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
    /// The holder of a run still alive that this run takes over, typed by the operator
    /// exactly as a refusal named it (`--take-over`); never kept in the journal.
    pub take_over: Option<String>,
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
            take_over: None,
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

/// What differs between the kinds of upgrade rollout; the operation that runs them, the journal
/// and the Lease are the same for all. Step methods get the connected [`KindRollout`].
pub trait UpgradeKind: Sized + Send + Sync + 'static {
    /// The plan as the journal keeps it.
    type Plan: Clone + Serialize + DeserializeOwned + Send + Sync + 'static;
    /// One step on the live cluster: a node's upgrade, a component's.
    type LiveStep<'a>: KindStep;
    /// How the journal and the Lease name this kind.
    const ROLLOUT: RolloutKind;
    /// "Talos" or "Kubernetes", as a mismatched approval names the upgrade.
    const PRODUCT: &'static str;
    /// The rollout talks to the Kubernetes API: a cluster without a kube context is refused.
    const NEEDS_KUBE: bool;
    /// Which in-place upgrade this is: the refusal of a cluster Cluster API owns, and the
    /// product the CAPI way changes.
    const IN_PLACE: crate::capi::owned::InPlaceUpgrade;
    /// The rollout and its unit in the operator's words ("upgrade", "node"), as the notices
    /// of a command's refused or resumed run name them.
    const WHAT: &'static str;
    const UNIT: &'static str;
    /// An unfinished journal of another kind is refused by its kind before any plan (else
    /// only one to another target is, and the runner checks the kind).
    const REFUSES_OTHER_KIND: bool;

    /// Step `index` of `total` as one progress line.
    fn step_line(index: usize, total: usize, step: &StepProgress) -> String {
        step.line(index, total)
    }
    fn cluster(plan: &Self::Plan) -> &str;
    /// A target version as the journal, the Lease and the dispatcher name it.
    fn version_text(target: &crate::versions::Version) -> String;
    /// The plan's target as [`UpgradeKind::version_text`] names it.
    fn target_text(plan: &Self::Plan) -> String;
    /// The approval a run to `target` (named as [`UpgradeKind::version_text`] does) asks the
    /// dispatcher for: the console's Start and the command's `--yes` alike.
    fn action(cluster: String, target: String) -> MutatingAction;
    /// The steps a new run starts with: pending, and skipped where the plan skips.
    fn initial_steps(plan: &Self::Plan) -> Vec<StepProgress>;
    /// Step indices that run together, in order.
    fn batches(plan: &Self::Plan) -> Vec<Vec<usize>>;
    /// Whether the dispatcher's approved `action` is this plan's upgrade.
    fn approves(action: &MutatingAction, plan: &Self::Plan) -> bool;
    /// Every guard of the whole rollout (and any preparation), once before the first step.
    fn preflight(run: &KindRollout<Self>) -> BoxFuture<'_, Result<(), String>>;
    /// The guards re-checked over live status right before step `index`.
    fn check_before(run: &KindRollout<Self>, index: usize) -> BoxFuture<'_, Result<(), String>>;
    /// Step `index` of the connected rollout, ready to run or settle.
    fn step(run: &KindRollout<Self>, index: usize) -> Result<Self::LiveStep<'_>, String>;
}

/// One step of a kind's rollout, made for its index by [`UpgradeKind::step`].
pub trait KindStep: Send + Sync {
    /// A step a killed run left in progress: `Ok(true)` when it is now done.
    fn settle(&self) -> impl Future<Output = Result<bool, String>> + Send;
    /// Runs the step until done; `Err` says why not.
    fn run(&self, report: &StepReport) -> impl Future<Output = Result<(), String>> + Send;
}

/// A connected rollout of kind `K`: what its steps work with.
pub struct KindRollout<K: UpgradeKind> {
    pub plan: K::Plan,
    pub acks: Vec<String>,
    pub observer: ClusterObserver,
    pub options: RunOptions,
}

impl<K: UpgradeKind> KindRollout<K> {
    /// The drain each node gets before its reboot, when the run drains.
    pub fn drain(&self) -> Option<DrainOptions> {
        self.options.drain.then_some(DrainOptions {
            timeout: self.options.drain_timeout,
            retry_every: self.options.poll_interval,
        })
    }
}

/// Step `index` of a plan's `steps`, or why the plan has none.
pub(crate) fn planned_step<'a, T>(
    steps: &'a [T],
    cluster: &str,
    index: usize,
) -> Result<&'a T, String> {
    steps
        .get(index)
        .ok_or_else(|| format!("the plan for {cluster} has no step {}", index + 1))
}

/// A journal resumes only when its steps are the ones its plan makes today, in order: a journal
/// written by a build that planned other steps (e.g. before the Kubernetes upgrade's pre-pull
/// became steps) would have its steps' progress read against the wrong steps.
pub(crate) fn steps_match<K: UpgradeKind>(
    journal: &RolloutJournal,
    plan: &K::Plan,
) -> Result<(), String> {
    let planned = K::initial_steps(plan);
    let same = planned.len() == journal.steps.len()
        && planned
            .iter()
            .zip(&journal.steps)
            .all(|(p, j)| p.node == j.node && p.label == j.label);
    if same {
        return Ok(());
    }
    Err(format!(
        "the journal lists {} steps and this build plans {} for the same plan (it was written \
         by another taloscope version): finish it with that version, or abort it to plan anew",
        journal.steps.len(),
        planned.len()
    ))
}
