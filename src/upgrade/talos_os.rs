//! The Talos OS rolling upgrade as a kind of rollout: plan guards before the first node, step
//! guards before each, one node's upgrade per step, and the entry points that start a new run
//! or resume one from its journal.
use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::mpsc::UnboundedSender;

use super::guards::{plan_guards, step_guards};
use super::launch::guards_pass;
use super::node_step::NodeUpgrade;
use super::plan::{StepState, UpgradePlan};
use super::runner::{
    KindRollout, RunOptions, UpgradeKind, UpgradeRun, planned_step, resume_upgrade_with,
};
use crate::approval::{ApprovedAction, MutatingAction};
use crate::discovery::Cluster;
use crate::rollout::engine::{RolloutHandle, StepReport};
use crate::rollout::journal::RolloutJournal;
use crate::rollout::{RolloutEvent, RolloutKind, StepPhase, StepProgress};

/// The Talos OS upgrade: one node per step, rebooted into the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TalosOs;

/// A confirmed Talos OS upgrade, ready to run.
pub type TalosUpgradeRun = UpgradeRun<TalosOs>;

pub use super::runner::spawn_upgrade as spawn_talos_upgrade;

/// Resumes a Talos OS upgrade a killed console left in its journal, with the caller's options
/// (`RunOptions::from_journal` gives the journal's timings).
pub fn resume_talos_upgrade_with(
    journal: RolloutJournal,
    approved: ApprovedAction,
    cluster: Cluster,
    options: RunOptions,
    events: UnboundedSender<RolloutEvent>,
) -> RolloutHandle {
    resume_upgrade_with::<TalosOs>(journal, approved, cluster, options, events)
}

fn node(run: &KindRollout<TalosOs>, index: usize) -> Result<NodeUpgrade<'_>, String> {
    let step = planned_step(&run.plan.steps, &run.plan.cluster, index)?;
    Ok(NodeUpgrade {
        observer: &run.observer,
        plan: &run.plan,
        step,
        poll_interval: run.options.poll_interval,
        drain: run.drain(),
    })
}

impl UpgradeKind for TalosOs {
    type Plan = UpgradePlan;
    const ROLLOUT: RolloutKind = RolloutKind::TalosUpgrade;
    const PRODUCT: &'static str = "Talos";
    const NEEDS_KUBE: bool = false;

    fn cluster(plan: &UpgradePlan) -> &str {
        &plan.cluster
    }

    fn target_text(plan: &UpgradePlan) -> String {
        plan.target.to_string()
    }

    fn initial_steps(plan: &UpgradePlan) -> Vec<StepProgress> {
        plan.steps
            .iter()
            .map(|s| {
                let (label, phase) = match s.state {
                    StepState::Upgrade => {
                        (format!("upgrade to {}", plan.target), StepPhase::Pending)
                    }
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

    fn batches(plan: &UpgradePlan) -> Vec<Vec<usize>> {
        plan.batches()
    }

    fn approves(action: &MutatingAction, plan: &UpgradePlan) -> bool {
        matches!(action, MutatingAction::UpgradeTalos { cluster, target }
            if *cluster == plan.cluster && *target == plan.target.to_string())
    }

    fn preflight(run: &KindRollout<TalosOs>) -> BoxFuture<'_, Result<(), String>> {
        async move {
            let status = run.observer.status().await;
            let roles = run.observer.talos.roles();
            guards_pass(&plan_guards(&run.plan, &status, roles, None), &run.acks)
        }
        .boxed()
    }

    fn check_before(run: &KindRollout<TalosOs>, index: usize) -> BoxFuture<'_, Result<(), String>> {
        async move {
            let status = run.observer.status().await;
            guards_pass(&step_guards(&run.plan, index, &status), &run.acks)
        }
        .boxed()
    }

    fn settle(run: &KindRollout<TalosOs>, index: usize) -> BoxFuture<'_, Result<bool, String>> {
        async move { node(run, index)?.settle().await }.boxed()
    }

    fn run_step(
        run: &KindRollout<TalosOs>,
        index: usize,
        report: StepReport,
    ) -> BoxFuture<'_, Result<(), String>> {
        async move { node(run, index)?.run(&report).await }.boxed()
    }
}
