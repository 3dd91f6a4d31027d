//! The Talos OS rolling upgrade as a kind of rollout: plan guards before the first node, step
//! guards before each, one node's upgrade per step (`operation::upgrade` runs them).
use futures::FutureExt;
use futures::future::BoxFuture;

use super::guards::{plan_guards, step_guards};
use super::launch::guards_pass;
use super::node_step::NodeUpgrade;
use super::plan::{StepState, UpgradePlan};
use super::runner::{KindRollout, UpgradeKind, planned_step};
use crate::approval::MutatingAction;
use crate::capi::owned::InPlaceUpgrade;
use crate::rollout::{RolloutKind, StepPhase, StepProgress};
use crate::versions::Version;

/// The Talos OS upgrade: one node per step, rebooted into the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TalosOs;

impl UpgradeKind for TalosOs {
    type LiveStep<'a> = NodeUpgrade<'a>;
    type Plan = UpgradePlan;
    const ROLLOUT: RolloutKind = RolloutKind::TalosUpgrade;
    const PRODUCT: &'static str = "Talos";
    const NEEDS_KUBE: bool = false;
    const IN_PLACE: InPlaceUpgrade = InPlaceUpgrade::TalosOs;
    const WHAT: &'static str = "upgrade";
    const UNIT: &'static str = "node";
    const REFUSES_OTHER_KIND: bool = false;

    fn cluster(plan: &UpgradePlan) -> &str {
        &plan.cluster
    }

    fn version_text(target: &Version) -> String {
        target.to_string()
    }

    fn action(cluster: String, target: String) -> MutatingAction {
        MutatingAction::UpgradeTalos { cluster, target }
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

    fn step(run: &KindRollout<TalosOs>, index: usize) -> Result<NodeUpgrade<'_>, String> {
        let step = planned_step(&run.plan.steps, &run.plan.cluster, index)?;
        Ok(NodeUpgrade {
            observer: &run.observer,
            plan: &run.plan,
            step,
            poll_interval: run.options.poll_interval,
            drain: run.drain(),
            legacy_call_bound: legacy_call_bound(run.options.node_timeout),
        })
    }
}

/// Half the step's time for the legacy Upgrade call to answer (talosctl sets no deadline; the
/// node pulls the installer first), the other half to follow the node if it never does.
fn legacy_call_bound(node_timeout: std::time::Duration) -> std::time::Duration {
    node_timeout / 2
}
