//! The update step for the Kubernetes upgrade plan screen: open it
//! (`:upgrade-k8s`, `U`), targets and pre-pull, the removed-API count asked of
//! the event loop and folded back, guards on every status change, and Start
//! through the dispatcher. The progress pane and the journal are shared with
//! the Talos upgrade (update_upgrade). Pure.
use super::action::{Action, Effect, PlannedRollout, RemovedApisCounted, StartRollout};
use super::kube_plan::{KubePlanScreen, explain_kube_step};
use super::plan_keys::{cycled, explain_selected, moved, other_focus, shared_key, take_ack};
use super::rollout::RolloutView;
use super::state::{AppState, Message, Pane, Screen};
use super::update_upgrade::{other_rollout, unfinished_rollout_shown, usable_cluster};
use super::upgrade_plan::PlanFocus;
use crate::approval::{ApprovedAction, MutatingAction};
use crate::rollout::{RolloutKind, RolloutSummary};
use crate::upgrade::kubernetes::{KubernetesUpgradePlan, initial_steps, target_text};

/// `U`, `:upgrade-k8s [VERSION]`: the Kubernetes plan, or the progress pane
/// while this console's rollout of the cluster has not ended.
pub fn open_kube_upgrade(state: &mut AppState, target: Option<String>) -> Vec<Effect> {
    let Some(cluster) = usable_cluster(state) else {
        return Vec::new();
    };
    if unfinished_rollout_shown(state, &cluster) {
        return Vec::new();
    }
    let Some(live) = state.fleet.cluster(&cluster).filter(|l| l.has_data()) else {
        state.message = Some(Message::warn(format!(
            "no status for {cluster} yet: wait for the first poll (r refreshes)"
        )));
        return Vec::new();
    };
    match KubePlanScreen::open(&live.status, target.as_deref()) {
        Ok(mut plan) => {
            plan.evaluate(&live.status, other_rollout(state, &cluster).as_ref());
            state.kube_upgrade = Some(plan);
            state.screen = Screen::KubernetesPlan;
            state.message = None;
            count_if_needed(state)
        }
        Err(e) => {
            state.message = Some(Message::warn(e));
            Vec::new()
        }
    }
}

/// Asks the event loop to count removed-API objects when the plan on screen
/// has no count yet (once per plan).
fn count_if_needed(state: &mut AppState) -> Vec<Effect> {
    let Some(screen) = state.kube_upgrade.as_mut() else {
        return Vec::new();
    };
    let Some(plan) = screen.needs_count().cloned() else {
        return Vec::new();
    };
    screen.counting();
    vec![Effect::CountRemovedApis(Box::new(plan))]
}

/// The removed-API count arrived.
pub fn on_removed_apis(state: &mut AppState, counted: RemovedApisCounted) {
    let Some(screen) = state
        .kube_upgrade
        .as_mut()
        .filter(|p| p.cluster == counted.cluster)
    else {
        return;
    };
    screen.counted(&counted.from, &counted.target, counted.result);
    on_kube_status_change(state, &counted.cluster);
}

/// Re-evaluates the open Kubernetes plan when `cluster`'s status changed.
pub fn on_kube_status_change(state: &mut AppState, cluster: &str) -> bool {
    let other = other_rollout(state, cluster);
    let Some(plan) = state.kube_upgrade.as_mut().filter(|p| p.cluster == cluster) else {
        return false;
    };
    let Some(live) = state.fleet.cluster(cluster) else {
        return false;
    };
    let before = plan.guards.clone();
    plan.evaluate(&live.status, other.as_ref());
    plan.guards != before
}

/// Makes the plan again (a new target or pre-pull), and asks for its count.
fn rebuild(state: &mut AppState) -> Vec<Effect> {
    let Some(cluster) = state.kube_upgrade.as_ref().map(|p| p.cluster.clone()) else {
        return Vec::new();
    };
    if let (Some(plan), Some(live)) = (state.kube_upgrade.as_mut(), state.fleet.cluster(&cluster)) {
        plan.rebuild(&live.status);
    }
    on_kube_status_change(state, &cluster);
    count_if_needed(state)
}

/// Keys on the Kubernetes plan screen.
pub fn on_kube_plan(state: &mut AppState, action: Action) -> Vec<Effect> {
    let Some(plan) = state.kube_upgrade.as_mut() else {
        state.screen = Screen::Cluster(Pane::Versions);
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
            return rebuild(state);
        }
        Action::TogglePrePull => {
            plan.pre_pull = !plan.pre_pull;
            return rebuild(state);
        }
        Action::Explain => explain(state),
        Action::StartUpgrade => return start(state),
        Action::Back => {
            state.kube_upgrade = None;
            state.screen = Screen::Cluster(Pane::Versions);
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

fn move_selection(plan: &mut KubePlanScreen, action: &Action) {
    let (len, i) = match plan.focus {
        PlanFocus::Nodes => (plan.steps_len(), plan.step),
        PlanFocus::Guards => (plan.guards.len(), plan.guard_index()),
    };
    let Some(to) = moved(len, i, action) else {
        return;
    };
    match plan.focus {
        PlanFocus::Nodes => plan.step = to,
        PlanFocus::Guards => plan.guard = plan.guards.get(to).map(|g| g.id),
    }
}

fn explain(state: &mut AppState) {
    let Some(plan) = state.kube_upgrade.as_ref() else {
        return;
    };
    let (focus, guard, i) = (
        plan.focus,
        plan.guards.get(plan.guard_index()).cloned(),
        plan.step,
    );
    let step = (focus == PlanFocus::Nodes).then(|| match &plan.plan {
        Ok(p) => p.steps.get(i).map(|step| {
            (
                format!("{} on {}", step.component.as_str(), step.node),
                explain_kube_step(p, i),
            )
        }),
        Err(e) => Some(("no plan".to_string(), e.clone())),
    });
    explain_selected(state, focus, guard.as_ref(), step.flatten());
}

/// `s`: refused while a guard blocks; otherwise the dispatcher takes over.
fn start(state: &mut AppState) -> Vec<Effect> {
    let Some(plan) = state.kube_upgrade.as_ref() else {
        return Vec::new();
    };
    if let Some(why) = plan.start_refused() {
        state.message = Some(Message::warn(format!("Start refused: {why}")));
        return Vec::new();
    }
    vec![Effect::Gate(MutatingAction::UpgradeKubernetes {
        cluster: plan.cluster.clone(),
        target: plan.target_text(),
    })]
}

/// Enter on the acknowledgement field of the Kubernetes plan.
pub fn acknowledge_kube(state: &mut AppState, text: &str) {
    let Some(plan) = state.kube_upgrade.as_mut() else {
        return;
    };
    let Some(needed) = plan.missing_ack().map(String::from) else {
        return;
    };
    let cluster = plan.cluster.clone();
    if take_ack(state, &needed, text) {
        if let Some(plan) = state.kube_upgrade.as_mut() {
            plan.acks.push(needed);
        }
        on_kube_status_change(state, &cluster);
    }
}

/// The steps a fresh Kubernetes rollout starts with, before the runner
/// reports (the runner's own first report replaces them).
fn placeholder(plan: &KubernetesUpgradePlan) -> RolloutSummary {
    let steps = initial_steps(plan);
    RolloutSummary {
        cluster: plan.cluster.clone(),
        kind: RolloutKind::KubernetesUpgrade,
        target: target_text(plan),
        holder: String::new(),
        steps,
        paused: false,
        outcome: None,
    }
}

/// The dispatcher approved a Kubernetes upgrade of the plan on screen.
pub fn start_approved_kube(
    state: &mut AppState,
    approved: ApprovedAction,
    cluster: String,
    target: String,
) -> Vec<Effect> {
    let not_run = |why: String| {
        vec![Effect::NotRun {
            approved: approved.clone(),
            why,
        }]
    };
    on_kube_status_change(state, &cluster);
    let Some(screen) = state
        .kube_upgrade
        .as_ref()
        .filter(|p| p.cluster == cluster && p.target_text() == target.trim_start_matches('v'))
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
    view.push_log(format!(
        "starting the Kubernetes upgrade of {cluster} to {target}"
    ));
    state.rollouts.insert(cluster.clone(), view);
    state.kube_upgrade = None;
    state.current = Some(cluster);
    state.screen = Screen::Rollout;
    vec![Effect::StartRollout(Box::new(StartRollout {
        approved,
        plan: PlannedRollout::Kubernetes(plan),
        acks,
    }))]
}

#[cfg(test)]
#[path = "update_kube_plan_tests.rs"]
mod tests;
