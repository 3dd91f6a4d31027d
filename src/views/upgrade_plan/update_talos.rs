//! The Talos OS upgrade's part of the plan screen's update step: the releases learned for each
//! cluster at run time (the console's news; an open plan on its default target moves to theirs),
//! the node order (move, leave out, include), the installer image typed or reset, stage,
//! preserve and max-parallel making the plan again. Pure.
use std::collections::BTreeMap;

use super::keys::{RolloutKey, TALOS, TalosKey};
use super::talos::{PlanEdit, PlanScreen};
use super::{PlanKind, ReleasesLearned, RolloutPlanModule, RolloutScreen, TALOS_PLAN};
use crate::app::action::Effect;
use crate::app::binding::Binding;
use crate::app::message::Message;
use crate::app::screen::Pane;
use crate::app::screens::{Ask, ScreenName, ScreenNews, Shared, Step};
use crate::upgrade::{Direction, LearnedReleases, StepState, TalosOs};
use crate::views::plan::reread_guards;

/// Most workers upgraded at once that the plan screen offers.
const MAX_PARALLEL: usize = 10;

/// What the installer image field says while it is typed.
const IMAGE_PROMPT: &str = "image> ";

impl RolloutScreen for TalosOs {
    const NAME: ScreenName = TALOS_PLAN;
    const TITLE: &'static str = "Upgrade plan (u, :upgrade)";
    const HOME: Pane = Pane::Nodes;
    type Key = TalosKey;
    /// The Talos releases learned for each cluster; the built-in table until they arrive.
    type Kept = BTreeMap<String, LearnedReleases>;

    fn own_keys() -> &'static [Binding<RolloutKey<TalosKey>, RolloutPlanModule<Self>>] {
        TALOS
    }

    fn releases(learned: &Self::Kept, cluster: &str) -> LearnedReleases {
        let known = learned.get(cluster).cloned();
        known.unwrap_or_else(|| LearnedReleases::built_in("not learned yet"))
    }

    fn asks(_: &mut PlanScreen) -> Vec<Effect> {
        Vec::new()
    }

    fn on_own_key(module: &mut RolloutPlanModule<Self>, key: TalosKey, shared: &Shared) -> Step {
        let Some(plan) = module.plan.as_mut() else {
            return Step::close();
        };
        match key {
            TalosKey::EditImage => {
                let text = match &plan.made {
                    Ok(p) => p.image.clone(),
                    Err(_) => plan.image.clone().unwrap_or_default(),
                };
                let prompt = IMAGE_PROMPT;
                return Step::ask(Ask::Input { prompt, text });
            }
            TalosKey::ResetImage => plan.image = None,
            TalosKey::ToggleStage => plan.options.stage = !plan.options.stage,
            TalosKey::TogglePreserve if plan.preserve_applies => {
                plan.options.preserve = !plan.options.preserve
            }
            TalosKey::TogglePreserve => {
                return Step::message(Message::info(
                    "preserve only matters below Talos 1.8; every node here keeps EPHEMERAL",
                ));
            }
            TalosKey::MoreParallel => {
                plan.options.max_parallel = (plan.options.max_parallel + 1).min(MAX_PARALLEL)
            }
            TalosKey::LessParallel => {
                plan.options.max_parallel = plan.options.max_parallel.saturating_sub(1).max(1)
            }
            TalosKey::MoveStepUp | TalosKey::MoveStepDown => {
                let up = key == TalosKey::MoveStepUp;
                let direction = if up { Direction::Up } else { Direction::Down };
                let edit = plan
                    .step
                    .clone()
                    .map(|node| PlanEdit::Move(node, direction));
                return edited(plan, edit, shared);
            }
            TalosKey::ToggleStep => return toggled(plan, shared),
        }
        module.rebuilt(shared)
    }

    /// The releases learned for a cluster: kept for its next plan; its open plan takes them,
    /// moved to their default target while it is still on the default it opened on.
    fn on_news(module: &mut RolloutPlanModule<Self>, news: &ScreenNews, shared: &Shared) -> bool {
        let Some(ReleasesLearned { cluster, learned }) = news.get::<ReleasesLearned>() else {
            return false;
        };
        module.kept.insert(cluster.clone(), learned.clone());
        let live = shared.fleet.cluster(cluster);
        let open = module.plan.as_mut().filter(|p| &p.cluster == cluster);
        let (Some(plan), Some(live)) = (open, live) else {
            return false;
        };
        let default = |learned| TalosOs::targets_among(&live.status, None, learned).ok();
        if default(&plan.releases).is_some_and(|(_, t)| t == plan.target)
            && let Some((targets, target)) = default(learned)
        {
            plan.targets = targets;
            plan.target = target;
        }
        plan.releases = learned.clone();
        plan.rebuild(&live.status);
        reread_guards(plan, shared);
        true
    }

    /// Enter on the image field: a custom image, or the default again; one the plan refuses is
    /// said and dropped.
    fn on_input(module: &mut RolloutPlanModule<Self>, text: &str, shared: &Shared) -> Step {
        let Some(plan) = module.plan.as_mut() else {
            return Step::default();
        };
        let text = text.trim();
        let default = crate::upgrade::default_installer_image(&plan.target);
        plan.image = (text != default).then(|| text.to_string());
        let step = module.rebuilt(shared);
        let Some(plan) = module.plan.as_mut() else {
            return step;
        };
        let Err(e) = &plan.made else {
            return step;
        };
        let refused = Message::error(e.clone());
        plan.image = None;
        Step {
            message: Some(refused),
            ..module.rebuilt(shared)
        }
    }
}

/// The node order edited (its guards read again); an edit that does not apply is said.
fn edited(plan: &mut PlanScreen, edit: Option<PlanEdit>, shared: &Shared) -> Step {
    let refused = edit.and_then(|edit| plan.edit(edit).err());
    reread_guards(plan, shared);
    refused.map_or_else(Step::default, |e| Step::message(Message::warn(e)))
}

/// `x`: the selected node left out, or included again; a node already on the target is
/// skipped either way.
fn toggled(plan: &mut PlanScreen, shared: &Shared) -> Step {
    let Some(step) = plan.steps().get(plan.step_index()).cloned() else {
        return Step::default();
    };
    let edit = match step.state {
        StepState::LeftOut => PlanEdit::Include(step.node),
        StepState::Upgrade => PlanEdit::LeaveOut(step.node),
        StepState::AlreadyOnTarget => {
            return Step::message(Message::info(format!(
                "{} already runs the target; it is skipped either way",
                step.node
            )));
        }
    };
    edited(plan, Some(edit), shared)
}
