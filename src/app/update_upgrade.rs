//! The update step for the upgrade plan screen and the progress pane: plan
//! edits, guards re-evaluated on every status change, Start through the
//! dispatcher, folding the runner's events, pause / resume / abort, and a
//! journal found at startup. Pure, like the rest of update.
use super::action::{Action, Effect, PlannedRollout, StartRollout};
use super::plan_keys::{cycled, explain_selected, moved, other_focus, shared_key, take_ack};
use super::rollout::RolloutView;
use super::state::{AppState, InputKind, Message, Overlay, Pane, Screen, TableKind};
use super::tables;
use super::update::open_input;
use super::update_panes::open_cluster;
use super::upgrade_plan::{PlanEdit, PlanFocus, PlanScreen, explain_step};
use crate::approval::{ApprovedAction, MutatingAction};
use crate::rollout::{
    RolloutControl, RolloutEvent, RolloutKind, RolloutSummary, StepPhase, StepProgress,
};
use crate::upgrade::{Direction, RolloutInProgress, StepState, UpgradePlan};

/// Most workers upgraded at once that the plan screen offers.
const MAX_PARALLEL: usize = 10;

/// A rollout on `cluster` the plan must wait for: this console's own
/// unfinished one, else another console's, from its rollout Lease.
pub fn other_rollout(state: &AppState, cluster: &str) -> Option<RolloutInProgress> {
    let own = state
        .rollouts
        .get(cluster)
        .filter(|r| r.unfinished())
        .map(RolloutView::in_progress);
    own.or_else(|| {
        state
            .fleet
            .cluster(cluster)
            .and_then(|live| live.status.other_rollout(&state.identity))
    })
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
        "p pauses, A aborts"
    };
    state.message = Some(Message::info(format!(
        "a rollout of {cluster} has not ended: {hint}"
    )));
    state.screen = Screen::Rollout;
    true
}

/// `u`, `:upgrade [vX.Y.Z]`: the plan, or the progress pane while this
/// console's rollout of the cluster has not ended.
pub fn open_upgrade(state: &mut AppState, target: Option<String>) {
    let Some(cluster) = usable_cluster(state) else {
        return;
    };
    if unfinished_rollout_shown(state, &cluster) {
        return;
    }
    let Some(live) = state.fleet.cluster(&cluster).filter(|l| l.has_data()) else {
        state.message = Some(Message::warn(format!(
            "no status for {cluster} yet: wait for the first poll (r refreshes)"
        )));
        return;
    };
    match PlanScreen::open(&live.status, target.as_deref()) {
        Ok(mut plan) => {
            plan.evaluate(&live.status, other_rollout(state, &cluster).as_ref());
            state.upgrade = Some(plan);
            state.screen = Screen::UpgradePlan;
            state.message = None;
        }
        Err(e) => state.message = Some(Message::warn(e)),
    }
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

/// Re-evaluates the open plan's guards when `cluster`'s status changed.
/// Returns whether anything the plan shows changed.
pub fn on_status_change(state: &mut AppState, cluster: &str) -> bool {
    let kube = super::update_kube_plan::on_kube_status_change(state, cluster);
    let other = other_rollout(state, cluster);
    let Some(plan) = state.upgrade.as_mut().filter(|p| p.cluster == cluster) else {
        return kube;
    };
    let Some(live) = state.fleet.cluster(cluster) else {
        return kube;
    };
    let before = plan.guards.clone();
    plan.evaluate(&live.status, other.as_ref());
    kube || plan.guards != before
}

/// Rebuilds the open plan from live status (after a target or option change).
fn rebuild(state: &mut AppState) {
    let Some(cluster) = state.upgrade.as_ref().map(|p| p.cluster.clone()) else {
        return;
    };
    let other = other_rollout(state, &cluster);
    if let (Some(plan), Some(live)) = (state.upgrade.as_mut(), state.fleet.cluster(&cluster)) {
        plan.rebuild(&live.status);
        plan.evaluate(&live.status, other.as_ref());
    }
}

fn evaluate(state: &mut AppState) {
    if let Some(cluster) = state.upgrade.as_ref().map(|p| p.cluster.clone()) {
        on_status_change(state, &cluster);
    }
}

/// Keys on the plan screen.
pub fn on_plan(state: &mut AppState, action: Action) -> Vec<Effect> {
    let Some(plan) = state.upgrade.as_mut() else {
        state.screen = Screen::Cluster(Pane::Nodes);
        return Vec::new();
    };
    match action {
        Action::MoveUp | Action::MoveDown | Action::MoveFirst | Action::MoveLast => {
            move_selection(plan, &action)
        }
        Action::NextPane => plan.focus = other_focus(plan.focus),
        Action::NextTarget | Action::PreviousTarget => {
            if let Some(t) = cycled(&plan.targets, &plan.target, &action) {
                plan.target = t.clone();
            }
            rebuild(state);
        }
        Action::EditImage => {
            let text = match &plan.plan {
                Ok(p) => p.image.clone(),
                Err(_) => plan.image.clone().unwrap_or_default(),
            };
            open_input(state, InputKind::Image, text);
        }
        Action::ResetImage => {
            plan.image = None;
            rebuild(state);
        }
        Action::ToggleStage => {
            plan.options.stage = !plan.options.stage;
            rebuild(state);
        }
        Action::TogglePreserve if plan.preserve_applies => {
            plan.options.preserve = !plan.options.preserve;
            rebuild(state);
        }
        Action::TogglePreserve => {
            state.message = Some(Message::info(
                "preserve only matters below Talos 1.8; every node here keeps EPHEMERAL",
            ))
        }
        Action::MoreParallel | Action::LessParallel => {
            let n = plan.options.max_parallel;
            plan.options.max_parallel = if matches!(action, Action::MoreParallel) {
                (n + 1).min(MAX_PARALLEL)
            } else {
                n.saturating_sub(1).max(1)
            };
            rebuild(state);
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
            evaluate(state);
        }
        Action::ToggleStep => {
            toggle_step(state);
            evaluate(state);
        }
        Action::Explain => explain(state),
        Action::StartUpgrade => return start(state),
        Action::Back => {
            state.upgrade = None;
            state.screen = Screen::Cluster(Pane::Nodes);
        }
        action @ (Action::Acknowledge
        | Action::Refresh
        | Action::OpenHelp
        | Action::OpenCommandLine) => {
            let (cluster, needs_ack) = (plan.cluster.clone(), plan.missing_ack().is_some());
            return shared_key(state, &action, cluster, needs_ack);
        }
        _ => {}
    }
    Vec::new()
}

fn move_selection(plan: &mut PlanScreen, action: &Action) {
    let (len, i) = match plan.focus {
        PlanFocus::Nodes => (plan.steps().len(), plan.step_index()),
        PlanFocus::Guards => (plan.guards.len(), plan.guard_index()),
    };
    let Some(to) = moved(len, i, action) else {
        return;
    };
    match plan.focus {
        PlanFocus::Nodes => plan.step = plan.steps().get(to).map(|s| s.node.clone()),
        PlanFocus::Guards => plan.guard = plan.guards.get(to).map(|g| g.id),
    }
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

fn explain(state: &mut AppState) {
    let Some(plan) = state.upgrade.as_ref() else {
        return;
    };
    let (focus, guard, i) = (
        plan.focus,
        plan.guards.get(plan.guard_index()).cloned(),
        plan.step_index(),
    );
    let step = (focus == PlanFocus::Nodes).then(|| match &plan.plan {
        Ok(p) => p
            .steps
            .get(i)
            .map(|step| (step.node.clone(), explain_step(p, i))),
        Err(e) => Some(("no plan".to_string(), e.clone())),
    });
    explain_selected(state, focus, guard.as_ref(), step.flatten());
}

/// `s`: refused while a guard blocks; otherwise the dispatcher takes over.
fn start(state: &mut AppState) -> Vec<Effect> {
    let Some(plan) = state.upgrade.as_ref() else {
        return Vec::new();
    };
    if let Some(why) = plan.start_refused() {
        state.message = Some(Message::warn(format!("Start refused: {why}")));
        return Vec::new();
    }
    vec![Effect::Gate(MutatingAction::UpgradeTalos {
        cluster: plan.cluster.clone(),
        target: plan.target.to_string(),
    })]
}

/// Enter on the image field.
pub fn set_image(state: &mut AppState, text: &str) {
    let Some(plan) = state.upgrade.as_mut() else {
        return;
    };
    let text = text.trim();
    let default = crate::upgrade::default_installer_image(&plan.target);
    plan.image = (text != default).then(|| text.to_string());
    rebuild(state);
    if let Some(Err(e)) = state.upgrade.as_ref().map(|p| &p.plan) {
        state.message = Some(Message::error(e.clone()));
        if let Some(plan) = state.upgrade.as_mut() {
            plan.image = None;
        }
        rebuild(state);
    }
}

/// Enter on the acknowledgement field: kept only when it is the text asked for.
pub fn acknowledge(state: &mut AppState, text: &str) {
    if state.screen == Screen::KubernetesPlan {
        return super::update_kube_plan::acknowledge_kube(state, text);
    }
    let Some(plan) = state.upgrade.as_mut() else {
        return;
    };
    let Some(needed) = plan.missing_ack().map(String::from) else {
        return;
    };
    if take_ack(state, &needed, text)
        && let Some(plan) = state.upgrade.as_mut()
    {
        plan.acks.push(needed);
    }
}

/// The steps a fresh rollout of `plan` starts with, before the runner
/// reports: pending, and skipped where the plan skips.
fn placeholder(plan: &UpgradePlan) -> RolloutSummary {
    let label = format!("upgrade to {}", plan.target);
    let steps = plan
        .steps
        .iter()
        .map(|s| {
            let mut p = StepProgress::pending(&s.node, &label);
            match s.state {
                StepState::Upgrade => {}
                StepState::AlreadyOnTarget => {
                    p.phase = StepPhase::Skipped;
                    p.detail = "already on target".to_string();
                }
                StepState::LeftOut => {
                    p.phase = StepPhase::Skipped;
                    p.detail = "left out".to_string();
                }
            }
            p
        })
        .collect();
    RolloutSummary {
        cluster: plan.cluster.clone(),
        kind: RolloutKind::TalosUpgrade,
        target: plan.target.to_string(),
        holder: String::new(),
        steps,
        paused: false,
        outcome: None,
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
            return vec![Effect::NotRun {
                approved,
                why: "no runner for this action in this version".to_string(),
            }];
        }
    };
    let not_run = |why: String| {
        vec![Effect::NotRun {
            approved: approved.clone(),
            why,
        }]
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
            return not_run(format!("a rollout of {cluster} is already running here"));
        }
    }
    if kind == RolloutKind::KubernetesUpgrade {
        return super::update_kube_plan::start_approved_kube(state, approved, cluster, target);
    }
    evaluate(state);
    let Some(screen) = state
        .upgrade
        .as_ref()
        .filter(|p| p.cluster == cluster && p.target.to_string() == target)
    else {
        return not_run("the plan was closed or changed before it was confirmed".to_string());
    };
    if let Some(why) = screen.start_refused() {
        state.message = Some(Message::warn(format!("not started: {why}")));
        return not_run(why);
    }
    let Ok(plan) = screen.plan.clone() else {
        return not_run("there is no plan".to_string());
    };
    let acks = screen.acks.clone();
    let mut view = RolloutView::new(placeholder(&plan));
    view.running = true;
    view.push_log(format!("starting the upgrade of {cluster} to {target}"));
    state.rollouts.insert(cluster.clone(), view);
    state.upgrade = None;
    state.current = Some(cluster);
    state.screen = Screen::Rollout;
    vec![Effect::StartRollout(Box::new(StartRollout {
        approved,
        plan: PlannedRollout::Talos(plan),
        acks,
    }))]
}

/// Keys on the progress pane.
pub fn on_rollout(state: &mut AppState, action: Action) -> Vec<Effect> {
    let cluster = state.current.clone().unwrap_or_default();
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
    let control = |control| {
        vec![Effect::Control {
            cluster: cluster.clone(),
            control,
        }]
    };
    match action {
        Action::PauseRollout if view.running && !view.summary.paused => {
            view.pause_requested = true;
            state.message = Some(Message::info("pausing after the current node"));
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
            let why = if view.running {
                "not now"
            } else {
                "this rollout is not running"
            };
            state.message = Some(Message::info(why));
        }
        Action::OpenUpgrade(target) if !view.unfinished() => open_upgrade(state, target),
        Action::OpenKubernetesUpgrade(target) if !view.unfinished() => {
            return super::update_kube_plan::open_kube_upgrade(state, target);
        }
        Action::Back => state.screen = Screen::Cluster(Pane::Nodes),
        Action::OpenHelp => state.overlay = Some(Overlay::Help { scroll: 0 }),
        Action::OpenCommandLine => open_input(state, InputKind::Command, String::new()),
        _ => {}
    }
    Vec::new()
}

/// Folds a runner's event; returns whether the screen may show something new.
pub fn on_rollout_event(state: &mut AppState, event: RolloutEvent) -> bool {
    let cluster = event.cluster().to_string();
    match state.rollouts.get_mut(&cluster) {
        Some(view) => view.apply(event),
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

#[cfg(test)]
#[path = "update_upgrade_tests.rs"]
mod tests;
