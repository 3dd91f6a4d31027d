//! The update step for the Talos OS plan screen's own keys (image, stage,
//! preserve, max-parallel, the node order): which cluster a plan opens for, the
//! releases it offers, approvals routed to their kind's plan or to the resume of a
//! journal's rollout. Pure, like the rest of update.
use super::action::{Action, Effect, not_run};
use super::message::Message;
use super::plan_screen::PlanKind;
use super::screen::{Pane, Screen, TableKind};
use super::state::{AppState, InputKind};
use super::tables;
use super::update_panes::open_cluster;
use super::update_plan::{PlanKeys, open_plan, rebuild, start_approved};
use super::upgrade_plan::PlanEdit;
use crate::approval::{ApprovedAction, MutatingAction};
use crate::rollout::{LeaseReading, RolloutKind};
use crate::upgrade::{Direction, LearnedReleases, StepState, TalosOs};

/// Most workers upgraded at once that the plan screen offers.
const MAX_PARALLEL: usize = 10;

/// A rollout on `cluster` the plan must wait for: this console's own unfinished one, else
/// another console's, from its rollout Lease; or why the Lease could not be read when this
/// console runs none there, for the guards that must not take an unread Lease for a free one.
pub fn other_rollout_read(state: &AppState, cluster: &str) -> LeaseReading {
    let own = super::update_progress::rollout_in_progress(state, cluster);
    match (own, state.fleet.cluster(cluster)) {
        (Some(own), _) => Ok(Some(own)),
        (None, Some(live)) => live.status.other_rollout_read(&state.identity),
        (None, None) => Ok(None),
    }
}

/// The cluster `u` / `:upgrade` acts on: the one in use on the cluster
/// screens, else the fleet's selection.
fn target_cluster(state: &mut AppState) -> Option<String> {
    if state.screen == Screen::Fleet {
        let data = tables::table(state, TableKind::Fleet);
        if let Some(name) = data.selected_key(&state.tables.fleet).map(String::from) {
            state.use_cluster(&name);
            open_cluster(state);
        }
    }
    state.current.clone()
}

/// The cluster an upgrade plan opens for, or `None` (said on the message line).
pub(super) fn usable_cluster(state: &mut AppState) -> Option<String> {
    let cluster = target_cluster(state);
    if cluster.is_none() {
        state.message = Some(Message::warn(
            "no cluster in use: Enter on the fleet or :ctx NAME",
        ));
    }
    cluster
}

/// Shows this console's unfinished rollout of `cluster` instead of a plan;
/// true when there is one (one rollout per cluster, whatever its kind).
pub(super) fn unfinished_rollout_shown(state: &mut AppState, cluster: &str) -> bool {
    if super::update_progress::rollout_in_progress(state, cluster).is_none() {
        return false;
    }
    let hint = if super::update_progress::rollout_running(state) {
        "Space pauses, c cancels"
    } else {
        "r resumes it"
    };
    state.message = Some(Message::info(format!(
        "a rollout of {cluster} has not ended: {hint}"
    )));
    state.screen = Screen::Action;
    true
}

/// `u`, `:upgrade [vX.Y.Z]`: the plan, or the progress screen while this
/// console's rollout of the cluster has not ended.
pub fn open_upgrade(state: &mut AppState, target: Option<String>) -> Vec<Effect> {
    open_plan::<TalosOs>(state, target)
}

/// The Talos releases learned for `cluster`: kept for its next plan; its open plan takes them,
/// moved to their default target while it is still on the default it opened on.
pub fn on_releases(state: &mut AppState, cluster: String, learned: LearnedReleases) {
    let status = state.fleet.cluster(&cluster).map(|l| l.status.clone());
    let open = state.upgrade.as_mut().filter(|p| p.cluster == cluster);
    if let (Some(screen), Some(status)) = (open, status) {
        let default = |learned| TalosOs::targets_among(&status, None, learned).ok();
        if default(&screen.releases).is_some_and(|(_, t)| t == screen.target)
            && let Some((targets, target)) = default(&learned)
        {
            screen.targets = targets;
            screen.target = target;
        }
        screen.releases = learned.clone();
        screen.rebuild(&status);
        super::plan_keys::read_guards(state, Some(&cluster));
    }
    state.releases.insert(cluster, learned);
}

/// `:rollout`: the progress screen of the cluster in use's rollout.
pub fn show_rollout(state: &mut AppState) {
    match target_cluster(state) {
        Some(cluster)
            if state
                .actions
                .progress
                .as_ref()
                .is_some_and(|p| p.cluster == cluster) =>
        {
            state.screen = Screen::Action
        }
        Some(cluster) => {
            state.message = Some(Message::info(format!(
                "no rollout of {cluster} from this console (u plans one)"
            )))
        }
        None => {
            state.message = Some(Message::warn(
                "no cluster in use: Enter on the fleet or :ctx NAME",
            ))
        }
    }
}

/// Re-evaluates the open plans' guards when `cluster`'s status changed.
/// Returns whether anything a plan shows changed.
pub fn on_status_change(state: &mut AppState, cluster: &str) -> bool {
    super::plan_keys::read_guards(state, Some(cluster))
}

/// Keys on the Talos plan screen.
pub fn on_plan(state: &mut AppState, action: Action) -> Vec<Effect> {
    super::update_plan::on_plan::<TalosOs>(state, action)
}

/// The Talos plan screen's own keys; `None` for any other key.
pub(super) fn on_talos_key(state: &mut AppState, action: &Action) -> Option<Vec<Effect>> {
    let plan = state.upgrade.as_mut()?;
    match action {
        Action::EditImage => {
            let text = match &plan.plan {
                Ok(p) => p.image.clone(),
                Err(_) => plan.image.clone().unwrap_or_default(),
            };
            state.open_input(InputKind::Image, text);
            return Some(Vec::new());
        }
        Action::ResetImage => plan.image = None,
        Action::ToggleStage => plan.options.stage = !plan.options.stage,
        Action::TogglePreserve if plan.preserve_applies => {
            plan.options.preserve = !plan.options.preserve
        }
        Action::TogglePreserve => {
            state.message = Some(Message::info(
                "preserve only matters below Talos 1.8; every node here keeps EPHEMERAL",
            ));
            return Some(Vec::new());
        }
        Action::MoreParallel | Action::LessParallel => {
            let n = plan.options.max_parallel;
            plan.options.max_parallel = if matches!(action, Action::MoreParallel) {
                (n + 1).min(MAX_PARALLEL)
            } else {
                n.saturating_sub(1).max(1)
            };
        }
        Action::MoveStepUp | Action::MoveStepDown => {
            let direction = if matches!(action, Action::MoveStepUp) {
                Direction::Up
            } else {
                Direction::Down
            };
            if let Some(node) = plan.step.clone()
                && let Err(e) = plan.edit(PlanEdit::Move(node, direction))
            {
                state.message = Some(Message::warn(e));
            }
            super::plan_keys::read_guards(state, None);
            return Some(Vec::new());
        }
        Action::ToggleStep => {
            toggle_step(state);
            super::plan_keys::read_guards(state, None);
            return Some(Vec::new());
        }
        _ => return None,
    }
    Some(rebuild::<TalosOs>(state))
}

fn toggle_step(state: &mut AppState) {
    let Some(plan) = state.upgrade.as_mut() else {
        return;
    };
    let Some(step) = plan.steps().get(plan.step_index()).cloned() else {
        return;
    };
    let edit = match step.state {
        StepState::LeftOut => PlanEdit::Include(step.node.clone()),
        StepState::Upgrade => PlanEdit::LeaveOut(step.node.clone()),
        StepState::AlreadyOnTarget => {
            state.message = Some(Message::info(format!(
                "{} already runs the target; it is skipped either way",
                step.node
            )));
            return;
        }
    };
    if let Err(e) = plan.edit(edit) {
        state.message = Some(Message::warn(e));
    }
}

/// Enter on the image field.
pub fn set_image(state: &mut AppState, text: &str) {
    let Some(plan) = state.upgrade.as_mut() else {
        return;
    };
    let text = text.trim();
    let default = crate::upgrade::default_installer_image(&plan.target);
    plan.image = (text != default).then(|| text.to_string());
    rebuild::<TalosOs>(state);
    if let Some(Err(e)) = state.upgrade.as_ref().map(|p| &p.plan) {
        state.message = Some(Message::error(e.clone()));
        if let Some(plan) = state.upgrade.as_mut() {
            plan.image = None;
        }
        rebuild::<TalosOs>(state);
    }
}

/// The dispatcher approved a rollout: resume the journal shown, or start the plan on screen if
/// it still matches, no guard blocks now and no other operation runs here.
pub fn on_approved(state: &mut AppState, approved: ApprovedAction) -> Vec<Effect> {
    let (cluster, target, kind) = match approved.action() {
        MutatingAction::UpgradeTalos { cluster, target } => {
            (cluster.clone(), target.clone(), RolloutKind::TalosUpgrade)
        }
        MutatingAction::UpgradeKubernetes { cluster, target } => (
            cluster.clone(),
            target.clone(),
            RolloutKind::KubernetesUpgrade,
        ),
        _ => {
            return not_run(&approved, "no runner for this action in this version");
        }
    };
    if let Some(resumed) = super::update_progress::resume_approved(state, &approved) {
        return resumed;
    }
    if state.actions.running() {
        return not_run(&approved, "an action already runs from this console");
    }
    match kind {
        RolloutKind::TalosUpgrade => start_approved::<TalosOs>(state, approved, cluster, target),
        RolloutKind::KubernetesUpgrade => super::update_actions::on_approved(state, approved),
    }
}

impl PlanKeys for TalosOs {
    const SCREEN: Screen = Screen::UpgradePlan;
    const BACK: Pane = Pane::Nodes;
    const WHAT: &'static str = "upgrade";

    fn on_key(state: &mut AppState, action: &Action) -> Option<Vec<Effect>> {
        on_talos_key(state, action)
    }

    fn after_rebuild(_: &mut AppState) -> Vec<Effect> {
        Vec::new()
    }
}

#[cfg(test)]
#[path = "update_upgrade_tests.rs"]
mod tests;
