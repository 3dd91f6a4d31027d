//! The CAPI-way upgrade's part of the update step: `u` / `U` on a cluster Cluster API owns open
//! the CAPI-way plan screen, the plan the event loop read is shown with its guards
//! (`capi_read_guards`), and Start goes through the dispatcher to the one operation runner and
//! its progress screen.
use super::action::{Action, Effect, not_run};
use super::actions::ActionRun;
use super::capi_upgrade::{CapiPlanRead, CapiPlanRequest, CapiUpgradeScreen};
use super::message::Message;
use super::plan_keys::{
    acknowledge_into, explain_selected, move_guard, moved, other_focus, shared_key,
};
use super::plan_screen::{PlanFocus, PlanGuards, PlanKind};
use super::screen::{Pane, Screen};
use super::state::AppState;
use super::update_upgrade::other_rollout;
use crate::approval::ApprovedAction;
use crate::capi::CapiOwner;
use crate::fleet::ClusterStatus;
use crate::upgrade::capi::{CapiProduct, capi_action, capi_read_guards};

fn evaluate_screen(screen: &mut CapiUpgradeScreen, state: &AppState) {
    let Some(CapiPlanRead {
        plan: Ok(plan),
        facts,
        vm_templates,
        ..
    }) = &screen.read
    else {
        screen.guards.shown.clear();
        return;
    };
    let other = other_rollout(state, &screen.request.cluster);
    let read = facts.as_ref().map(|(t, s)| (t, s)).map_err(String::as_str);
    let guards = capi_read_guards(plan, read, other.as_ref(), vm_templates);
    screen.guards.set(guards);
}

/// `u` / `U` on `cluster`, which `owner` owns: the CAPI-way plan to the target the in-place
/// plan would choose (the one named, else its default), read by the event loop.
pub fn open<K: PlanKind>(
    state: &mut AppState,
    cluster: String,
    owner: CapiOwner,
    status: &ClusterStatus,
    named: Option<&str>,
) -> Vec<Effect> {
    let chosen = match K::targets(status, named) {
        Ok((_, chosen)) => chosen,
        Err(e) => {
            state.message = Some(Message::warn(e));
            return Vec::new();
        }
    };
    let version = format!("v{}", chosen.to_string().trim_start_matches('v'));
    let product = CapiProduct::of(K::IN_PLACE);
    let target = match product {
        CapiProduct::Kubernetes => version.trim_start_matches('v').to_string(),
        CapiProduct::TalosOs => version.clone(),
    };
    let request = CapiPlanRequest {
        cluster: cluster.clone(),
        owner: owner.clone(),
        product,
        version,
        target,
    };
    state.capi_upgrade = Some(CapiUpgradeScreen {
        request: request.clone(),
        read: None,
        guards: PlanGuards::default(),
        focus: PlanFocus::Nodes,
        phase: 0,
    });
    state.screen = Screen::CapiUpgrade;
    state.message = Some(Message::info(format!(
        "{cluster} is owned by Cluster API ({owner}): reading the plan of the CAPI way"
    )));
    vec![Effect::PlanCapiUpgrade(Box::new(request))]
}

/// The event loop read the plan: shown with its guards, when it is the plan on screen.
pub fn planned(state: &mut AppState, read: CapiPlanRead) {
    let Some(mut screen) = state
        .capi_upgrade
        .take_if(|s| s.request == read.request && s.read.is_none())
    else {
        return;
    };
    screen.read = Some(read);
    evaluate_screen(&mut screen, state);
    if state.screen == Screen::CapiUpgrade {
        state.message = None;
    }
    state.capi_upgrade = Some(screen);
}

/// Re-evaluates the open plan's guards (another rollout seen, an acknowledgement typed).
pub fn evaluate(state: &mut AppState) {
    if let Some(mut screen) = state.capi_upgrade.take() {
        evaluate_screen(&mut screen, state);
        state.capi_upgrade = Some(screen);
    }
}

/// Re-evaluates the open plan's guards when `cluster`'s status changed (another console's
/// rollout Lease seen); returns whether they changed.
pub fn on_status_change(state: &mut AppState, cluster: &str) -> bool {
    let Some(before) = state
        .capi_upgrade
        .as_ref()
        .filter(|s| s.request.cluster == cluster)
        .map(|s| s.guards.shown.clone())
    else {
        return false;
    };
    evaluate(state);
    state
        .capi_upgrade
        .as_ref()
        .is_some_and(|s| s.guards.shown != before)
}

/// Keys on the CAPI-way plan screen.
pub fn on_key(state: &mut AppState, action: Action) -> Vec<Effect> {
    let page = state.page();
    let Some(screen) = state.capi_upgrade.as_mut() else {
        state.screen = Screen::Cluster(Pane::Nodes);
        return Vec::new();
    };
    let phases = match screen.plan() {
        Some(Ok(plan)) => plan.phases.len(),
        _ => 0,
    };
    match action {
        Action::MoveUp
        | Action::MoveDown
        | Action::MoveFirst
        | Action::MoveLast
        | Action::PageUp
        | Action::PageDown => match screen.focus {
            PlanFocus::Nodes => {
                if let Some(to) = moved(phases, screen.phase, &action, page) {
                    screen.phase = to;
                }
            }
            PlanFocus::Guards => move_guard(&mut screen.guards, &action, page),
        },
        Action::NextPane => screen.focus = other_focus(screen.focus),
        Action::Explain => explain(state),
        Action::StartPlan => return start(state),
        Action::Refresh => {
            let request = screen.request.clone();
            screen.read = None;
            screen.guards.shown.clear();
            state.message = Some(Message::info(format!(
                "reading the plan of {} again",
                request.cluster
            )));
            return vec![Effect::PlanCapiUpgrade(Box::new(request))];
        }
        Action::Back => {
            state.capi_upgrade = None;
            state.screen = Screen::Cluster(Pane::Nodes);
        }
        action @ (Action::Acknowledge | Action::OpenHelp | Action::OpenCommandLine) => {
            let (cluster, needs_ack) = (
                screen.request.cluster.clone(),
                screen.guards.missing_ack().is_some(),
            );
            return shared_key(state, &action, cluster, needs_ack);
        }
        _ => {}
    }
    Vec::new()
}

/// `?`: the selected guard, or what the selected phase does.
fn explain(state: &mut AppState) {
    let Some(screen) = state.capi_upgrade.as_ref() else {
        return;
    };
    let guard = screen
        .guards
        .selected
        .and(screen.guards.selected_guard())
        .cloned();
    let step = match screen.plan() {
        Some(Ok(plan)) => plan.phases.get(screen.phase).map(|p| {
            let machines = if p.replace.is_empty() {
                "none: every Machine already runs the target".to_string()
            } else {
                p.replace.join(", ")
            };
            let text = if p.on_delete {
                format!(
                    "{}\n\nrolloutStrategy OnDelete: the provider replaces a Machine only once it \
                     is deleted. taloscope deletes them one at a time, each once every Machine is \
                     Ready and every etcd member healthy; the provider then creates its \
                     replacement. In this order: {machines}.",
                    p.patch_text(&plan.version)
                )
            } else {
                format!(
                    "{}\n\nThen the provider replaces its Machines one at a time (maxSurge 1): a new \
                     Machine is created, its node joins and becomes Ready, then the old Machine is \
                     deleted{}. In this order: {machines}.",
                    p.patch_text(&plan.version),
                    if p.object == crate::upgrade::capi::PhaseObject::TalosControlPlane {
                        " after its etcd member leaves; etcd must stay healthy throughout"
                    } else {
                        ""
                    }
                )
            };
            (p.label(), text)
        }),
        Some(Err(e)) => Some(("no plan".to_string(), e.clone())),
        None => None,
    };
    let focus = screen.focus;
    explain_selected(state, focus, guard.as_ref(), step);
}

/// `s`: refused while a guard blocks; otherwise the dispatcher asks for the cluster's name.
fn start(state: &mut AppState) -> Vec<Effect> {
    let Some(screen) = state.capi_upgrade.as_ref() else {
        return Vec::new();
    };
    if let Some(why) = screen.start_refused() {
        state.message = Some(Message::warn(format!("Start refused: {why}")));
        return Vec::new();
    }
    match screen.plan() {
        Some(Ok(plan)) => vec![Effect::Gate(capi_action(plan))],
        _ => Vec::new(),
    }
}

/// Enter on the acknowledgement field: kept only when it is the text asked for.
pub fn acknowledge(state: &mut AppState, text: &str) {
    acknowledge_into(state, text, |state| {
        state.capi_upgrade.as_mut().map(|s| &mut s.guards)
    });
    evaluate(state);
}

/// The dispatcher approved a CAPI-way upgrade: run on the console's one operation runner when
/// it is the plan on screen, no other operation runs here and no guard blocks now; the
/// progress screen follows its phases.
pub fn on_approved(state: &mut AppState, approved: ApprovedAction) -> Vec<Effect> {
    evaluate(state);
    let Some(screen) = state.capi_upgrade.as_ref() else {
        return not_run(
            &approved,
            "the plan was closed before it was confirmed".to_string(),
        );
    };
    let plan = match screen.plan() {
        Some(Ok(plan)) if capi_action(plan) == *approved.action() => plan.clone(),
        _ => {
            return not_run(
                &approved,
                "the plan changed before it was confirmed".to_string(),
            );
        }
    };
    if state.actions.running() {
        return not_run(&approved, "an action already runs from this console");
    }
    if let Some(why) = screen.start_refused() {
        state.message = Some(Message::warn(format!("not started: {why}")));
        return not_run(&approved, why);
    }
    let acks = screen.guards.acks.clone();
    let run = ActionRun::CapiUpgrade(Box::new(plan));
    let what = approved.action().describe();
    super::update_progress::start(state, &approved, &run, &what);
    state.capi_upgrade = None;
    state.screen = Screen::Action;
    state.message = Some(Message::info(format!("{what}: started")));
    vec![Effect::RunAction {
        approved,
        run: Box::new(run),
        acks,
    }]
}

#[cfg(test)]
#[path = "update_capi_upgrade_tests.rs"]
mod tests;
