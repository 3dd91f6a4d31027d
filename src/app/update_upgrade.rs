//! The update step for the Talos OS plan screen's own keys (image, stage,
//! preserve, max-parallel, the node order) and for the progress pane: which
//! cluster a plan opens for, approvals routed to their kind's plan, folding the
//! runner's events, pause / resume / abort, and a journal found at startup.
//! Pure, like the rest of update.
use super::action::{Action, Effect, not_run};
use super::message::Message;
use super::plan_screen::PlanKind;
use super::rollout::RolloutView;
use super::screen::{Pane, Screen, TableKind};
use super::state::{AppState, InputKind, Overlay};
use super::tables;
use super::update_panes::open_cluster;
use super::update_plan::{PlanKeys, open_plan, rebuild, start_approved};
use super::upgrade_plan::PlanEdit;
use crate::approval::{ApprovedAction, MutatingAction};
use crate::rollout::{
    LeaseReading, RolloutControl, RolloutEvent, RolloutKind, RolloutOutcome, RolloutSummary,
};
use crate::upgrade::kubernetes::Kubernetes;
use crate::upgrade::{Direction, LearnedReleases, RolloutInProgress, StepState, TalosOs};

/// Most workers upgraded at once that the plan screen offers.
const MAX_PARALLEL: usize = 10;

/// A rollout on `cluster` the plan must wait for: this console's own
/// unfinished one, else another console's, from its rollout Lease.
pub fn other_rollout(state: &AppState, cluster: &str) -> Option<RolloutInProgress> {
    other_rollout_read(state, cluster).ok().flatten()
}

/// [`other_rollout`], or why the cluster's rollout Lease could not be read when this console
/// runs none there: for the guards that must not take an unread Lease for a free one.
pub fn other_rollout_read(state: &AppState, cluster: &str) -> LeaseReading {
    let own = state
        .rollouts
        .get(cluster)
        .filter(|r| r.unfinished())
        .map(RolloutView::in_progress);
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
    let Some(view) = state.rollouts.get(cluster).filter(|r| r.unfinished()) else {
        return false;
    };
    let hint = if view.resumable {
        "r resumes it"
    } else {
        "Space pauses, A aborts"
    };
    state.message = Some(Message::info(format!(
        "a rollout of {cluster} has not ended: {hint}"
    )));
    state.screen = Screen::Rollout;
    true
}

/// `u`, `:upgrade [vX.Y.Z]`: the plan, or the progress pane while this
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

/// `:rollout`: the progress pane of the cluster in use.
pub fn show_rollout(state: &mut AppState) {
    match target_cluster(state) {
        Some(cluster) if state.rollouts.contains_key(&cluster) => state.screen = Screen::Rollout,
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
    let plans = super::plan_keys::read_guards(state, Some(cluster));
    super::update_capi_upgrade::on_status_change(state, cluster) || plans
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

/// The dispatcher approved a rollout: start the plan on screen, or resume
/// the journal shown, if either still matches and no guard blocks now.
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
    if let Some(view) = state.rollouts.get_mut(&cluster) {
        if view.resumable && view.summary.kind == kind && view.summary.target == target {
            view.resumable = false;
            view.running = true;
            view.push_log("resuming from the journal".to_string());
            state.current = Some(cluster);
            state.screen = Screen::Rollout;
            return vec![Effect::ResumeRollout(approved)];
        }
        if view.unfinished() {
            return not_run(
                &approved,
                format!("a rollout of {cluster} is already running here"),
            );
        }
    }
    match kind {
        RolloutKind::TalosUpgrade => start_approved::<TalosOs>(state, approved, cluster, target),
        RolloutKind::KubernetesUpgrade => {
            start_approved::<Kubernetes>(state, approved, cluster, target)
        }
    }
}

/// Keys on the progress pane.
pub fn on_rollout(state: &mut AppState, action: Action) -> Vec<Effect> {
    let cluster = state.current.clone().unwrap_or_default();
    let page = state.page();
    let Some(view) = state.rollouts.get_mut(&cluster) else {
        if matches!(action, Action::Back) {
            state.screen = Screen::Cluster(Pane::Nodes);
        }
        return Vec::new();
    };
    if view.confirm_abort {
        view.confirm_abort = false;
        if !matches!(action, Action::ConfirmAbort) {
            state.message = Some(Message::info("not aborted; the rollout goes on"));
            return Vec::new();
        }
    }
    if view.scroll(&action, page) {
        return Vec::new();
    }
    let control = |control| {
        vec![Effect::Control {
            cluster: cluster.clone(),
            control,
        }]
    };
    match action {
        Action::PauseRollout if view.can_pause() => {
            view.pause_requested = true;
            let after = view
                .pausing_after()
                .unwrap_or("the current node")
                .to_string();
            state.message = Some(Message::info(format!("pausing after {after}")));
            return control(RolloutControl::Pause);
        }
        Action::ResumeRollout if view.running && view.summary.paused => {
            state.message = Some(Message::info("resuming"));
            return control(RolloutControl::Resume);
        }
        Action::ResumeRollout if view.resumable => {
            let (cluster, target) = (cluster.clone(), view.summary.target.clone());
            return vec![Effect::Gate(match view.summary.kind {
                RolloutKind::TalosUpgrade => MutatingAction::UpgradeTalos { cluster, target },
                RolloutKind::KubernetesUpgrade => {
                    MutatingAction::UpgradeKubernetes { cluster, target }
                }
            })];
        }
        Action::AbortRollout if view.running => {
            view.confirm_abort = true;
            state.message = Some(Message::warn(
                "abort after the current node? y aborts, any other key goes on",
            ));
        }
        Action::ConfirmAbort if view.running => {
            view.abort_requested = true;
            state.message = Some(Message::warn(
                "aborting: the node in progress finishes, no next node starts",
            ));
            return control(RolloutControl::Abort);
        }
        Action::PauseRollout | Action::ResumeRollout | Action::AbortRollout => {
            state.message = Some(Message::warn(why_not(view, &action)));
        }
        Action::OpenUpgrade(target) if !view.unfinished() => return open_upgrade(state, target),
        Action::OpenKubernetesUpgrade(target) if !view.unfinished() => {
            return open_plan::<Kubernetes>(state, target);
        }
        Action::Back => state.screen = Screen::Cluster(Pane::Nodes),
        Action::OpenHelp => state.overlay = Some(Overlay::Help { scroll: 0 }),
        Action::OpenCommandLine => state.open_input(InputKind::Command, String::new()),
        _ => {}
    }
    Vec::new()
}

/// Why pause, resume or abort does nothing to `view` now.
fn why_not(view: &RolloutView, action: &Action) -> String {
    if !view.running {
        let word = match action {
            Action::PauseRollout => "pause",
            Action::ResumeRollout => "resume",
            _ => "abort",
        };
        return format!("this rollout ended: nothing to {word} (u plans another)");
    }
    match action {
        _ if view.abort_requested => "aborting already: no next node starts".to_string(),
        Action::PauseRollout => match view.pausing_after() {
            Some(node) => format!("pausing after {node} already; r resumes"),
            None => "paused already; r resumes".to_string(),
        },
        Action::ResumeRollout => "not paused: Space pauses after the current node".to_string(),
        _ => "aborting already".to_string(),
    }
}

/// Folds a runner's event; returns whether the screen may show something new.
pub fn on_rollout_event(state: &mut AppState, event: RolloutEvent) -> bool {
    let cluster = event.cluster().to_string();
    match state.rollouts.get_mut(&cluster) {
        Some(view) => {
            let ends = matches!(event, RolloutEvent::Finished { .. });
            view.apply(event, state.zone, state.wall_clock);
            if let Some(outcome) = view.summary.outcome.as_ref().filter(|_| ends) {
                state.message = Some(ended_message(&cluster, outcome));
            }
        }
        None => {
            let RolloutEvent::Started(summary) = event else {
                return false;
            };
            let mut view = RolloutView::new(summary);
            view.running = true;
            state.rollouts.insert(cluster.clone(), view);
        }
    }
    on_status_change(state, &cluster);
    true
}

/// What the message line says when a rollout ends (whatever it said before,
/// such as the plan's "acknowledged; s starts", is stale by then).
fn ended_message(cluster: &str, outcome: &RolloutOutcome) -> Message {
    let text = format!(
        "rollout of {cluster} {}",
        super::rollout::outcome_text(outcome)
    );
    match outcome {
        RolloutOutcome::Completed => Message::info(text),
        RolloutOutcome::Aborted => Message::warn(text),
        RolloutOutcome::Halted(_) => Message::error(text),
    }
}

/// A journal found at startup: shown, and resumable when it did not end.
pub fn on_journal(state: &mut AppState, summary: RolloutSummary) {
    let cluster = summary.cluster.clone();
    if state.rollouts.get(&cluster).is_some_and(|r| r.running) {
        return;
    }
    let view = RolloutView::from_journal(summary);
    if view.resumable {
        state.message = Some(Message::warn(format!(
            "a rollout of {cluster} did not finish: :ctx {cluster} then :rollout shows it, r resumes"
        )));
    }
    state.rollouts.insert(cluster, view);
}

impl PlanKeys for TalosOs {
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
