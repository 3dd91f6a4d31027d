//! The create wizard's keys as data and its update step: what it says of itself as a wizard on
//! the one plan screen (`views::wizard`: its fields, its plan apart from the request, the CLI's
//! own planner asked for it, the approved create run on the one runner); an unfinished
//! create's journal fills the wizard so its run resumes. Pure: IO is asked for as screen tasks
//! and answered as news.
use super::{CreateField, CreateNews, CreateScreen, CreateTask, CreateWizard, NAME, NewCluster};
use crate::app::action::Effect;
use crate::app::actions::ActionRun;
use crate::app::binding::{Binding, Key, bind};
use crate::app::message::Message;
use crate::app::plan_screen::{GuardReading, PlanHolder};
use crate::app::screen::Screen;
use crate::app::screens::{Opening, ScreenName, ScreenTask, Shared, Step};
use crate::approval::MutatingAction;
use crate::cluster_lifecycle::{
    CreatePlan, Delivery, MAX_CONTROLPLANES, MAX_WORKERS, UnfinishedCreate, offered_talos_releases,
};
use crate::guards::Guard;
use crate::views::form::{self, FieldKind, FormField, FormKey, cycled, field};
use crate::views::wizard::{Draw, WizardKind};

/// A typed field, its value at `value`: every one's prompt on the input line is the same.
const fn typed(value: fn(&mut NewCluster) -> &mut String) -> FieldKind<NewCluster> {
    FieldKind::Text {
        prompt: "value> ",
        value,
    }
}

/// The request's keys (`n` on the fleet opens it: the shell's table; the plan's keys are the
/// one gate's).
#[rustfmt::skip]
static KEYS: &[Binding<FormKey, CreateScreen>] = &[
    bind(&[Key::char('l'), Key::RIGHT], FormKey::NextValue, "next value of the field (typed fields: edit)").footer("change"),
    bind(&[Key::char('h'), Key::LEFT], FormKey::PreviousValue, "previous value of the field"),
    bind(&[Key::char('+')], FormKey::More, "one more (control planes, workers)"),
    bind(&[Key::char('-')], FormKey::Less, "one fewer (control planes, workers)"),
    bind(&[Key::char('e')], FormKey::Edit, "type the field's value (name, versions, endpoint, patches)").footer("edit"),
    bind(&[Key::ENTER], FormKey::MakePlan, "make the plan (asks the provider, as `taloscope create --plan`)").footer("plan"),
    bind(&[Key::ESC], FormKey::Back, "close the wizard").footer("back"),
];

fn task(task: CreateTask) -> Effect {
    Effect::Screen(ScreenTask::new(NAME, task))
}

/// What the create says of itself as a wizard: its plan apart from the request, made by the
/// CLI's own planner with its guards; the journals killed runs left read when it opens; its
/// fields' rows and kinds, the counts within the CLI's bounds, the choices Left/Right cycle.
impl WizardKind for NewCluster {
    const NAME: ScreenName = NAME;
    const TITLE: &'static str = "Create a cluster (n on the fleet)";
    const PLAN_APART: bool = true;
    const HOME: Screen = Screen::Fleet;
    const OF_CLUSTER_IN_USE: bool = false;
    const CLOSED: &'static str = "No create wizard open. n on the fleet opens it.";
    const MAKE: &'static str = "Enter makes the plan";
    #[rustfmt::skip]
    const FIELDS: &'static [FormField<CreateField, Self>] = &[
        field(CreateField::Name, "Name", typed(|w| &mut w.name)),
        field(CreateField::Provider, "Provider", FieldKind::Choice),
        field(CreateField::ControlPlanes, "Control planes", FieldKind::Count { min: 1, max: MAX_CONTROLPLANES, value: |w| &mut w.controlplanes }),
        field(CreateField::Workers, "Workers", FieldKind::Count { min: 0, max: MAX_WORKERS, value: |w| &mut w.workers }),
        field(CreateField::Talos, "Talos", typed(|w| &mut w.talos)),
        field(CreateField::Kubernetes, "Kubernetes", typed(|w| &mut w.kubernetes)),
        field(CreateField::Endpoint, "Endpoint", typed(|w| &mut w.endpoint)),
        field(CreateField::Delivery, "Delivery", FieldKind::Choice),
        field(CreateField::Patches, "Patches", typed(|w| &mut w.patches)),
    ];
    const ACTION: fn(&CreatePlan) -> MutatingAction = CreatePlan::action;
    const RUN: fn(Box<CreatePlan>) -> ActionRun = ActionRun::Create;
    const KEYS: &'static [Binding<FormKey, CreateScreen>] = KEYS;
    const DRAW: Draw<Self> = super::view::draw;
    type Field = CreateField;
    type Plan = CreatePlan;
    type News = CreateNews;

    /// `n` on the fleet: a new wizard (the journals of killed runs are read for it).
    fn open(_: &Opening, shared: &Shared) -> Result<(NewCluster, Step), Message> {
        let providers = form::providers(shared.config, None);
        let message = providers
            .is_empty()
            .then(|| form::no_providers(shared.config));
        let step = Step {
            message,
            ..Step::effects(vec![task(CreateTask::ReadUnfinished)])
        };
        Ok((NewCluster::new(providers, offered_talos_releases()), step))
    }

    fn cluster(&self) -> &str {
        self.name.trim()
    }

    fn on_news(h: &mut PlanHolder<CreateWizard>, news: &CreateNews, s: &Shared) -> (bool, Step) {
        match news {
            CreateNews::Unfinished { found, errors } => (true, h.on_unfinished(found, errors)),
            CreateNews::Planned { asked, result } => {
                let (result, guards) = match result.clone() {
                    Ok((plan, guards)) => (Ok(plan), guards),
                    Err(e) => (Err(e), Vec::new()),
                };
                if h.form.answer(*asked, result) {
                    h.plan.guards = guards;
                    h.evaluate_guards(&s.guards.guard_reading(&h.cluster));
                }
                (true, Step::default())
            }
        }
    }

    /// The planner evaluated them with the plan; a new plan reads them again.
    fn guards_over(&self, _: Option<&CreatePlan>, _: &GuardReading<'_>) -> Vec<Guard> {
        self.guards.clone()
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

impl NewCluster {
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
