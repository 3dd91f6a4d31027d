//! The provision wizard as a screen module: its keys as data, and its pure update step — the
//! request's fields (through the wizards' one form, `views::form`), the plan asked of the
//! provider, and `a`, `s`, `?`, `r`, the typed acknowledgement and the dispatcher's approval
//! through the plan screens' one gate (`app::plan_keys`). IO is asked for as screen tasks and
//! answered as news.
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::{
    Field, MAX_COUNT, NAME, ProvisionNews, ProvisionScreen, ProvisionTask, SourceList, Wizard,
};
use crate::app::action::Effect;
use crate::app::actions::ActionRun;
use crate::app::binding::{
    Binding, Key, KeyLine, MOVE_KEYS, bind, binds_with_moves, intent, key_lines,
};
use crate::app::message::Message;
use crate::app::plan_keys::{GateKey, approved_step, reread_guards};
use crate::app::screen::{Pane, Screen};
use crate::app::screens::{
    Ask, FleetChange, Opening, ScreenModule, ScreenName, ScreenNews, ScreenTask, Shared, Step,
};
use crate::approval::{ApprovedAction, MutatingAction};
use crate::config::MachineRole;
use crate::provision::plan::DEFAULT_NAME_PATTERN;
use crate::provision::{PlanRequest, ProvisionPlan};
use crate::tui::Look;
use crate::views::form::{
    self, FieldKind, Form, FormField, FormKey, FormState, ProviderChoice, cycled, field,
};

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

impl ScreenModule for ProvisionScreen {
    fn name(&self) -> ScreenName {
        NAME
    }

    fn title(&self) -> &'static str {
        "Provision wizard (p, :provision)"
    }

    fn keys(&self) -> Vec<KeyLine> {
        let mut lines = key_lines(MOVE_KEYS, &());
        lines.extend(key_lines(KEYS, self));
        lines
    }

    fn binds(&self, event: &KeyEvent) -> bool {
        binds_with_moves(KEYS, event)
    }

    fn open(&mut self, _shared: &Shared) -> Result<Step, Message> {
        Err(Message::warn(
            "provision: choose a cluster first (:ctx NAME)",
        ))
    }

    /// The wizard for the cluster the opening names (`app::provision::open` resolves it), its
    /// own provider first; the provider's sources asked for.
    fn open_from(&mut self, opening: &Opening, shared: &Shared) -> Result<Step, Message> {
        let wanted = opening.words.get(1);
        let Some(cluster) = shared.clusters.iter().find(|c| Some(&c.name) == wanted) else {
            return self.open(shared);
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
        self.wizard = Some(Wizard {
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
        });
        let list = ProvisionTask::ListSources {
            cluster: cluster.name.clone(),
            provider: first,
        };
        Ok(Step::effects(vec![task(list)]))
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        let Some(w) = self.wizard.as_mut() else {
            return Step::close();
        };
        if let Some(to) = intent(MOVE_KEYS, event) {
            form::move_step(w, *to, shared.page(), shared);
            return Step::default();
        }
        let Some(key) = intent(KEYS, event) else {
            return Step::default();
        };
        match key {
            FormKey::Focus => w.form.guards_focused = !w.form.guards_focused,
            FormKey::Explain if w.form.guards_focused => {
                return form::key_step(w, FormKey::Gate(GateKey::Explain), shared)
                    .unwrap_or_default();
            }
            FormKey::Explain => return Step::ask(Ask::Help),
            FormKey::Back => {
                self.wizard = None;
                return Step::close();
            }
            key => return form::key_step(w, *key, shared).unwrap_or_default(),
        }
        Step::default()
    }

    fn on_news(&mut self, news: &ScreenNews, shared: &Shared) -> bool {
        let Some(w) = self.wizard.as_mut() else {
            return false;
        };
        match news.get::<ProvisionNews>() {
            Some(ProvisionNews::Sources {
                cluster,
                provider,
                result,
            }) => {
                if w.cluster != *cluster || w.provider().map(|p| &p.name) != Some(provider) {
                    return false;
                }
                w.sources = match result.clone() {
                    Ok(list) => SourceList::Ready(list),
                    Err(e) => SourceList::Failed(e),
                };
                w.source = 0;
                w.select_configured_source(shared.config);
                true
            }
            Some(ProvisionNews::Planned {
                cluster,
                asked,
                result,
                machine_config_endpoint,
            }) if w.cluster == *cluster && w.form.answer(*asked, result.clone()) => {
                w.machine_config_endpoint = machine_config_endpoint.clone();
                reread_guards(w, shared);
                true
            }
            _ => false,
        }
    }

    /// The guards follow the status of the wizard's cluster (and the Cluster API's, of any).
    fn on_fleet_change(&mut self, change: &FleetChange, shared: &Shared) -> bool {
        let Some(w) = self.wizard.as_mut() else {
            return false;
        };
        (w.cluster == change.cluster || change.capi) && reread_guards(w, shared)
    }

    /// Enter on the input line the wizard opened: the name pattern or an acknowledgement.
    fn on_input(&mut self, text: &str, shared: &Shared) -> Step {
        (self.wizard.as_mut()).map_or_else(Step::default, |w| form::input_step(w, text, shared))
    }

    /// The dispatcher approved a provision: it runs when it is the plan on screen and its
    /// guards, read again, still allow it (the one gate's rule), the wizard closing for the
    /// progress.
    fn on_approved(&mut self, approved: &ApprovedAction, shared: &Shared) -> Option<Step> {
        if !matches!(approved.action(), MutatingAction::Provision { .. }) {
            return None;
        }
        let step = approved_step(self.wizard.as_mut(), approved, shared, |w| {
            let plan = (w.form.plan.ready()).ok_or("the plan is not ready")?;
            Ok(ActionRun::Provision(Box::new(plan.clone())))
        });
        if step.close {
            self.wizard = None;
        }
        Some(step)
    }

    fn of_cluster_in_use(&self) -> bool {
        true
    }

    fn home(&self) -> Screen {
        Screen::Cluster(Pane::Nodes)
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
