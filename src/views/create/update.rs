//! The create screen as a screen module, and its update step: the wizard's fields, the plan
//! asked of the CLI's own planner, Start, the acknowledgement and the dispatcher's approval
//! through the plan screens' one gate (`app::plan_keys`), the approved run handed to the one
//! runner and its one progress screen; an unfinished create's journal fills the wizard so its
//! run resumes. Pure: IO is asked for as screen tasks and answered as news.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::keys;
use super::{
    CreateField, CreateNews, CreateScreen, CreateStage, CreateTask, CreateWizard,
    MAX_CONTROLPLANES, MAX_WORKERS, NAME,
};
use crate::app::action::Effect;
use crate::app::actions::ActionRun;
use crate::app::binding::{KeyLine, MOVE_KEYS, binds_with_moves, intent, lines_with_moves};
use crate::app::message::Message;
use crate::app::plan_keys::approved_step;
use crate::app::screens::{ScreenModule, ScreenName, ScreenNews, ScreenTask, Shared, Step};
use crate::approval::{ApprovedAction, MutatingAction};
use crate::cluster_lifecycle::{CreatePlan, Delivery, UnfinishedCreate, offered_talos_releases};
use crate::guards::Guard;
use crate::tui::Look;
use crate::views::form::{self, FieldKind, Form, FormField, FormKey, FormState, cycled, field};

/// Every typed field's prompt on the input line.
const VALUE: FieldKind = FieldKind::Text { prompt: "value> " };

fn task(task: CreateTask) -> Effect {
    Effect::Screen(ScreenTask::new(NAME, task))
}

impl ScreenModule for CreateScreen {
    fn name(&self) -> ScreenName {
        NAME
    }

    fn title(&self) -> &'static str {
        match self.stage() {
            CreateStage::Form => "Create a cluster (n on the fleet)",
            CreateStage::Plan => "Create plan and guards",
        }
    }

    fn keys(&self) -> Vec<KeyLine> {
        lines_with_moves(keys::of(self.stage()), self)
    }

    fn binds(&self, event: &KeyEvent) -> bool {
        binds_with_moves(keys::of(self.stage()), event)
    }

    /// `n` on the fleet: a new wizard (the journals of killed runs are read for it).
    fn open(&mut self, shared: &Shared) -> Result<Step, Message> {
        let providers = form::providers(shared.config, None);
        let message = providers
            .is_empty()
            .then(|| form::no_providers(shared.config));
        self.wizard = Some(CreateWizard::new(providers, offered_talos_releases()));
        Ok(Step {
            message,
            ..Step::effects(vec![task(CreateTask::ReadUnfinished)])
        })
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        match intent(keys::of(self.stage()), event) {
            Some(key) => self.on_form(*key, shared),
            None => match (intent(MOVE_KEYS, event), self.wizard.as_mut()) {
                (Some(to), Some(w)) => {
                    form::move_step(w, *to, 1, shared);
                    Step::default()
                }
                _ => Step::default(),
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
        (self.wizard.as_mut()).map_or_else(Step::default, |w| form::input_step(w, text, shared))
    }

    /// The dispatcher approved a create: it runs when it is the plan on screen and its guards
    /// still allow it (the one gate's rule), the wizard closed for its progress. `None` for
    /// any other action.
    fn on_approved(&mut self, approved: &ApprovedAction, shared: &Shared) -> Option<Step> {
        if !matches!(approved.action(), MutatingAction::CreateCluster { .. }) {
            return None;
        }
        let stage = self.stage();
        let shown = self.wizard.as_mut().filter(|_| stage == CreateStage::Plan);
        let step = approved_step(shown, approved, shared, |w| {
            let plan = (w.form.plan.ready()).ok_or("the plan is not ready")?;
            Ok(ActionRun::Create(Box::new(plan.clone())))
        });
        if step.close {
            self.wizard = None;
        }
        Some(step)
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        super::view::draw(self, area, buf, shared, look);
    }
}

impl CreateScreen {
    /// A key of the stage on screen: Esc back to the request (from the plan) or closing the
    /// wizard, Enter on to the plan, the others the form's.
    fn on_form(&mut self, key: FormKey, shared: &Shared) -> Step {
        let Some(w) = self.wizard.as_mut() else {
            return Step::close();
        };
        match (key, w.form.guards_focused) {
            (FormKey::Back, true) => w.form.guards_focused = false,
            (FormKey::Back, false) => {
                self.wizard = None;
                return Step::close();
            }
            (FormKey::MakePlan, _) => w.form.guards_focused = true,
            _ => {}
        }
        form::key_step(w, key, shared).unwrap_or_default()
    }

    /// The plan and guards asked for as `asked`; an older answer is dropped.
    fn on_planned(&mut self, asked: u64, result: Result<(Box<CreatePlan>, Vec<Guard>), String>) {
        let Some(w) = self.wizard.as_mut() else {
            return;
        };
        let (result, guards) = match result {
            Ok((plan, guards)) => (Ok(plan), guards),
            Err(e) => (Err(e), Vec::new()),
        };
        if w.form.answer(asked, result) {
            w.form.guards.set(guards);
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

/// The wizard's request as a form: its fields' rows and kinds, the counts within the CLI's
/// bounds, the choices Left/Right cycle, the plan asked of the CLI's own planner.
impl Form for CreateWizard {
    type Field = CreateField;
    type Plan = CreatePlan;

    #[rustfmt::skip]
    const FIELDS: &'static [FormField<CreateField>] = &[
        field(CreateField::Name, "Name", VALUE),
        field(CreateField::Provider, "Provider", FieldKind::Choice),
        field(CreateField::ControlPlanes, "Control planes", FieldKind::Count { min: 1, max: MAX_CONTROLPLANES }),
        field(CreateField::Workers, "Workers", FieldKind::Count { min: 0, max: MAX_WORKERS }),
        field(CreateField::Talos, "Talos", VALUE),
        field(CreateField::Kubernetes, "Kubernetes", VALUE),
        field(CreateField::Endpoint, "Endpoint", VALUE),
        field(CreateField::Delivery, "Delivery", FieldKind::Choice),
        field(CreateField::Patches, "Patches", VALUE),
    ];

    fn form(&mut self) -> &mut FormState<CreateField, CreatePlan> {
        &mut self.form
    }

    fn count(&mut self, field: CreateField) -> Option<&mut usize> {
        match field {
            CreateField::ControlPlanes => Some(&mut self.controlplanes),
            CreateField::Workers => Some(&mut self.workers),
            _ => None,
        }
    }

    fn text(&mut self, field: CreateField) -> Option<&mut String> {
        match field {
            CreateField::Name => Some(&mut self.name),
            CreateField::Talos => Some(&mut self.talos),
            CreateField::Kubernetes => Some(&mut self.kubernetes),
            CreateField::Endpoint => Some(&mut self.endpoint),
            CreateField::Patches => Some(&mut self.patches),
            _ => None,
        }
    }

    /// The providers, the offered Talos releases (its text typed otherwise), the delivery.
    fn choose(&mut self, field: CreateField, forward: bool, _: &Shared) -> Option<Vec<Effect>> {
        match field {
            CreateField::Provider if !self.providers.is_empty() => {
                self.provider = cycled(self.provider, self.providers.len(), forward);
            }
            CreateField::Talos if !self.talos_offered.is_empty() => {
                let offered = &self.talos_offered;
                let to = (offered.iter().position(|t| *t == self.talos))
                    .map_or(0, |at| cycled(at, offered.len(), forward));
                self.talos = offered[to].clone();
            }
            CreateField::Delivery => {
                self.delivery = match self.delivery {
                    Delivery::Maintenance => Delivery::UserData,
                    Delivery::UserData => Delivery::Maintenance,
                };
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    fn plan_task(&self, asked: u64, _: &Shared) -> Effect {
        let request = Box::new(self.request());
        task(CreateTask::Plan { asked, request })
    }

    /// A name with a killed run's journal takes that run's request, so its run resumes.
    fn typed(&mut self, field: CreateField) -> Step {
        if field != CreateField::Name {
            return Step::default();
        }
        self.resuming = self
            .unfinished
            .iter()
            .find(|u| u.cluster == self.name)
            .cloned();
        let Some(u) = self.resuming.clone() else {
            return Step::default();
        };
        self.take_request(&u.request);
        Step::message(Message::info(format!(
            "{} has a create journal: its request is filled in, and its run resumes",
            u.cluster
        )))
    }
}
