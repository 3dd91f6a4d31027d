//! The create screen as a screen module, and its update step: the wizard's fields, the plan
//! asked of the CLI's own planner, Start, the acknowledgement and the dispatcher's approval
//! through the plan screens' one gate (`app::plan_keys`), the approved run handed to the one
//! runner and its one progress screen; an unfinished create's journal fills the wizard so its
//! run resumes. Pure: IO is asked for as screen tasks and answered as news.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::keys::{self, CreateKey};
use super::{
    CreateField, CreateNews, CreateScreen, CreateStage, CreateTask, CreateWizard,
    MAX_CONTROLPLANES, MAX_WORKERS, NAME, Typing,
};
use crate::app::action::Effect;
use crate::app::actions::ActionRun;
use crate::app::binding::{KeyLine, MOVE_KEYS, Move, binds_with_moves, intent, lines_with_moves};
use crate::app::message::Message;
use crate::app::plan_keys::{GateKey, ack_step, approved_step, gate_step};
use crate::app::plan_screen::{AskedPlan, PlanGuards};
use crate::app::screens::{Ask, ScreenModule, ScreenName, ScreenNews, ScreenTask, Shared, Step};
use crate::approval::{ApprovedAction, MutatingAction};
use crate::cluster_lifecycle::{CreatePlan, Delivery, UnfinishedCreate, offered_talos_releases};
use crate::guards::Guard;
use crate::tui::Look;

/// What the input line says while a field's value is typed.
const VALUE_PROMPT: &str = "value> ";

fn task(task: CreateTask) -> Effect {
    Effect::Screen(ScreenTask::new(NAME, task))
}

impl ScreenModule for CreateScreen {
    fn name(&self) -> ScreenName {
        NAME
    }

    fn title(&self) -> &'static str {
        match self.stage {
            CreateStage::Form => "Create a cluster (n on the fleet)",
            CreateStage::Plan => "Create plan and guards",
        }
    }

    fn keys(&self) -> Vec<KeyLine> {
        lines_with_moves(keys::of(self.stage), self)
    }

    fn binds(&self, event: &KeyEvent) -> bool {
        binds_with_moves(keys::of(self.stage), event)
    }

    /// `n` on the fleet: a new wizard (the journals of killed runs are read for it).
    fn open(&mut self, shared: &Shared) -> Result<Step, Message> {
        let providers: Vec<String> = shared.config.providers.keys().cloned().collect();
        let message = providers.is_empty().then(|| {
            Message::error(format!(
                "{}: no providers: add one under providers: (kind: opennebula or oneflow)",
                shared.config.file_label()
            ))
        });
        self.wizard = Some(CreateWizard::new(providers, offered_talos_releases()));
        self.stage = CreateStage::Form;
        Ok(Step {
            message,
            ..Step::effects(vec![task(CreateTask::ReadUnfinished)])
        })
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        match (intent(keys::of(self.stage), event), self.stage) {
            (Some(key), CreateStage::Form) => self.on_form(*key),
            (Some(key), CreateStage::Plan) => self.on_plan(*key, shared),
            (None, _) => match intent(MOVE_KEYS, event) {
                Some(to) => self.on_move(*to, shared),
                None => Step::default(),
            },
        }
    }

    fn on_news_step(&mut self, news: &ScreenNews, _shared: &Shared) -> (bool, Step) {
        match news.get::<CreateNews>() {
            Some(CreateNews::Unfinished { found, errors }) => {
                (true, self.on_unfinished(found, errors))
            }
            Some(CreateNews::Planned { asked, result }) => {
                self.on_planned(*asked, result.clone());
                (true, Step::default())
            }
            None => (false, Step::default()),
        }
    }

    /// Enter on the input line the screen opened: a field's value or an acknowledgement.
    fn on_input(&mut self, text: &str, shared: &Shared) -> Step {
        match (self.typing.take(), self.wizard.as_mut()) {
            (Some(Typing::Field), _) => self.take_field(text),
            (Some(Typing::Acknowledgement), Some(w)) => ack_step(w, text, shared),
            _ => Step::default(),
        }
    }

    /// The dispatcher approved a create: it runs when it is the plan on screen and its guards
    /// still allow it (the one gate's rule), the wizard closed for its progress. `None` for
    /// any other action.
    fn on_approved(&mut self, approved: &ApprovedAction, shared: &Shared) -> Option<Step> {
        if !matches!(approved.action(), MutatingAction::CreateCluster { .. }) {
            return None;
        }
        let stage = self.stage;
        let shown = self.wizard.as_mut().filter(|_| stage == CreateStage::Plan);
        let step = approved_step(shown, approved, shared, |w| {
            let plan = w
                .ready_plan()
                .ok_or_else(|| "the plan is not ready".to_string())?;
            Ok(ActionRun::Create(Box::new(plan.clone())))
        });
        if step.close {
            (self.wizard, self.stage) = (None, CreateStage::Form);
        }
        Some(step)
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        super::view::draw(self, area, buf, shared, look);
    }
}

impl CreateScreen {
    /// A move key: the focused field, or the selected guard of the plan (the one gate's).
    fn on_move(&mut self, to: Move, shared: &Shared) -> Step {
        match (self.stage, self.wizard.as_mut()) {
            (CreateStage::Form, Some(w)) => {
                let fields = CreateField::ALL;
                let at = fields.iter().position(|f| *f == w.field).unwrap_or(0);
                w.field = fields[to.from(at, fields.len() - 1, 1)];
                Step::default()
            }
            (CreateStage::Plan, _) => self.on_plan(CreateKey::Gate(GateKey::Move(to)), shared),
            _ => Step::default(),
        }
    }

    fn on_form(&mut self, key: CreateKey) -> Step {
        let Some(w) = self.wizard.as_mut() else {
            return Step::close();
        };
        let changed = match key {
            CreateKey::Edit => return self.edit(),
            CreateKey::NextValue | CreateKey::PreviousValue => {
                let forward = key == CreateKey::NextValue;
                match w.field {
                    CreateField::Provider if !w.providers.is_empty() => {
                        let n = w.providers.len();
                        w.provider = (w.provider + if forward { 1 } else { n - 1 }) % n;
                        true
                    }
                    CreateField::Talos if !w.talos_offered.is_empty() => {
                        let offered = &w.talos_offered;
                        let n = offered.len();
                        let to = match offered.iter().position(|t| *t == w.talos) {
                            Some(at) => (at + if forward { 1 } else { n - 1 }) % n,
                            None => 0,
                        };
                        w.talos = offered[to].clone();
                        true
                    }
                    CreateField::Delivery => {
                        w.delivery = match w.delivery {
                            Delivery::Maintenance => Delivery::UserData,
                            Delivery::UserData => Delivery::Maintenance,
                        };
                        true
                    }
                    CreateField::ControlPlanes | CreateField::Workers => count(w, forward),
                    field if field.is_text() => return self.edit(),
                    _ => false,
                }
            }
            CreateKey::More | CreateKey::Less => count(w, key == CreateKey::More),
            CreateKey::MakePlan => {
                w.asked += 1;
                w.plan = AskedPlan::Planning(w.asked);
                w.guards = PlanGuards::default();
                let (asked, request) = (w.asked, Box::new(w.request()));
                self.stage = CreateStage::Plan;
                return Step::effects(vec![task(CreateTask::Plan { asked, request })]);
            }
            CreateKey::Back => {
                self.wizard = None;
                return Step::close();
            }
            _ => false,
        };
        if changed {
            forget_plan(w);
        }
        Step::default()
    }

    /// `e` (or Left/Right) on a typed field: the input line holds its value.
    fn edit(&mut self) -> Step {
        let Some(w) = self.wizard.as_ref() else {
            return Step::default();
        };
        if !w.field.is_text() {
            let text = format!("{}: Left/Right change it", w.field.title());
            return Step::message(Message::info(text));
        }
        self.typing = Some(Typing::Field);
        Step::ask(Ask::Input {
            prompt: VALUE_PROMPT,
            text: w.text(w.field).to_string(),
        })
    }

    /// The focused field takes the text. A name with a killed run's journal takes that run's
    /// request, so its run resumes.
    fn take_field(&mut self, text: &str) -> Step {
        let Some(w) = self.wizard.as_mut() else {
            return Step::default();
        };
        let field = w.field;
        if let Some(value) = w.text_mut(field) {
            *value = text.trim().to_string();
        }
        forget_plan(w);
        if field != CreateField::Name {
            return Step::default();
        }
        w.resuming = w.unfinished.iter().find(|u| u.cluster == w.name).cloned();
        let Some(u) = w.resuming.clone() else {
            return Step::default();
        };
        w.take_request(&u.request);
        Step::message(Message::info(format!(
            "{} has a create journal: its request is filled in, and its run resumes",
            u.cluster
        )))
    }

    /// A key of the plan: the one gate's, or Esc back to the request.
    fn on_plan(&mut self, key: CreateKey, shared: &Shared) -> Step {
        let Some(w) = self.wizard.as_mut() else {
            return Step::close();
        };
        match key {
            CreateKey::Gate(key) => {
                let step = gate_step(w, key, shared.page(), shared.readonly);
                if matches!(step.ask, Some(Ask::Input { .. })) {
                    self.typing = Some(Typing::Acknowledgement);
                }
                step
            }
            CreateKey::Back => {
                self.stage = CreateStage::Form;
                Step::default()
            }
            _ => Step::default(),
        }
    }

    /// The plan and guards asked for as `asked`; an older answer is dropped.
    fn on_planned(&mut self, asked: u64, result: Result<(Box<CreatePlan>, Vec<Guard>), String>) {
        let Some(w) = self.wizard.as_mut().filter(|w| w.asked == asked) else {
            return;
        };
        match result {
            Ok((plan, guards)) => {
                w.plan = AskedPlan::Ready(plan);
                w.guards.set(guards);
            }
            Err(e) => w.plan = AskedPlan::Failed(e),
        }
    }

    /// The journals killed runs left: the first fills an empty wizard, so its run resumes.
    fn on_unfinished(&mut self, found: &[UnfinishedCreate], errors: &[String]) -> Step {
        let mut message = errors.first().map(|e| Message::error(e.clone()));
        if let Some(w) = self.wizard.as_mut() {
            w.unfinished = found.to_vec();
            if w.name.is_empty()
                && let Some(u) = w.unfinished.first().cloned()
            {
                w.take_request(&u.request);
                message = Some(Message::warn(format!(
                    "a create of {} was stopped; Enter plans it again and its run resumes",
                    u.cluster
                )));
                w.resuming = Some(u);
            }
        }
        Step {
            message,
            ..Step::default()
        }
    }
}

/// One more or one fewer of the focused count, within the CLI's bounds; whether it was a
/// count.
fn count(w: &mut CreateWizard, more: bool) -> bool {
    let (value, min, max) = match w.field {
        CreateField::ControlPlanes => (&mut w.controlplanes, 1, MAX_CONTROLPLANES),
        CreateField::Workers => (&mut w.workers, 0, MAX_WORKERS),
        _ => return false,
    };
    *value = if more {
        (*value + 1).min(max)
    } else {
        value.saturating_sub(1).max(min)
    };
    true
}

/// A field changed: the plan, its guards and their acknowledgements no longer hold.
fn forget_plan(w: &mut CreateWizard) {
    w.plan = AskedPlan::None;
    w.guards = PlanGuards::default();
}
