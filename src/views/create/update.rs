//! The create wizard's update step: what it says of itself to the one wizard shell
//! (`views::wizard`: its plan apart from the request, the CLI's own planner asked for it, the
//! approved create run on the one runner) and of its fields to the wizards' one form; an
//! unfinished create's journal fills the wizard so its run resumes. Pure: IO is asked for as
//! screen tasks and answered as news.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::keys;
use super::{
    CreateField, CreateNews, CreateScreen, CreateTask, CreateWizard, MAX_CONTROLPLANES,
    MAX_WORKERS, NAME,
};
use crate::app::action::Effect;
use crate::app::actions::ActionRun;
use crate::app::binding::Binding;
use crate::app::message::Message;
use crate::app::screen::Screen;
use crate::app::screens::{Opening, ScreenName, ScreenTask, Shared, Step};
use crate::cluster_lifecycle::{CreatePlan, Delivery, UnfinishedCreate, offered_talos_releases};
use crate::guards::Guard;
use crate::operation::OperationKind;
use crate::tui::Look;
use crate::views::form::{self, FieldKind, Form, FormField, FormKey, FormState, cycled, field};
use crate::views::wizard::WizardKind;

/// Every typed field's prompt on the input line.
const VALUE: FieldKind = FieldKind::Text { prompt: "value> " };

fn task(task: CreateTask) -> Effect {
    Effect::Screen(ScreenTask::new(NAME, task))
}

/// What the create says of itself to the one wizard shell: its plan apart from the request,
/// the journals killed runs left read when it opens, its plan and guards as news.
impl WizardKind for CreateWizard {
    const NAME: ScreenName = NAME;
    const OPERATION: OperationKind = OperationKind::Create;
    const PLAN_APART: bool = true;
    const HOME: Screen = Screen::Fleet;
    const OF_CLUSTER_IN_USE: bool = false;
    const CLOSED: &'static str = "No create wizard open. n on the fleet opens it.";
    type News = CreateNews;

    fn title(on_plan: bool) -> &'static str {
        match on_plan {
            false => "Create a cluster (n on the fleet)",
            true => "Create plan and guards",
        }
    }

    fn keys(on_plan: bool) -> &'static [Binding<FormKey, CreateScreen>] {
        keys::of(on_plan)
    }

    /// `n` on the fleet: a new wizard (the journals of killed runs are read for it).
    fn open(_: &Opening, shared: &Shared) -> Result<(CreateWizard, Step), Message> {
        let providers = form::providers(shared.config, None);
        let message = providers
            .is_empty()
            .then(|| form::no_providers(shared.config));
        let step = Step {
            message,
            ..Step::effects(vec![task(CreateTask::ReadUnfinished)])
        };
        Ok((CreateWizard::new(providers, offered_talos_releases()), step))
    }

    fn on_news(&mut self, news: &CreateNews, _: &Shared) -> (bool, Step) {
        match news {
            CreateNews::Unfinished { found, errors } => (true, self.on_unfinished(found, errors)),
            CreateNews::Planned { asked, result } => {
                self.on_planned(*asked, result.clone());
                (true, Step::default())
            }
        }
    }

    fn run(&self) -> Option<ActionRun> {
        let plan = self.form.plan.ready()?;
        Some(ActionRun::Create(Box::new(plan.clone())))
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        super::view::draw(self, area, buf, shared, look);
    }
}

impl CreateWizard {
    /// The plan and guards asked for as `asked`; an older answer is dropped.
    fn on_planned(&mut self, asked: u64, result: Result<(Box<CreatePlan>, Vec<Guard>), String>) {
        let (result, guards) = match result {
            Ok((plan, guards)) => (Ok(plan), guards),
            Err(e) => (Err(e), Vec::new()),
        };
        if self.form.answer(asked, result) {
            self.form.guards.set(guards);
        }
    }

    /// The journals killed runs left: the first fills an empty wizard, so its run resumes.
    fn on_unfinished(&mut self, found: &[UnfinishedCreate], errors: &[String]) -> Step {
        let mut message = errors.first().map(|e| Message::error(e.clone()));
        self.unfinished = found.to_vec();
        if self.name.is_empty()
            && let Some(u) = self.unfinished.first().cloned()
        {
            self.take_request(&u.request);
            message = Some(Message::warn(format!(
                "a create of {} was stopped; Enter plans it again and its run resumes",
                u.cluster
            )));
            self.resuming = Some(u);
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
