//! The provision wizard's keys as data, and its pure update step: what it says of itself to
//! the one wizard shell (`views::wizard`: its plan beside the request, asked of the provider,
//! the approved provision run on the one runner) and of its fields to the wizards' one form.
//! IO is asked for as screen tasks and answered as news.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::{
    Field, MAX_COUNT, NAME, ProvisionNews, ProvisionScreen, ProvisionTask, SourceList, Wizard,
};
use crate::app::action::Effect;
use crate::app::actions::ActionRun;
use crate::app::binding::{Binding, Key, bind};
use crate::app::message::Message;
use crate::app::plan_keys::{GateKey, reread_guards};
use crate::app::screen::{Pane, Screen};
use crate::app::screens::{Opening, ScreenName, ScreenTask, Shared, Step};
use crate::config::MachineRole;
use crate::operation::OperationKind;
use crate::provision::plan::DEFAULT_NAME_PATTERN;
use crate::provision::{PlanRequest, ProvisionPlan};
use crate::tui::Look;
use crate::views::form::{
    self, FieldKind, Form, FormField, FormKey, FormState, ProviderChoice, cycled, field,
};
use crate::views::wizard::WizardKind;

#[rustfmt::skip]
static KEYS: &[Binding<FormKey, ProvisionScreen>] = &[
    bind(&[Key::char('l'), Key::RIGHT], FormKey::NextValue, "next value of the field (Names: edit)").footer("change"),
    bind(&[Key::char('h'), Key::LEFT], FormKey::PreviousValue, "previous value of the field"),
    bind(&[Key::char('+')], FormKey::More, "one VM more"),
    bind(&[Key::char('-')], FormKey::Less, "one VM fewer"),
    bind(&[Key::TAB], FormKey::Focus, "switch between the request's fields and the plan's guards").footer("focus"),
    bind(&[Key::char('a')], FormKey::Gate(GateKey::Acknowledge), "type the acknowledgement a warning needs").footer("ack"),
    bind(&[Key::char('r')], FormKey::Gate(GateKey::Refresh), "poll the cluster now (the guards follow its status)"),
    bind(&[Key::char('n')], FormKey::Edit, "type the name pattern ({cluster}, {role}, {n})"),
    bind(&[Key::ENTER], FormKey::MakePlan, "make the plan (asks the provider, checks the machine config)").footer("plan"),
    bind(&[Key::char('s')], FormKey::Gate(GateKey::Start), "provision the plan (asks for the cluster name)").footer("start"),
    bind(&[Key::ESC], FormKey::Back, "close the wizard").footer("back"),
    bind(&[Key::char('?')], FormKey::Explain, "explain the selected guard (Tab to the guards; else help)").footer("why"),
];

fn task(task: ProvisionTask) -> Effect {
    Effect::Screen(ScreenTask::new(NAME, task))
}

/// What the provision says of itself to the one wizard shell: its plan beside the request,
/// opened on a cluster with its sources asked for, the sources and the plan as news.
impl WizardKind for Wizard {
    const NAME: ScreenName = NAME;
    const OPERATION: OperationKind = OperationKind::Provision;
    const PLAN_APART: bool = false;
    const HOME: Screen = Screen::Cluster(Pane::Nodes);
    const OF_CLUSTER_IN_USE: bool = true;
    const CLOSED: &'static str = "No provision wizard open. p opens it from a cluster.";
    type News = ProvisionNews;

    fn title(_: bool) -> &'static str {
        "Provision wizard (p, :provision)"
    }

    fn keys(_: bool) -> &'static [Binding<FormKey, ProvisionScreen>] {
        KEYS
    }

    /// The wizard for the cluster the opening names (`app::provision::open` resolves it), its
    /// own provider first; the provider's sources asked for.
    fn open(opening: &Opening, shared: &Shared) -> Result<(Wizard, Step), Message> {
        let wanted = opening.words.get(1);
        let Some(cluster) = shared.clusters.iter().find(|c| Some(&c.name) == wanted) else {
            return Err(Message::warn(
                "provision: choose a cluster first (:ctx NAME)",
            ));
        };
        let config = shared.config;
        let key = crate::provision::cluster::config_key(config, cluster);
        let own = config
            .clusters
            .get(&key)
            .and_then(|e| e.provider.as_deref());
        let providers = form::providers(config, own);
        let Some(first) = providers.first().map(|p| p.name.clone()) else {
            return Err(form::no_providers(config));
        };
        let wizard = Wizard {
            cluster: cluster.name.clone(),
            key,
            providers,
            provider: 0,
            role: MachineRole::Worker,
            sources: SourceList::Loading,
            source: 0,
            count: 1,
            pattern: DEFAULT_NAME_PATTERN.to_string(),
            form: FormState::new(Field::Provider),
            machine_config_endpoint: None,
        };
        let list = ProvisionTask::ListSources {
            cluster: cluster.name.clone(),
            provider: first,
        };
        Ok((wizard, Step::effects(vec![task(list)])))
    }

    fn on_news(&mut self, news: &ProvisionNews, shared: &Shared) -> (bool, Step) {
        let changed = match news {
            ProvisionNews::Sources {
                cluster,
                provider,
                result,
            } if self.cluster == *cluster && self.provider().map(|p| &p.name) == Some(provider) => {
                self.sources = match result.clone() {
                    Ok(list) => SourceList::Ready(list),
                    Err(e) => SourceList::Failed(e),
                };
                self.source = 0;
                self.select_configured_source(shared.config);
                true
            }
            ProvisionNews::Planned {
                cluster,
                asked,
                result,
                machine_config_endpoint,
            } if self.cluster == *cluster && self.form.answer(*asked, result.clone()) => {
                self.machine_config_endpoint = machine_config_endpoint.clone();
                reread_guards(self, shared);
                true
            }
            _ => false,
        };
        (changed, Step::default())
    }

    fn run(&self) -> Option<ActionRun> {
        let plan = self.form.plan.ready()?;
        Some(ActionRun::Provision(Box::new(plan.clone())))
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        super::view::draw(self, area, buf, shared, look);
    }
}

/// The request as a form: its fields' rows and kinds, the count within [`MAX_COUNT`], the
/// provider, role and source Left/Right cycle, the plan asked of the headless command's planner.
impl Form for Wizard {
    type Field = Field;
    type Plan = ProvisionPlan;

    #[rustfmt::skip]
    const FIELDS: &'static [FormField<Field>] = &[
        field(Field::Provider, "Provider", FieldKind::Choice),
        field(Field::Role, "Role", FieldKind::Choice),
        field(Field::Source, "Source", FieldKind::Choice),
        field(Field::Count, "Count", FieldKind::Count { min: 1, max: MAX_COUNT }),
        field(Field::Names, "Names", FieldKind::Text { prompt: "names> " }),
    ];

    fn form(&mut self) -> &mut FormState<Field, ProvisionPlan> {
        &mut self.form
    }

    fn count(&mut self, field: Field) -> Option<&mut usize> {
        (field == Field::Count).then_some(&mut self.count)
    }

    fn text(&mut self, field: Field) -> Option<&mut String> {
        (field == Field::Names).then_some(&mut self.pattern)
    }

    /// Another provider lists its sources again; another role selects the source the config
    /// names for it.
    fn choose(&mut self, field: Field, forward: bool, shared: &Shared) -> Option<Vec<Effect>> {
        match field {
            Field::Provider => {
                self.provider = cycled(self.provider, self.providers.len(), forward);
                (self.sources, self.source) = (SourceList::Loading, 0);
                let list = |p: &ProviderChoice| ProvisionTask::ListSources {
                    cluster: self.cluster.clone(),
                    provider: p.name.clone(),
                };
                return Some(self.provider().map(list).map(task).into_iter().collect());
            }
            Field::Role => {
                self.role = match self.role {
                    MachineRole::Worker => MachineRole::Controlplane,
                    MachineRole::Controlplane => MachineRole::Worker,
                };
                self.select_configured_source(shared.config);
            }
            Field::Source => {
                if let SourceList::Ready(list) = &self.sources {
                    self.source = cycled(self.source, list.len(), forward);
                }
            }
            Field::Count | Field::Names => return None,
        }
        Some(Vec::new())
    }

    fn plan_task(&self, asked: u64, shared: &Shared) -> Effect {
        let request = PlanRequest {
            cluster: self.key.clone(),
            role: self.role,
            count: self.count,
            provider: self.provider().map(|p| p.name.clone()),
            name_pattern: Some(self.pattern.clone()),
        };
        task(ProvisionTask::Plan {
            cluster: self.cluster.clone(),
            asked,
            config: Box::new(self.planning_config(shared.config)),
            request,
        })
    }

    /// An empty pattern is the default one.
    fn typed(&mut self, _: Field) -> Step {
        if self.pattern.is_empty() {
            self.pattern = DEFAULT_NAME_PATTERN.to_string();
        }
        Step::default()
    }
}
