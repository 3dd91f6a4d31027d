//! The provision wizard's keys as data, and its pure update step: what it says of itself as a
//! wizard on the one plan screen (`views::wizard`: its fields, its plan beside the request,
//! asked of the provider, its guards over live status, the approved provision run on the one
//! runner). IO is asked for as screen tasks and answered as news.
use super::{
    Field, NAME, NewNodes, ProvisionNews, ProvisionScreen, ProvisionTask, SourceList, Wizard,
};
use crate::app::action::Effect;
use crate::app::actions::ActionRun;
use crate::app::binding::{Binding, Key, bind};
use crate::app::message::Message;
use crate::app::plan_screen::{GuardReading, PlanHolder};
use crate::app::screen::{Pane, Screen};
use crate::app::screens::{Opening, ScreenName, ScreenTask, Shared, Step};
use crate::approval::MutatingAction;
use crate::config::MachineRole;
use crate::guards::Guard;
use crate::provision::cluster::{cluster_addresses, guards_over_status};
use crate::provision::plan::DEFAULT_NAME_PATTERN;
use crate::provision::{MAX_COUNT, PlanRequest, ProvisionPlan};
use crate::views::form::{self, FieldKind, FormField, FormKey, ProviderChoice, cycled, field};
use crate::views::wizard::{Draw, WizardKind};

/// The request's keys; the plan's beside them (`a`, `s`, `r`, `?`, Esc) are the one gate's.
#[rustfmt::skip]
static KEYS: &[Binding<FormKey, ProvisionScreen>] = &[
    bind(&[Key::char('l'), Key::RIGHT], FormKey::NextValue, "next value of the field (Names: edit)").footer("change"),
    bind(&[Key::char('h'), Key::LEFT], FormKey::PreviousValue, "previous value of the field"),
    bind(&[Key::char('+')], FormKey::More, "one VM more"),
    bind(&[Key::char('-')], FormKey::Less, "one VM fewer"),
    bind(&[Key::char('n')], FormKey::Edit, "type the name pattern ({cluster}, {role}, {n})"),
    bind(&[Key::ENTER], FormKey::MakePlan, "make the plan (asks the provider, checks the machine config)").footer("plan"),
];

fn task(task: ProvisionTask) -> Effect {
    Effect::Screen(ScreenTask::new(NAME, task))
}

/// What the provision says of itself as a wizard: its plan beside the request, asked of the
/// headless command's planner, opened on a cluster with its sources asked for, the sources and
/// the plan as news; its fields' rows and kinds, the count within [`MAX_COUNT`], the provider,
/// role and source Left/Right cycle.
impl WizardKind for NewNodes {
    const NAME: ScreenName = NAME;
    const TITLE: &'static str = "Provision wizard (p, :provision)";
    const PLAN_APART: bool = false;
    const HOME: Screen = Screen::Cluster(Pane::Nodes);
    const OF_CLUSTER_IN_USE: bool = true;
    const CLOSED: &'static str = "No provision wizard open. p opens it from a cluster.";
    const MAKE: &'static str = "Enter makes the plan, s then provisions";
    #[rustfmt::skip]
    const FIELDS: &'static [FormField<Field, Self>] = &[
        field(Field::Provider, "Provider", FieldKind::Choice),
        field(Field::Role, "Role", FieldKind::Choice),
        field(Field::Source, "Source", FieldKind::Choice),
        field(Field::Count, "Count", FieldKind::Count { min: 1, max: MAX_COUNT, value: |w| &mut w.count }),
        field(Field::Names, "Names", FieldKind::Text { prompt: "names> ", value: |w| &mut w.pattern }),
    ];
    const ACTION: fn(&ProvisionPlan) -> MutatingAction = ProvisionPlan::action;
    const RUN: fn(Box<ProvisionPlan>) -> ActionRun = ActionRun::Provision;
    const KEYS: &'static [Binding<FormKey, ProvisionScreen>] = KEYS;
    const DRAW: Draw<Self> = super::view::draw;
    type Field = Field;
    type Plan = ProvisionPlan;
    type News = ProvisionNews;

    /// The wizard for the cluster the opening names (`app::provision::open` resolves it), its
    /// own provider first; the provider's sources asked for.
    fn open(opening: &Opening, shared: &Shared) -> Result<(NewNodes, Step), Message> {
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
        let wizard = NewNodes {
            cluster: cluster.name.clone(),
            key,
            providers,
            provider: 0,
            role: MachineRole::Worker,
            sources: SourceList::Loading,
            source: 0,
            count: 1,
            pattern: DEFAULT_NAME_PATTERN.to_string(),
            machine_config_endpoint: None,
        };
        let list = ProvisionTask::ListSources {
            cluster: cluster.name.clone(),
            provider: first,
        };
        Ok((wizard, Step::effects(vec![task(list)])))
    }

    fn cluster(&self) -> &str {
        &self.cluster
    }

    fn on_news(h: &mut PlanHolder<Wizard>, news: &ProvisionNews, shared: &Shared) -> (bool, Step) {
        let changed = match news {
            ProvisionNews::Sources {
                cluster,
                provider,
                result,
            } if h.cluster == *cluster && h.provider().map(|p| &p.name) == Some(provider) => {
                h.sources = match result.clone() {
                    Ok(list) => SourceList::Ready(list),
                    Err(e) => SourceList::Failed(e),
                };
                h.source = 0;
                h.select_configured_source(shared.config);
                true
            }
            ProvisionNews::Planned {
                cluster,
                asked,
                result,
                machine_config_endpoint,
            } if h.cluster == *cluster && h.form.answer(*asked, result.clone()) => {
                h.machine_config_endpoint = machine_config_endpoint.clone();
                h.evaluate_guards(&shared.guards.guard_reading(cluster));
                true
            }
            _ => false,
        };
        (changed, Step::default())
    }

    /// The list `provision --plan` prints over the fleet model's live status, the same list the
    /// headless command checks.
    fn guards_over(&self, plan: Option<&ProvisionPlan>, reading: &GuardReading<'_>) -> Vec<Guard> {
        let live = reading.live.filter(|l| l.has_data());
        let (Some(plan), Some(live)) = (plan, live) else {
            return Vec::new();
        };
        let addresses = (reading.discovered)
            .map(cluster_addresses)
            .unwrap_or_default();
        guards_over_status(
            plan,
            reading.config,
            &addresses,
            &live.status,
            self.machine_config_endpoint.as_deref(),
            reading.capi_owner,
        )
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
