//! The Kubernetes upgrade as a kind of rollout: plan guards and the removed-API check before the
//! first step, then the optional pre-pull as one step per node and image, then one component on
//! one node per step with step guards before each (`operation::upgrade` runs them).
use futures::FutureExt;
use futures::future::BoxFuture;

use super::guards::{KubeGuardInput, kubernetes_plan_guards, kubernetes_step_guards};
use super::plan::{KubeStepState, KubernetesUpgradePlan};
use super::removed_flags::{RemovedItem, check_removed_flags};
use super::step::{ComponentStep, KubeLiveStep, PrePullStep};
use crate::approval::MutatingAction;
use crate::capi::owned::InPlaceUpgrade;
use crate::fleet::ClusterStatus;
use crate::guards::Guard;
use crate::kube::removed_apis::RemovedApiCount;
use crate::rollout::{RolloutKind, StepPhase, StepProgress};
use crate::upgrade::launch::guards_pass;
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::releases::{KUBE_APISERVER, REGISTRY_ENV};
use crate::upgrade::runner::{KindRollout, UpgradeKind, planned_step};
use crate::upgrade::{ReleaseLookup, ReleasesOrigin, RolloutInProgress};
use crate::versions::Version;

/// The Kubernetes upgrade: one component on one node per step, its config applied without reboot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kubernetes;

/// The target as the journal, the Lease and the dispatcher name it: `1.35.0`.
pub fn target_text(plan: &KubernetesUpgradePlan) -> String {
    Kubernetes::version_text(&plan.target)
}

/// The steps a new run starts with: the pre-pulls, then the components' steps; pending, and
/// skipped where a component is already on target.
pub fn initial_steps(plan: &KubernetesUpgradePlan) -> Vec<StepProgress> {
    let pulls = plan.pre_pull_steps();
    let pulls = pulls
        .iter()
        .map(|p| StepProgress::pending(&p.node, &p.label()));
    let components = plan.steps.iter().map(|s| {
        let mut p = StepProgress::pending(&s.node, &s.label(&plan.target));
        if s.state == KubeStepState::AlreadyOnTarget {
            p.phase = StepPhase::Skipped;
            p.detail = format!("already on {}", plan.target);
        } else if let Some(note) = s.state.skip_note() {
            p.phase = StepPhase::Skipped;
            p.detail = note.to_string();
        }
        p
    });
    pulls.chain(components).collect()
}

/// The steps' batches: each pre-pull alone, then the components' steps, numbered after the
/// pre-pulls.
pub fn batches(plan: &KubernetesUpgradePlan) -> Vec<Vec<usize>> {
    let pulls = plan.pre_pull_steps().len();
    (0..pulls)
        .map(|i| vec![i])
        .chain(
            plan.batches()
                .into_iter()
                .map(|batch| batch.into_iter().map(|i| i + pulls).collect()),
        )
        .collect()
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

/// A target the built-in table does not know: whether the registry lists its API server image
/// (`registry.k8s.io/kube-apiserver`, or where [`REGISTRY_ENV`] points), stable tags only. The
/// plan records where the releases came from; the `kubernetes_path` guard reads it. Asked only
/// for such a target, so a plan to a known release never waits on a registry.
pub async fn learn_target(plan: &mut KubernetesUpgradePlan) {
    let setting = std::env::var(REGISTRY_ENV).ok();
    let lookup = ReleaseLookup::of(KUBE_APISERVER, setting.as_deref(), Vec::new(), None, false);
    match lookup.listing().await {
        Ok((tags, origin)) => {
            plan.target_listed = tags
                .iter()
                .filter_map(|t| t.strip_prefix('v').and_then(|_| Version::parse(t).ok()))
                .any(|v| !v.is_pre_release() && v == plan.target);
            plan.releases = origin;
        }
        Err(reason) => plan.releases = ReleasesOrigin::BuiltIn { reason },
    }
}

/// What the removed-API and removed-flag guards read off the cluster: the objects stored in API
/// versions the target removes, and the removed flags, feature gates and admission plugins in
/// use (the console's plan screen asks for them as its task).
pub async fn read_removed(
    observer: &ClusterObserver,
    plan: &KubernetesUpgradePlan,
) -> (
    Result<Vec<RemovedApiCount>, String>,
    Result<Vec<RemovedItem>, String>,
) {
    tokio::join!(
        count_removed_apis(observer, plan),
        check_removed_flags(observer, plan)
    )
}

/// Every guard of the plan over the cluster now, its removed APIs and flags read, beside the
/// rollout another console holds (none once the run holds the Lease itself): what
/// `upgrade-k8s --plan` shows and what the run checks before its first step.
pub async fn read_plan_guards(
    observer: &ClusterObserver,
    plan: &KubernetesUpgradePlan,
    status: &ClusterStatus,
    other_rollout: Option<&RolloutInProgress>,
    acks: &[String],
) -> Vec<Guard> {
    let (removed_apis, removed_flags) = read_removed(observer, plan).await;
    let input = KubeGuardInput {
        roles: observer.talos.roles(),
        other_rollout,
        removed_apis: &removed_apis,
        removed_flags: &removed_flags,
        acks,
    };
    kubernetes_plan_guards(plan, status, input)
}

impl UpgradeKind for Kubernetes {
    type LiveStep<'a> = KubeLiveStep<'a>;
    type Plan = KubernetesUpgradePlan;
    const ROLLOUT: RolloutKind = RolloutKind::KubernetesUpgrade;
    const PRODUCT: &'static str = "Kubernetes";
    const NEEDS_KUBE: bool = true;
    const IN_PLACE: InPlaceUpgrade = InPlaceUpgrade::Kubernetes;
    const WHAT: &'static str = "Kubernetes upgrade";
    const UNIT: &'static str = "step";
    const REFUSES_OTHER_KIND: bool = true;

    fn step_line(index: usize, total: usize, step: &StepProgress) -> String {
        step.labelled_line(index, total)
    }

    fn cluster(plan: &KubernetesUpgradePlan) -> &str {
        &plan.cluster
    }

    fn version_text(target: &Version) -> String {
        target.to_string().trim_start_matches('v').to_string()
    }

    fn action(cluster: String, target: String) -> MutatingAction {
        MutatingAction::UpgradeKubernetes { cluster, target }
    }

    fn target_text(plan: &KubernetesUpgradePlan) -> String {
        target_text(plan)
    }

    fn initial_steps(plan: &KubernetesUpgradePlan) -> Vec<StepProgress> {
        initial_steps(plan)
    }

    fn batches(plan: &KubernetesUpgradePlan) -> Vec<Vec<usize>> {
        batches(plan)
    }

    fn approves(action: &MutatingAction, plan: &KubernetesUpgradePlan) -> bool {
        matches!(action, MutatingAction::UpgradeKubernetes { cluster, target }
            if *cluster == plan.cluster && target.trim_start_matches('v') == target_text(plan))
    }

    fn preflight(run: &KindRollout<Kubernetes>) -> BoxFuture<'_, Result<(), String>> {
        async move {
            let status = run.observer.status().await;
            // The rollout Lease is already ours: no other rollout can be running.
            let guards = read_plan_guards(&run.observer, &run.plan, &status, None, &run.acks);
            guards_pass(&guards.await, &run.acks)
        }
        .boxed()
    }

    fn check_before(
        run: &KindRollout<Kubernetes>,
        index: usize,
    ) -> BoxFuture<'_, Result<(), String>> {
        async move {
            // A pull changes nothing the step guards protect; they guard the components' steps.
            if index < run.plan.pre_pull_steps().len() {
                return Ok(());
            }
            let status = run.observer.status().await;
            guards_pass(&kubernetes_step_guards(&status), &run.acks)
        }
        .boxed()
    }

    fn step(run: &KindRollout<Kubernetes>, index: usize) -> Result<KubeLiveStep<'_>, String> {
        let pulls = run.plan.pre_pull_steps();
        if index < pulls.len() {
            let pull = planned_step(&pulls, &run.plan.cluster, index)?.clone();
            return Ok(KubeLiveStep::PrePull(PrePullStep {
                observer: &run.observer,
                pull,
            }));
        }
        let pulls = pulls.len();
        let step = planned_step(&run.plan.steps, &run.plan.cluster, index - pulls)?;
        Ok(KubeLiveStep::Component(ComponentStep {
            observer: &run.observer,
            plan: &run.plan,
            step,
            poll_interval: run.options.poll_interval,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upgrade::fixtures::{healthy, version};
    use crate::upgrade::kubernetes::guards::tests::with_components;

    #[test]
    fn the_pre_pull_is_a_step_per_node_and_image_before_the_components() {
        let status = with_components(healthy(), "v1.34.1");
        let plan = KubernetesUpgradePlan::new(&status, &version("v1.35.0"), true).expect("plan");
        let steps = initial_steps(&plan);
        // 3 static pods and the kubelet on each of 3 control planes, the kubelet on 2 workers,
        // then the 17 components' steps.
        assert_eq!(steps.len(), 14 + 17);
        assert_eq!(
            (steps[0].node.as_str(), steps[0].label.as_str()),
            ("cp-1", "pre-pull registry.k8s.io/kube-apiserver:v1.35.0")
        );
        assert!(
            steps[13].label.ends_with("kubelet:v1.35.0"),
            "{:?}",
            steps[13]
        );
        assert_eq!(steps[13].node, "w-2");
        assert!(
            steps[14].label.starts_with("kube-apiserver"),
            "{:?}",
            steps[14]
        );
        assert!(steps.iter().all(|s| s.phase == StepPhase::Pending));
        // Each pull runs alone, then the components numbered after them.
        let order = batches(&plan);
        assert_eq!(order.len(), 14 + 17);
        assert_eq!(order[0], [0]);
        assert_eq!(order[14], [14]);
        assert_eq!(order[30], [30]);

        let without = KubernetesUpgradePlan {
            pre_pull: false,
            ..plan
        };
        assert_eq!(initial_steps(&without).len(), 17);
        assert_eq!(batches(&without), without.batches());
    }

    #[test]
    fn a_journal_whose_steps_this_build_does_not_plan_is_not_resumed() {
        use crate::rollout::{RolloutJournal, RolloutKind};
        use crate::upgrade::runner::steps_match;
        let status = with_components(healthy(), "v1.34.1");
        let plan = KubernetesUpgradePlan::new(&status, &version("v1.35.0"), true).expect("plan");
        let mut journal = RolloutJournal::begun(
            "healthy",
            RolloutKind::KubernetesUpgrade,
            "1.35.0",
            "op@host",
        );
        journal.steps = initial_steps(&plan);
        assert_eq!(steps_match::<Kubernetes>(&journal, &plan), Ok(()));
        // A journal written without the pre-pull steps: its first step is kube-apiserver's.
        journal.steps.drain(..14);
        let refused = steps_match::<Kubernetes>(&journal, &plan).unwrap_err();
        assert!(
            refused.contains("lists 17 steps and this build plans 31"),
            "{refused}"
        );
    }
}
