//! Scaling the CAPI way in the update step: `s` on `:capi` asks for the new replica count
//! (digits only), Enter opens its plan on the action screen (read by the event loop with
//! `prepare_scale`, as `taloscope scale` does), Start goes through the action screen's
//! dispatcher path, and the run shows on the one progress screen. Pure.
use super::action::{Action, Effect};
use super::actions::{ActionPlan, ActionPlanScreen, ActionRun};
use super::capi_scale::{CapiScaleAsk, CapiScalePlan, CapiScaleRun, MAX_DIGITS};
use super::message::Message;
use super::screen::Screen;
use super::state::{AppState, InputKind, InputLine};
use crate::capi_scale::PreparedScale;

/// `s` on the `:capi` screen: the replica count of the selected object (or the control
/// plane's) is asked for; the progress instead while an action runs here.
pub fn ask(state: &mut AppState) -> Vec<Effect> {
    if super::update_actions::shows_running(state) {
        return Vec::new();
    }
    match super::queries::target_of(state) {
        Ok(target) => {
            state.open_input(InputKind::ScaleReplicas, String::new());
            state.capi_scale.asking = Some(target);
        }
        Err(why) => state.message = Some(Message::warn(format!("nothing to scale: {why}"))),
    }
    Vec::new()
}

/// Keys while the replica count is typed: digits (at most [`MAX_DIGITS`]), Backspace,
/// Enter for the plan, Esc to cancel.
pub fn on_input(state: &mut AppState, mut line: InputLine, action: Action) -> Vec<Effect> {
    let digits = |text: &str| text.chars().all(|c| c.is_ascii_digit());
    match action {
        Action::Back => {
            state.capi_scale.asking = None;
            return Vec::new();
        }
        Action::Submit => return submit(state, &line.text),
        Action::Insert(c) if c.is_ascii_digit() && line.text.len() < MAX_DIGITS => {
            line.text.push(c)
        }
        Action::Paste(text) if digits(text.trim()) => {
            line.text = text.trim().chars().take(MAX_DIGITS).collect();
        }
        Action::DeleteBack => {
            line.text.pop();
        }
        Action::Insert(_) | Action::Paste(_) => {
            state.message = Some(Message::warn("the replica count takes digits only"));
        }
        _ => {}
    }
    state.input = Some(line);
    Vec::new()
}

/// Enter on the replica count: the plan screen, read by the event loop.
fn submit(state: &mut AppState, text: &str) -> Vec<Effect> {
    let Some(target) = state.capi_scale.asking.take() else {
        return Vec::new();
    };
    let Ok(replicas) = text.parse::<u32>() else {
        state.message = Some(Message::warn(format!(
            "no replica count typed: {} stays at {}",
            target.object, target.replicas
        )));
        return Vec::new();
    };
    let ask = CapiScaleAsk {
        cluster: target.cluster.clone(),
        request: target.request(replicas),
    };
    state.actions.back = Some(Screen::Capi);
    let cluster = target.cluster.clone();
    let plan = ActionPlan::CapiScale(Box::new(CapiScalePlan {
        request: ask.request.clone(),
        target,
        read: None,
    }));
    state.actions.plan = Some(ActionPlanScreen::new(&cluster, plan));
    state.screen = Screen::Action;
    state.message = Some(Message::info(format!(
        "reading the Cluster API tree and {} for the plan",
        ask.cluster
    )));
    vec![Effect::PlanCapiScale(Box::new(ask))]
}

/// The plan `prepare_scale` read for `cluster`, with its guards; ignored when another plan
/// is on screen.
pub fn planned(state: &mut AppState, cluster: &str, read: Result<PreparedScale, String>) {
    let Some(screen) = state.actions.plan.as_mut().filter(|p| p.cluster == cluster) else {
        return;
    };
    let ActionPlan::CapiScale(plan) = &mut screen.plan else {
        return;
    };
    let guards = read.as_ref().map(|p| p.guards.clone()).unwrap_or_default();
    plan.read = Some(read);
    screen.guards.set(guards);
    state.message = None;
}

/// `r` on a scale's plan: read it again.
pub fn refresh(state: &AppState) -> Option<Effect> {
    let screen = state.actions.plan.as_ref()?;
    let ActionPlan::CapiScale(plan) = &screen.plan else {
        return None;
    };
    Some(Effect::PlanCapiScale(Box::new(CapiScaleAsk {
        cluster: screen.cluster.clone(),
        request: plan.request.clone(),
    })))
}

/// What runs for the approved scale on screen.
pub fn run_of(plan: &CapiScalePlan, acks: &[String]) -> Result<ActionRun, String> {
    let prepared = plan
        .prepared()
        .ok_or_else(|| super::capi_scale::unready(plan).unwrap_or_default())?;
    Ok(ActionRun::CapiScale(Box::new(CapiScaleRun {
        plan: prepared.plan.clone(),
        acks: acks.to_vec(),
    })))
}

#[cfg(test)]
#[path = "update_capi_scale_tests.rs"]
mod tests;
