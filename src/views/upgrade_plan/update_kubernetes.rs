//! The Kubernetes upgrade's part of the plan screen's update step: the removed-API count asked
//! of the console once per (from, target) and folded back, and pre-pull making the plan again.
//! Pure.
use super::keys::{KUBERNETES, KubeKey, RolloutKey};
use super::kubernetes::KubePlanScreen;
use super::{KUBE_PLAN, RemovedApisCounted, RolloutPlanModule, RolloutScreen};
use crate::app::action::Effect;
use crate::app::binding::Binding;
use crate::app::screen::Pane;
use crate::app::screens::{ScreenName, ScreenNews, ScreenTask, Shared, Step};
use crate::upgrade::LearnedReleases;
use crate::upgrade::kubernetes::Kubernetes;
use crate::views::plan::reread_guards;

impl RolloutScreen for Kubernetes {
    const NAME: ScreenName = KUBE_PLAN;
    const TITLE: &'static str = "Kubernetes upgrade plan (U, :upgrade-k8s)";
    const HOME: Pane = Pane::Versions;
    type Key = KubeKey;
    type Kept = ();

    fn own_keys() -> &'static [Binding<RolloutKey<KubeKey>, RolloutPlanModule<Self>>] {
        KUBERNETES
    }

    /// The Kubernetes targets come from the Talos version the nodes run, not a registry.
    fn releases(_: &(), _: &str) -> LearnedReleases {
        LearnedReleases::built_in("no registry was asked")
    }

    /// The removed-API count, when the plan has none yet (once per plan).
    fn asks(plan: &mut KubePlanScreen) -> Vec<Effect> {
        let Some(wanted) = plan.needs_count().cloned() else {
            return Vec::new();
        };
        plan.counting();
        vec![Effect::Screen(ScreenTask::new(KUBE_PLAN, wanted))]
    }

    fn on_own_key(module: &mut RolloutPlanModule<Self>, key: KubeKey, shared: &Shared) -> Step {
        match key {
            KubeKey::PrePull => {
                if let Some(plan) = module.plan.as_mut() {
                    plan.pre_pull = !plan.pre_pull;
                }
                module.rebuilt(shared)
            }
        }
    }

    /// The count arrived: kept when it answers the plan on screen, whose guards read again.
    fn on_news(module: &mut RolloutPlanModule<Self>, news: &ScreenNews, shared: &Shared) -> bool {
        let Some(counted) = news.get::<RemovedApisCounted>() else {
            return false;
        };
        let Some(plan) = module
            .plan
            .as_mut()
            .filter(|p| p.cluster == counted.cluster)
        else {
            return false;
        };
        plan.counted(
            &counted.from,
            &counted.target,
            counted.result.clone(),
            counted.flags.clone(),
        );
        reread_guards(plan, shared);
        true
    }
}
