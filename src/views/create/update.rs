//! The update step of creating a cluster: the wizard's fields, the plan asked of the CLI's own
//! planner, Start through the dispatcher, the fingerprint answers, and the runner's events
//! folded into the progress screen; an unfinished create's journal fills the wizard so its run
//! resumes. Pure: IO is asked for as effects and answered as events.
use super::action::{Action, Effect};
use super::actions::ActionRun;
use super::create::{
    CreateEffect, CreateField, CreateKey, CreateStage, CreateUpdate, CreateWizard,
    MAX_CONTROLPLANES, MAX_WORKERS,
};
use super::message::Message;
use super::plan_keys::{moved, not_approved, plan_key};
use super::plan_screen::{AskedPlan, PlanGuards};
use super::screen::Screen;
use super::state::{AppState, InputKind, Overlay};
use crate::approval::{ApprovedAction, MutatingAction};
use crate::cluster_lifecycle::{Delivery, offered_talos_releases};
use crate::operation::OperationKind;
use crate::operation::progress::OperationProgress;
use crate::operation::runner_events;

fn effect(e: CreateEffect) -> Vec<Effect> {
    vec![Effect::Create(Box::new(e))]
}

/// `n` on the fleet: the create running here, else a new wizard (the journals of killed runs
/// are read for it).
pub fn open(state: &mut AppState) -> Vec<Effect> {
    state.screen = Screen::Create;
    if state.create.running() {
        state.create.stage = CreateStage::Progress;
        state.message = Some(Message::info("a create is running here; its progress"));
        return Vec::new();
    }
    let providers: Vec<String> = state.provision.config.providers.keys().cloned().collect();
    if providers.is_empty() {
        state.message = Some(Message::error(format!(
            "{}: no providers: add one under providers: (kind: opennebula or oneflow)",
            state.provision.config.file_label()
        )));
    }
    state.create.wizard = Some(CreateWizard::new(providers, offered_talos_releases()));
    state.create.stage = CreateStage::Form;
    effect(CreateEffect::ReadUnfinished)
}

/// The keys of the create screen, by stage.
pub fn on_key(state: &mut AppState, action: Action) -> Vec<Effect> {
    match state.create.stage {
        CreateStage::Form => on_form(state, action),
        CreateStage::Plan => on_plan(state, action),
        CreateStage::Progress => on_progress(state, action),
    }
}

fn on_form(state: &mut AppState, action: Action) -> Vec<Effect> {
    let Some(w) = state.create.wizard.as_mut() else {
        state.screen = Screen::Fleet;
        return Vec::new();
    };
    let i = CreateField::ALL
        .iter()
        .position(|f| *f == w.field)
        .unwrap_or(0);
    let mut changed = true;
    match action {
        Action::MoveDown | Action::MoveUp | Action::MoveFirst | Action::MoveLast => {
            if let Some(to) = moved(CreateField::ALL.len(), i, &action, 1) {
                w.field = CreateField::ALL[to];
            }
            changed = false;
        }
        Action::Create(CreateKey::Edit) => return edit(state),
        Action::Create(key @ (CreateKey::NextValue | CreateKey::PreviousValue)) => {
            let forward = key == CreateKey::NextValue;
            match w.field {
                CreateField::Provider if !w.providers.is_empty() => {
                    let n = w.providers.len();
                    w.provider = (w.provider + if forward { 1 } else { n - 1 }) % n;
                }
                CreateField::Talos if !w.talos_offered.is_empty() => {
                    let offered = &w.talos_offered;
                    let n = offered.len();
                    let at = offered.iter().position(|t| *t == w.talos);
                    let to = match at {
                        Some(at) => (at + if forward { 1 } else { n - 1 }) % n,
                        None => 0,
                    };
                    w.talos = offered[to].clone();
                }
                CreateField::Delivery => {
                    w.delivery = match w.delivery {
                        Delivery::Maintenance => Delivery::UserData,
                        Delivery::UserData => Delivery::Maintenance,
                    }
                }
                CreateField::ControlPlanes | CreateField::Workers => count(w, forward),
                field if field.is_text() => return edit(state),
                _ => changed = false,
            }
        }
        Action::Create(key @ (CreateKey::More | CreateKey::Less)) => {
            if matches!(w.field, CreateField::ControlPlanes | CreateField::Workers) {
                count(w, key == CreateKey::More);
            } else {
                changed = false;
            }
        }
        Action::Create(CreateKey::MakePlan) => {
            w.asked += 1;
            w.plan = AskedPlan::Planning(w.asked);
            w.guards = PlanGuards::default();
            let (asked, request) = (w.asked, w.request());
            state.create.stage = CreateStage::Plan;
            return effect(CreateEffect::Plan {
                asked,
                request: Box::new(request),
            });
        }
        Action::Back => {
            state.create.wizard = None;
            state.screen = Screen::Fleet;
            return Vec::new();
        }
        Action::OpenHelp | Action::Explain => state.overlay = Some(Overlay::Help { scroll: 0 }),
        Action::OpenCommandLine => state.open_input(InputKind::Command, String::new()),
        _ => changed = false,
    }
    if changed && let Some(w) = state.create.wizard.as_mut() {
        forget_plan(w);
    }
    Vec::new()
}

fn count(w: &mut CreateWizard, more: bool) {
    let (value, min, max) = match w.field {
        CreateField::ControlPlanes => (&mut w.controlplanes, 1, MAX_CONTROLPLANES),
        _ => (&mut w.workers, 0, MAX_WORKERS),
    };
    *value = if more {
        (*value + 1).min(max)
    } else {
        value.saturating_sub(1).max(min)
    };
}

/// A field changed: the plan, its guards and their acknowledgements no longer hold.
fn forget_plan(w: &mut CreateWizard) {
    w.plan = AskedPlan::None;
    w.guards = PlanGuards::default();
}

/// `e` (or Left/Right) on a typed field: the input line holds its value.
fn edit(state: &mut AppState) -> Vec<Effect> {
    let Some(w) = state.create.wizard.as_ref() else {
        return Vec::new();
    };
    if !w.field.is_text() {
        state.message = Some(Message::info(format!(
            "{}: Left/Right change it",
            w.field.title()
        )));
        return Vec::new();
    }
    let text = w.text(w.field).to_string();
    state.open_input(InputKind::CreateField, text);
    Vec::new()
}

/// Enter on the input line: the focused field takes the text. A name with a killed run's
/// journal takes that run's request, so its run resumes.
pub fn submit_text(state: &mut AppState, text: &str) {
    let Some(w) = state.create.wizard.as_mut() else {
        return;
    };
    let field = w.field;
    if let Some(value) = w.text_mut(field) {
        *value = text.trim().to_string();
    }
    forget_plan(w);
    if field != CreateField::Name {
        return;
    }
    w.resuming = w.unfinished.iter().find(|u| u.cluster == w.name).cloned();
    if let Some(u) = w.resuming.clone() {
        w.take_request(&u.request);
        state.message = Some(Message::info(format!(
            "{} has a create journal: its request is filled in, and its run resumes",
            u.cluster
        )));
    }
}

fn on_plan(state: &mut AppState, action: Action) -> Vec<Effect> {
    if state.create.wizard.is_none() {
        state.screen = Screen::Fleet;
        return Vec::new();
    }
    match action {
        Action::Back => state.create.stage = CreateStage::Form,
        other => return plan_key(state, &other).unwrap_or_default(),
    }
    Vec::new()
}

fn on_progress(state: &mut AppState, action: Action) -> Vec<Effect> {
    let Some(p) = state.create.progress.as_mut() else {
        state.screen = Screen::Fleet;
        return Vec::new();
    };
    match action {
        Action::Create(key @ (CreateKey::Trust | CreateKey::Distrust)) => {
            let Some(ask) = p.asking.take() else {
                state.message = Some(Message::info("no fingerprint waits for an answer"));
                return Vec::new();
            };
            let trust = key == CreateKey::Trust;
            let answer = if trust { "confirmed" } else { "refused" };
            let now = state.wall_clock;
            p.say(
                now,
                format!("{}: maintenance certificate {answer}", ask.about),
            );
            state.message = Some(Message::info(format!(
                "{}: its maintenance certificate {answer}",
                ask.about
            )));
            let cluster = p.cluster.clone();
            return effect(CreateEffect::Answer {
                cluster,
                id: ask.id,
                trust,
            });
        }
        Action::Back => state.screen = Screen::Fleet,
        Action::OpenHelp => state.overlay = Some(Overlay::Help { scroll: 0 }),
        Action::OpenCommandLine => state.open_input(InputKind::Command, String::new()),
        _ => {}
    }
    Vec::new()
}

/// The dispatcher approved a create: it runs when it is the plan on screen and its guards
/// still allow it.
pub fn on_approved(state: &mut AppState, approved: ApprovedAction) -> Vec<Effect> {
    if let Some(refused) = not_approved(state, Screen::Create, &approved) {
        return refused;
    }
    let Some((w, Some(plan))) = state.create.wizard.as_ref().map(|w| (w, w.ready_plan())) else {
        return Vec::new();
    };
    let plan = Box::new(plan.clone());
    let acks = w.guards.acks.clone();
    let resumed = w
        .resuming
        .as_ref()
        .is_some_and(|u| u.cluster == plan.cluster);
    let what = plan.action().describe();
    let headline = if resumed {
        format!("{what} (resumed)")
    } else {
        what.clone()
    };
    let kind = OperationKind::Create;
    let now = state.wall_clock;
    let mut progress =
        OperationProgress::start(kind, &plan.cluster, &what, headline, kind.cancel(), now);
    progress.steps = runner_events::create_steps();
    progress.steps_word = "phases".into();
    progress.steps_title = format!("Create of {}", plan.cluster);
    if resumed {
        progress.say(now, "resuming the run its journal records".into());
    }
    state.create.progress = Some(progress);
    state.create.wizard = None;
    state.create.stage = CreateStage::Progress;
    state.screen = Screen::Create;
    vec![Effect::RunAction {
        approved,
        run: Box::new(ActionRun::Create(plan)),
        acks,
    }]
}

/// Folds a create task's report; a create that ended with its contexts written has discovery
/// run again, so the fleet shows the new cluster at once.
pub fn on_update(state: &mut AppState, update: CreateUpdate) -> Vec<Effect> {
    match update {
        CreateUpdate::Unfinished { found, errors } => {
            if let Some(e) = errors.first() {
                state.message = Some(Message::error(e.clone()));
            }
            let Some(w) = state.create.wizard.as_mut() else {
                return Vec::new();
            };
            w.unfinished = found;
            if w.name.is_empty()
                && let Some(u) = w.unfinished.first().cloned()
            {
                w.take_request(&u.request);
                state.message = Some(Message::warn(format!(
                    "a create of {} was stopped; Enter plans it again and its run resumes",
                    u.cluster
                )));
                w.resuming = Some(u);
            }
        }
        CreateUpdate::Planned { asked, result } => {
            let Some(w) = state.create.wizard.as_mut().filter(|w| w.asked == asked) else {
                return Vec::new();
            };
            match result {
                Ok((plan, guards)) => {
                    w.plan = AskedPlan::Ready(plan);
                    w.guards.set(guards);
                }
                Err(e) => w.plan = AskedPlan::Failed(e),
            }
        }
    }
    Vec::new()
}

/// The quit question while a create runs here.
pub fn quit_question(state: &AppState) -> Option<String> {
    state.create.running().then(|| {
        "a create is running; its journal resumes it (n, Enter) next time; quit? y/N".to_string()
    })
}

/// Whether a report on `MutatingAction` is a create's.
pub fn is_create(action: &MutatingAction) -> bool {
    matches!(action, MutatingAction::CreateCluster { .. })
}

#[cfg(test)]
#[path = "update_create_tests.rs"]
mod tests;
