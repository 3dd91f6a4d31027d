//! The Kubernetes upgrade as a kind of rollout plan: the pre-pull option and the removed-API
//! count (asked of the console once per (from, target), "checking" until it arrives, folded
//! back as its news), the guards as the console shows them, and `?` on a step (`upgrade::explain`);
//! its pane (target and pre-pull on top with the removed-API count, the steps in upstream order:
//! component, node, from -> to; the guards keeping up to half of what is left). Pure.
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::keys::{KUBERNETES, KubeKey, RolloutKey};
use super::view::{labelled, target_line};
use super::{
    KUBE_PLAN, PlanKind, RemovedApisCounted, RolloutPlan, RolloutPlanModule, RolloutPlanScreen,
    rebuilt,
};
use crate::app::action::Effect;
use crate::app::binding::Binding;
use crate::app::plan_screen::{PlannedRollout, roles_of};
use crate::app::screen::Pane;
use crate::app::screens::{ScreenName, ScreenNews, ScreenTask, Shared, Step};
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col, wide};
use crate::fleet::ClusterStatus;
use crate::kube::removed_apis::RemovedApiCount;
use crate::tui::Role;
use crate::upgrade::kubernetes::{
    KubeGuardInput, KubeStepState, Kubernetes, KubernetesUpgradePlan, RemovedItem,
    chosen_kubernetes_target, kubernetes_plan_guards,
};
use crate::upgrade::{Guard, GuardId, RolloutInProgress, Verdict, explain};
use crate::versions::KubeVersion;
use crate::views::Look;
use crate::views::plan::reread_guards;
use crate::views::plan_parts::guards_keep_half;

/// The removed-API guard's reason while the count is still under way.
pub const CHECKING: &str = "checking\u{2026} (counting objects in the background)";

/// The Kubernetes upgrade plan screen.
pub type KubePlanScreen = RolloutPlanScreen<Kubernetes>;

/// What the Kubernetes plan screen keeps beyond every plan's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeSettings {
    pub pre_pull: bool,
    /// The removed-API count for `counted_for`; `None` while it is checked.
    pub removed_apis: Option<Result<Vec<RemovedApiCount>, String>>,
    /// The removed-flags check, asked with the count; `None` while it is checked.
    pub removed_flags: Option<Result<Vec<RemovedItem>, String>>,
    /// The (from, target) the count answers; a new plan asks again.
    pub counted_for: Option<(String, String)>,
}

impl RolloutPlan<Kubernetes> {
    /// The (from, target) a removed-API count must answer for this plan.
    pub fn wanted_count(&self) -> Option<(String, String)> {
        self.made.as_ref().ok().map(count_key)
    }

    /// The plan whose removed-API count still has to be asked for, marked as asked for, so it
    /// is asked once per plan.
    fn count_to_ask(&mut self) -> Option<KubernetesUpgradePlan> {
        let plan = self.made.as_ref().ok()?;
        let unasked = self.counted_for.is_none() && self.removed_apis.is_none();
        let plan = unasked.then(|| plan.clone())?;
        self.settings.counted_for = self.wanted_count();
        Some(plan)
    }

    /// The count arrived; kept only when it answers this plan.
    pub fn counted(
        &mut self,
        from: &str,
        target: &str,
        result: Result<Vec<RemovedApiCount>, String>,
        flags: Result<Vec<RemovedItem>, String>,
    ) {
        if self.wanted_count() != Some((from.to_string(), target.to_string())) {
            return;
        }
        if let (Ok(plan), Ok(counts)) = (&mut self.made, &result) {
            plan.removed_apis = counts.clone();
        }
        self.settings.counted_for = self.wanted_count();
        self.settings.removed_apis = Some(result);
        self.settings.removed_flags = Some(flags);
    }

    /// The console's view of the removed-API guard: "checking" until the
    /// count arrives.
    fn as_shown(&self, guard: Guard) -> Guard {
        match guard.id {
            GuardId::RemovedApis | GuardId::RemovedFlags if self.removed_apis.is_none() => Guard {
                verdict: Verdict::Warn,
                reason: CHECKING.to_string(),
                needs_ack: None,
                ..guard
            },
            _ => guard,
        }
    }
}

fn count_key(plan: &KubernetesUpgradePlan) -> (String, String) {
    (plan.from.to_string(), plan.target.to_string())
}

impl PlanKind for Kubernetes {
    type Settings = KubeSettings;
    fn targets_among(
        status: &ClusterStatus,
        named: Option<&str>,
        _: &crate::upgrade::LearnedReleases,
    ) -> Result<(Vec<KubeVersion>, KubeVersion), String> {
        chosen_kubernetes_target(status, named)
    }

    fn settings(_: &ClusterStatus, _: &crate::upgrade::LearnedReleases) -> KubeSettings {
        KubeSettings {
            // On by default, as talosctl upgrade-k8s --pre-pull-images.
            pre_pull: true,
            removed_apis: None,
            removed_flags: None,
            counted_for: None,
        }
    }

    /// A plan for another (from, target) forgets the removed-API count, which
    /// is then asked again.
    fn make_plan(
        status: &ClusterStatus,
        target: &KubeVersion,
        settings: &mut KubeSettings,
    ) -> Result<KubernetesUpgradePlan, String> {
        // The fleet model keeps the node list's order, as `status` does, so the
        // plan is the one `upgrade-k8s --plan` makes.
        let mut plan = KubernetesUpgradePlan::new(status, target, settings.pre_pull)
            .map_err(|e| e.to_string());
        if settings.counted_for != plan.as_ref().ok().map(count_key) {
            settings.removed_apis = None;
            settings.removed_flags = None;
            settings.counted_for = None;
        }
        if let Ok(plan) = &mut plan
            && let Some(Ok(counts)) = &settings.removed_apis
        {
            plan.removed_apis = counts.clone();
        }
        plan
    }

    fn guards(
        rollout: &RolloutPlan<Kubernetes>,
        plan: &KubernetesUpgradePlan,
        status: &ClusterStatus,
        other: Option<&RolloutInProgress>,
        acks: &[String],
    ) -> Vec<Guard> {
        let roles = roles_of(status);
        let checking = Err(String::new());
        let removed = rollout.removed_apis.as_ref().unwrap_or(&checking);
        let checking_flags = Err(String::new());
        let flags = rollout.removed_flags.as_ref().unwrap_or(&checking_flags);
        let input = KubeGuardInput {
            roles: &roles,
            other_rollout: other,
            removed_apis: removed,
            removed_flags: flags,
            acks,
        };
        kubernetes_plan_guards(plan, status, input)
            .into_iter()
            .map(|g| rollout.as_shown(g))
            .collect()
    }

    fn unready(rollout: &RolloutPlan<Kubernetes>) -> Option<String> {
        rollout
            .removed_apis
            .is_none()
            .then(|| "the removed-API check has not answered yet".to_string())
    }

    fn planned(plan: KubernetesUpgradePlan) -> PlannedRollout {
        PlannedRollout::Kubernetes(plan)
    }

    fn explain_step(plan: &KubernetesUpgradePlan, index: usize) -> Option<(String, String)> {
        let step = plan.steps.get(index)?;
        let title = format!("{} on {}", step.component.as_str(), step.node);
        Some((title, explain::component_step(plan, step)))
    }

    const NAME: ScreenName = KUBE_PLAN;
    const TITLE: &'static str = "Kubernetes upgrade plan (U, :upgrade-k8s)";
    const HOME: Pane = Pane::Versions;
    type Key = KubeKey;
    type Kept = ();

    fn own_keys() -> &'static [Binding<RolloutKey<KubeKey>, RolloutPlanModule<Self>>] {
        KUBERNETES
    }

    /// The removed-API count, when the plan has none yet (once per plan).
    fn asks(plan: &mut KubePlanScreen) -> Vec<Effect> {
        let wanted = plan.count_to_ask().into_iter();
        (wanted.map(|w| Effect::Screen(ScreenTask::new(KUBE_PLAN, w)))).collect()
    }

    fn on_own_key(plan: &mut KubePlanScreen, key: KubeKey, shared: &Shared) -> Step {
        match key {
            KubeKey::PrePull => plan.pre_pull = !plan.pre_pull,
        }
        rebuilt(plan, shared)
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

    const NO_STEPS: &'static str = "No steps.";
    const STEP_COLUMNS: &'static [Column] = &[
        col("#", Width::Content),
        col("COMPONENT", Width::Content),
        col("NODE", Width::Fill(1)),
        wide("ADDRESS", Width::Content),
        col("FROM -> TO", Width::Content),
        col("STATE", Width::Fill(1)),
    ];

    fn step_rows(plan: &KubernetesUpgradePlan) -> Vec<TableRow> {
        plan.steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let from = s.from.as_deref().unwrap_or("?");
                let (state, tone) = match s.state {
                    KubeStepState::Upgrade => ("apply", Tone::Plain),
                    KubeStepState::AlreadyOnTarget => ("on target", Tone::Muted),
                    KubeStepState::NoKubeProxy => ("no kube-proxy", Tone::Muted),
                };
                TableRow {
                    key: i.to_string(),
                    cells: vec![
                        TableCell::plain((i + 1).to_string()),
                        TableCell::plain(s.component.as_str()),
                        TableCell::plain(&s.node),
                        TableCell::plain(&s.address),
                        TableCell::new(format!("{from} -> {}", plan.target), tone),
                        TableCell::new(state, tone),
                    ],
                }
            })
            .collect()
    }

    /// Target, pre-pull and the removed-API count, one line each.
    fn summary(screen: &KubePlanScreen, look: &Look, width: usize) -> Vec<Line<'static>> {
        let from = match &screen.made {
            Ok(plan) => format!(" from {}; ", plan.from),
            Err(_) => "; ".to_string(),
        };
        let mut lines = vec![target_line(look, screen, &from, width)];
        let on_off = if screen.pre_pull { "on" } else { "off" };
        let pre_pull =
            format!("{on_off} (P): pull every new image on every node before the first step");
        lines.push(labelled(look, "Pre-pull", (&pre_pull, Role::Text), width));
        let (text, role) = match &screen.removed_apis {
            None => (CHECKING.to_string(), Role::Muted),
            Some(Err(e)) => (format!("cannot count: {e}"), Role::Error),
            Some(Ok(counts)) => {
                let stored: Vec<String> = counts
                    .iter()
                    .filter(|c| c.count > 0)
                    .map(|c| format!("{} {}", c.count, c.api))
                    .collect();
                if counts.is_empty() {
                    (
                        "none: the target removes no API version in use here".to_string(),
                        Role::Ok,
                    )
                } else if stored.is_empty() {
                    (
                        format!("none stored ({} API versions checked)", counts.len()),
                        Role::Ok,
                    )
                } else {
                    (stored.join(", "), Role::Warn)
                }
            }
        };
        lines.push(labelled(look, "Removed", (&text, role), width));
        lines
    }

    fn steps_title(screen: &KubePlanScreen) -> String {
        match &screen.made {
            Ok(plan) => format!(
                " Kubernetes {} -> {} on {}: {} of {} steps ",
                plan.from,
                plan.target,
                screen.cluster,
                plan.steps_to_run().count(),
                plan.steps.len()
            ),
            Err(_) => format!(" Kubernetes upgrade of {}: no plan ", screen.cluster),
        }
    }

    fn layout(screen: &KubePlanScreen, summary_lines: usize, area: Rect) -> [Rect; 4] {
        let guards = screen.guards.shown.len();
        guards_keep_half(area, summary_lines, screen.step_keys().len(), guards)
    }
}
