//! The CAPI-way upgrade as a kind of rollout: one step per phase (the TalosControlPlane, then
//! each MachineDeployment), so the runner's journal, Lease, approval check, pause and resume
//! are the in-place upgrades' own. Kubernetes and Talos differ only in how they are named.
use std::marker::PhantomData;

use futures::FutureExt;
use futures::future::BoxFuture;

use super::guards::{capi_phase_guards, machines_only, rollout_settled, version_path};
use super::phase::PhaseRollout;
use super::plan::{CapiProduct, CapiUpgradePlan};
use super::read::CapiAccess;
use crate::approval::MutatingAction;
use crate::capi::ClusterTree;
use crate::fleet::ClusterStatus;
use crate::rollout::StepReport;
use crate::rollout::{RolloutKind, StepProgress};
use crate::upgrade::launch::guards_pass;
use crate::upgrade::runner::{KindRollout, KindStep, RunOptions, UpgradeKind, planned_step};

/// How the journal, the Lease and the dispatcher name one product's CAPI-way upgrade.
pub trait CapiProductKind: Send + Sync + 'static {
    const PRODUCT: CapiProduct;
    const ROLLOUT: RolloutKind;
    /// As `MutatingAction::CapiUpgrade` names it.
    const NAME: &'static str;
}

/// The Kubernetes version, by `spec.version`.
pub struct KubernetesVersion;
/// The Talos OS, by a copied machine template.
pub struct TalosMachineTemplate;

impl CapiProductKind for KubernetesVersion {
    const PRODUCT: CapiProduct = CapiProduct::Kubernetes;
    const ROLLOUT: RolloutKind = RolloutKind::KubernetesUpgrade;
    const NAME: &'static str = "Kubernetes";
}

impl CapiProductKind for TalosMachineTemplate {
    const PRODUCT: CapiProduct = CapiProduct::TalosOs;
    const ROLLOUT: RolloutKind = RolloutKind::TalosUpgrade;
    const NAME: &'static str = "Talos";
}

/// The CAPI-way upgrade of product `P`.
pub struct CapiWay<P>(PhantomData<P>);

/// The approval of the CAPI-way upgrade of `plan`'s product.
pub fn capi_action(plan: &CapiUpgradePlan) -> MutatingAction {
    MutatingAction::CapiUpgrade {
        cluster: plan.cluster.clone(),
        owner: plan.owner().to_string(),
        product: product_name(plan.product).to_string(),
        target: plan.target.clone(),
    }
}

pub fn product_name(product: CapiProduct) -> &'static str {
    match product {
        CapiProduct::Kubernetes => KubernetesVersion::NAME,
        CapiProduct::TalosOs => TalosMachineTemplate::NAME,
    }
}

async fn connected<P: CapiProductKind>(
    run: &KindRollout<CapiWay<P>>,
) -> Result<CapiAccess, String> {
    let kubeconfig = run.options.kubeconfig.as_ref().ok_or_else(|| {
        format!(
            "no kubeconfig to reach the management cluster {}",
            run.plan.management
        )
    })?;
    CapiAccess::connect(kubeconfig, &run.plan.owner()).await
}

/// The workload cluster's tree and its status over the Secret's Talos endpoints, now.
async fn tree_and_status<P: CapiProductKind>(
    run: &KindRollout<CapiWay<P>>,
) -> Result<(ClusterTree, ClusterStatus), String> {
    connected(run)
        .await?
        .tree_and_status(&run.plan, run.observer.kube.clone(), run.options.client)
        .await
}

/// The engine bounds one phase in Machine bounds: each Machine is bounded on its own (no
/// Machine created, Ready or deleted for that long halts the phase).
const PHASE_BOUND_IN_MACHINES: u32 = 100;

/// The options of a CAPI-way run from those of the in-place upgrade it stands for: the step
/// bound is a phase's (the plan's `machine_timeout_secs` keeps the in-place node bound as the
/// one Machine's).
pub fn capi_run_options(in_place: RunOptions) -> RunOptions {
    RunOptions {
        node_timeout: in_place.node_timeout * PHASE_BOUND_IN_MACHINES,
        ..in_place
    }
}

impl<P: CapiProductKind> UpgradeKind for CapiWay<P> {
    type LiveStep<'a> = PhaseStep<'a, P>;
    type Plan = CapiUpgradePlan;
    const ROLLOUT: RolloutKind = P::ROLLOUT;
    const PRODUCT: &'static str = P::NAME;
    const NEEDS_KUBE: bool = true;

    fn cluster(plan: &CapiUpgradePlan) -> &str {
        &plan.cluster
    }

    fn target_text(plan: &CapiUpgradePlan) -> String {
        plan.target.clone()
    }

    fn initial_steps(plan: &CapiUpgradePlan) -> Vec<StepProgress> {
        plan.phases
            .iter()
            .map(|p| {
                let label = format!("{} machine(s) to {}", p.replace.len(), plan.version);
                StepProgress::pending(&p.label(), &label)
            })
            .collect()
    }

    /// One phase after the other: the control planes first, as the providers' docs order it.
    fn batches(plan: &CapiUpgradePlan) -> Vec<Vec<usize>> {
        (0..plan.phases.len()).map(|i| vec![i]).collect()
    }

    fn approves(action: &MutatingAction, plan: &CapiUpgradePlan) -> bool {
        P::PRODUCT == plan.product && *action == capi_action(plan)
    }

    fn preflight(run: &KindRollout<Self>) -> BoxFuture<'_, Result<(), String>> {
        async move {
            let (tree, status) = tree_and_status(run).await?;
            let guards = [
                version_path(&run.plan, &tree, &machines_only(&status, &tree)),
                rollout_settled(&run.plan, &tree),
            ];
            guards_pass(&guards, &run.acks)
        }
        .boxed()
    }

    fn check_before(run: &KindRollout<Self>, index: usize) -> BoxFuture<'_, Result<(), String>> {
        async move {
            let (tree, status) = tree_and_status(run).await?;
            guards_pass(
                &capi_phase_guards(&run.plan, index, &tree, &status),
                &run.acks,
            )
        }
        .boxed()
    }

    fn step(run: &KindRollout<Self>, index: usize) -> Result<PhaseStep<'_, P>, String> {
        planned_step(&run.plan.phases, &run.plan.cluster, index)?;
        Ok(PhaseStep { run, index })
    }
}

/// Phase `index` of a connected run; connects to the management cluster when it runs.
pub struct PhaseStep<'a, P: CapiProductKind> {
    run: &'a KindRollout<CapiWay<P>>,
    index: usize,
}

impl<P: CapiProductKind> PhaseStep<'_, P> {
    async fn live(&self) -> Result<PhaseRollout<'_>, String> {
        let run = self.run;
        let access = connected(run).await?;
        let observer = access
            .workload_observer(&run.plan, run.observer.kube.clone(), run.options.client)
            .await?;
        Ok(PhaseRollout {
            plan: &run.plan,
            phase: &run.plan.phases[self.index],
            access,
            observer,
            poll_interval: run.options.poll_interval,
        })
    }
}

impl<P: CapiProductKind> KindStep for PhaseStep<'_, P> {
    async fn settle(&self) -> Result<bool, String> {
        self.live().await?.settle().await
    }

    async fn run(&self, report: &StepReport) -> Result<(), String> {
        self.live().await?.run(report).await
    }
}
