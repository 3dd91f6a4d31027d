//! The CAPI-way upgrade's part of the update step: `u` / `U` on a cluster Cluster API owns open
//! the CAPI-way plan screen, the plan the event loop read is shown with its guards, its phases
//! have the move keys and `?` when focused, and the plan screens' one gate (`plan_keys`) takes
//! the rest; the approval goes to the one operation runner and its progress screen.
use super::action::{Action, Effect, not_run};
use super::actions::ActionRun;
use super::capi_upgrade::{CapiPlanRead, CapiPlanRequest, CapiUpgradeScreen};
use super::message::Message;
use super::plan_keys::{
    explain_selected, guard_reading, moved, not_approved, other_focus, plan_key,
};
use super::plan_screen::{GuardedPlan, PlanFocus, PlanGuards, PlanKind};
use super::screen::{Pane, Screen};
use super::state::AppState;
use crate::approval::ApprovedAction;
use crate::capi::CapiOwner;
use crate::fleet::ClusterStatus;
use crate::upgrade::capi::CapiProduct;

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
    screen.read_guards(&guard_reading(state, &screen.request.cluster));
    if state.screen == Screen::CapiUpgrade {
        state.message = None;
    }
    state.capi_upgrade = Some(screen);
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
    let phase_focused = screen.focus == PlanFocus::Nodes;
    match action {
        Action::MoveUp
        | Action::MoveDown
        | Action::MoveFirst
        | Action::MoveLast
        | Action::PageUp
        | Action::PageDown
            if phase_focused =>
        {
            if let Some(to) = moved(phases, screen.phase, &action, page) {
                screen.phase = to;
            }
        }
        Action::NextPane => screen.focus = other_focus(screen.focus),
        Action::Explain if phase_focused => explain_phase(state),
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
        other => return plan_key(state, &other).unwrap_or_default(),
    }
    Vec::new()
}

/// `?` on the phases: what the selected phase does.
fn explain_phase(state: &mut AppState) {
    let Some(screen) = state.capi_upgrade.as_ref() else {
        return;
    };
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
    explain_selected(state, PlanFocus::Nodes, None, step);
}

/// The dispatcher approved a CAPI-way upgrade: run on the console's one operation runner when
/// it is the plan on screen, no other operation runs here and no guard blocks now; the
/// progress screen follows its phases.
pub fn on_approved(state: &mut AppState, approved: ApprovedAction) -> Vec<Effect> {
    if let Some(cluster) = state
        .capi_upgrade
        .as_ref()
        .map(|s| s.request.cluster.clone())
    {
        super::plan_keys::read_guards(state, Some(&cluster));
    }
    if let Some(refused) = not_approved(state, Screen::CapiUpgrade, &approved) {
        return refused;
    }
    if state.actions.running() {
        return not_run(&approved, "an action already runs from this console");
    }
    let Some(screen) = state.capi_upgrade.as_ref() else {
        return Vec::new();
    };
    let Some(Ok(plan)) = screen.plan().cloned() else {
        return Vec::new();
    };
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
