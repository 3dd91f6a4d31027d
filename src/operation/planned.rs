//! What an approved operation runs, by kind ([`ActionRun`]: the plan the operator confirmed on
//! its plan screen, or the journal it resumes), and the progress it starts with: its words and
//! headline, its steps and what they are called, how long it or each step may take, how a
//! cancel stops it. The one progress screen shows any operation from this, knowing no kind.
use std::path::Path;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;

use super::progress::{OperationProgress, StepRow};
use super::upgrade::{UpgradeRun, spawn_upgrade};
use super::{CancelRule, OperationKind, capi_upgrade, runner_events};
use crate::approval::{ApprovedAction, Dispatcher, EtcdAction, MutatingAction};
use crate::cluster_lifecycle::{CreatePlan, DeletePlan};
use crate::discovery::Cluster;
use crate::etcd_maintenance::EtcdPlan;
use crate::node_actions::{NodeActionOptions, NodeActionPlan};
use crate::operation::config_patch::ConfigPatchPlan;
use crate::operation::forget::ForgetPlan;
use crate::provision::{ProvisionPlan, RunnerOptions};
use crate::rollout::{RolloutEvent, RolloutHandle};
use crate::upgrade::capi::CapiUpgradePlan;
use crate::upgrade::kubernetes::{Kubernetes, KubernetesUpgradePlan};
use crate::upgrade::{RunOptions, TalosOs, UpgradeKind, UpgradePlan};

/// What the one runner runs for an approved action.
#[derive(Debug, Clone)]
pub enum ActionRun {
    Node(NodeActionPlan),
    Etcd(EtcdPlan),
    /// A CAPI doctor's fix, then the cluster followed until its finding clears.
    CapiFix(Box<CapiFixRun>),
    Delete(DeletePlan),
    /// A CAPI scale of the plan confirmed (the runner checks its guards again with the
    /// acknowledgements typed).
    CapiScale(Box<crate::capi_scale::ScalePlan>),
    /// A new cluster (its journal resumes a killed run of it).
    Create(Box<CreatePlan>),
    /// A node that is no longer a member removed from the talosconfig context.
    Forget(Box<ForgetPlan>),
    /// The CAPI-way upgrade of a cluster Cluster API owns.
    CapiUpgrade(Box<CapiUpgradePlan>),
    /// New VMs of a cluster, each followed until its node joined.
    Provision(Box<ProvisionPlan>),
    /// A VM a provision left failed, terminated (the approval names it).
    TerminateVm,
    /// A Talos or Kubernetes upgrade, in place, of the plan as the operator saw it.
    Upgrade(Box<PlannedRollout>),
    /// The in-place upgrade a run that did not end left in its journal, resumed.
    ResumeUpgrade,
    /// A machine-configuration patch of the plan read from each target node's dry run.
    ConfigPatch(Box<ConfigPatchPlan>),
}

/// The plan of a rollout, by kind.
#[derive(Debug, Clone)]
pub enum PlannedRollout {
    Talos(UpgradePlan),
    Kubernetes(KubernetesUpgradePlan),
}

impl PlannedRollout {
    /// Its steps as its progress starts with them, before the runner reports: the runner's own
    /// first steps (`UpgradeKind::initial_steps`).
    pub fn steps(&self) -> Vec<crate::rollout::StepProgress> {
        match self {
            PlannedRollout::Talos(plan) => TalosOs::initial_steps(plan),
            PlannedRollout::Kubernetes(plan) => Kubernetes::initial_steps(plan),
        }
    }

    /// A new upgrade of this plan, approved, with its acknowledgements, on `cluster`, its
    /// journal under `state_dir`, started on the current runtime: the console's start
    /// (`taloscope upgrade` starts its kind's with its flags' options; a journal's is resumed
    /// by `upgrade::resume_from_journal`).
    pub fn spawn(
        self,
        (approved, dispatcher): (ApprovedAction, Dispatcher),
        acks: Vec<String>,
        cluster: Cluster,
        state_dir: &Path,
        events: UnboundedSender<RolloutEvent>,
    ) -> RolloutHandle {
        let options = RunOptions {
            state_dir: Some(state_dir.to_path_buf()),
            ..RunOptions::default()
        };
        match self {
            PlannedRollout::Talos(plan) => spawn_upgrade(
                UpgradeRun::<TalosOs> {
                    approved,
                    dispatcher,
                    plan,
                    acks,
                    cluster,
                    options,
                },
                events,
            ),
            PlannedRollout::Kubernetes(plan) => spawn_upgrade(
                UpgradeRun::<Kubernetes> {
                    approved,
                    dispatcher,
                    plan,
                    acks,
                    cluster,
                    options,
                },
                events,
            ),
        }
    }
}

/// How long a snapshot may take to stream (`etcd snapshot --timeout`'s default).
pub const SNAPSHOT_BOUND: Duration = Duration::from_secs(600);

/// What the console runs for a CAPI doctor's fix.
#[derive(Debug, Clone)]
pub struct CapiFixRun {
    pub plan: crate::capi_doctor::FixPlan,
    pub finding: crate::capi_doctor::Finding,
    /// The Cluster object, and its management cluster's kube context.
    pub owner: crate::capi::CapiOwner,
}

/// The headline of a delete approved as `action`: the cluster and what it does
/// ("delete cluster lab: terminate 5 VM(s), remove its contexts").
pub fn delete_headline(action: &MutatingAction) -> String {
    let described = action.describe();
    let effect = described
        .strip_prefix("delete cluster: ")
        .map_or(described.as_str(), |e| e);
    format!("delete cluster {}: {effect}", action.cluster())
}

impl ActionRun {
    /// The progress of this run, approved as `approved`, starting `now`: its words (a delete's
    /// its cluster and what it does, a provision's the cluster `shown` as the operator knows
    /// it and its VMs), its subjects' kind, timeout, cancel rule, a scale's tally, a CAPI-way
    /// upgrade's phases, an upgrade's nodes, a create's phases.
    pub fn progress(
        &self,
        approved: &ApprovedAction,
        shown: &str,
        now: Option<u64>,
    ) -> OperationProgress {
        let action = approved.action();
        let cluster = action.cluster();
        let what = match self {
            ActionRun::Delete(_) => delete_headline(action),
            ActionRun::Provision(plan) => format!(
                "Provision of {shown}, {} {} node(s) via {}",
                plan.count, plan.role, plan.provider
            ),
            _ => action.describe(),
        };
        // A delete's and a create's words name its cluster already.
        let headline = match self {
            ActionRun::Delete(_) | ActionRun::Provision(_) | ActionRun::Create(_) => what.clone(),
            _ => format!("{what} in {cluster}"),
        };
        // A CAPI fix is followed until its finding clears, with no stop between its steps.
        let kind = OperationKind::of(action);
        let cancel = match self {
            ActionRun::CapiFix(_) => CancelRule::RunsToItsEnd,
            _ => kind.cancel(),
        };
        let mut progress = OperationProgress::start(kind, cluster, &what, headline, cancel, now);
        // The most the run may take, where its runner bounds it.
        match self {
            ActionRun::Node(_) => {
                progress.subject_kind = "Node".into();
                progress.timeout = Some(NodeActionOptions::console().node_timeout);
            }
            ActionRun::Etcd(plan) => {
                progress.steps = runner_events::etcd_steps(plan);
                progress.timeout = (plan.action == EtcdAction::Snapshot).then_some(SNAPSHOT_BOUND);
            }
            ActionRun::CapiUpgrade(plan) => {
                progress.steps = runner_events::capi_upgrade_steps(plan);
                (progress.steps_word, progress.steps_title) = ("phases".into(), "Phases".into());
                let phases = plan.phases.iter();
                progress.timeout = Some(phases.map(|p| capi_upgrade::phase_bound(plan, p)).sum());
            }
            ActionRun::Provision(plan) => {
                let (cluster, provider) = (&plan.cluster, &plan.provider);
                let vms =
                    runner_events::ProvisionSteps::new(cluster, provider, plan.vm_names.clone());
                vms.shape(&mut progress);
                progress.timeout = Some(RunnerOptions::default().timeout);
            }
            ActionRun::CapiScale(plan) => {
                progress.subject_kind = "Machines".into();
                let (tally, checks) = runner_events::scale_start(plan);
                (progress.tally, progress.checks) = (Some(tally), checks);
            }
            ActionRun::Upgrade(plan) => runner_events::shape_rollout(&mut progress, &plan.steps()),
            ActionRun::Create(plan) => {
                progress.steps = runner_events::create_steps();
                progress.steps_word = "phases".into();
                progress.steps_title = format!("Create of {}", plan.cluster);
            }
            ActionRun::ConfigPatch(plan) => {
                progress.steps = plan.steps().iter().map(|s| StepRow::pending(s)).collect();
                progress.step_timeout = Some(NodeActionOptions::console().node_timeout);
                (progress.steps_word, progress.steps_title) = ("nodes".into(), "Nodes".into());
            }
            ActionRun::Forget(_)
            | ActionRun::CapiFix(_)
            | ActionRun::Delete(_)
            | ActionRun::TerminateVm
            | ActionRun::ResumeUpgrade => {}
        }
        progress
    }
}
