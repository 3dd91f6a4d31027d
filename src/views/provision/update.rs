//! The provision wizard as a screen module: its keys as data, and its pure update step — the
//! request's fields, the plan asked of the provider, and `a`, `s`, `?`, `r`, the typed
//! acknowledgement and the dispatcher's approval through the plan screens' one gate
//! (`app::plan_keys`). IO is asked for as screen tasks and answered as news.
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::{
    Field, MAX_COUNT, NAME, ProviderChoice, ProvisionNews, ProvisionScreen, ProvisionTask,
    SourceList, Typing, Wizard,
};
use crate::app::action::Effect;
use crate::app::actions::ActionRun;
use crate::app::binding::{Binding, Key, KeyLine, MOVE_KEYS, bind, intent, key_lines};
use crate::app::message::Message;
use crate::app::plan_keys::{
    GateKey, ack_step, gate_step, list_move, refused_approval, reread_guards,
};
use crate::app::plan_screen::{AskedPlan, GuardedPlan, PlanGuards};
use crate::app::screen::{Pane, Screen};
use crate::app::screens::{
    Ask, FleetChange, Opening, ScreenModule, ScreenName, ScreenNews, ScreenTask, Shared, Step,
};
use crate::approval::{ApprovedAction, MutatingAction};
use crate::config::MachineRole;
use crate::provision::PlanRequest;
use crate::provision::plan::DEFAULT_NAME_PATTERN;
use crate::tui::Look;

/// What the input line says while the name pattern is typed.
const PATTERN_PROMPT: &str = "names> ";

/// The wizard's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WizardKey {
    NextValue,
    PreviousValue,
    More,
    Less,
    /// Type the name pattern.
    EditPattern,
    /// Ask the provider for the plan.
    MakePlan,
    /// Move keys and `?` between the request's fields and the plan's guards.
    Focus,
    /// `?`: the selected guard explained while the guards have the keys, else help.
    Explain,
    /// A key of the plan screens' one gate.
    Gate(GateKey),
    Back,
}

#[rustfmt::skip]
static KEYS: &[Binding<WizardKey, ProvisionScreen>] = &[
    bind(&[Key::char('l'), Key::RIGHT], WizardKey::NextValue, "next value of the field (Names: edit)").footer("change"),
    bind(&[Key::char('h'), Key::LEFT], WizardKey::PreviousValue, "previous value of the field"),
    bind(&[Key::char('+')], WizardKey::More, "one VM more"),
    bind(&[Key::char('-')], WizardKey::Less, "one VM fewer"),
    bind(&[Key::TAB], WizardKey::Focus, "switch between the request's fields and the plan's guards").footer("focus"),
    bind(&[Key::char('a')], WizardKey::Gate(GateKey::Acknowledge), "type the acknowledgement a warning needs").footer("ack"),
    bind(&[Key::char('r')], WizardKey::Gate(GateKey::Refresh), "poll the cluster now (the guards follow its status)"),
    bind(&[Key::char('n')], WizardKey::EditPattern, "type the name pattern ({cluster}, {role}, {n})"),
    bind(&[Key::ENTER], WizardKey::MakePlan, "make the plan (asks the provider, checks the machine config)").footer("plan"),
    bind(&[Key::char('s')], WizardKey::Gate(GateKey::Start), "provision the plan (asks for the cluster name)").footer("start"),
    bind(&[Key::ESC], WizardKey::Back, "close the wizard").footer("back"),
    bind(&[Key::char('?')], WizardKey::Explain, "explain the selected guard (Tab to the guards; else help)").footer("why"),
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
        intent(KEYS, event).is_some() || intent(MOVE_KEYS, event).is_some()
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
        let default = config.clusters.get(&key).and_then(|e| e.provider.clone());
        let mut providers: Vec<ProviderChoice> = (config.providers.iter())
            .map(|(name, p)| ProviderChoice {
                name: name.clone(),
                kind: p.kind,
            })
            .collect();
        providers.sort_by_key(|p| Some(&p.name) != default.as_ref());
        let Some(first) = providers.first().map(|p| p.name.clone()) else {
            return Err(Message::error(format!(
                "{}: no providers: add one under providers: (kind: opennebula or oneflow)",
                config.file_label()
            )));
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
            field: Field::Provider,
            plan: AskedPlan::None,
            asked: 0,
            guards: PlanGuards::default(),
            guards_focused: false,
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
            let at = Field::ALL.iter().position(|f| *f == w.field).unwrap_or(0);
            if let Some(to) = list_move(w, *to, (at, Field::ALL.len()), shared) {
                w.field = Field::ALL[to];
            }
            return Step::default();
        }
        let Some(key) = intent(KEYS, event) else {
            return Step::default();
        };
        let gate = |w: &mut Wizard, key| gate_step(w, key, shared.page(), shared.readonly);
        let forward = matches!(key, WizardKey::NextValue | WizardKey::More);
        let mut step = Step::default();
        match key {
            WizardKey::Focus => {
                w.guards_focused = !w.guards_focused;
                return step;
            }
            WizardKey::Explain if w.guards_focused => return gate(w, GateKey::Explain),
            WizardKey::Explain => return Step::ask(Ask::Help),
            WizardKey::Gate(key) => {
                let step = gate(w, *key);
                if matches!(step.ask, Some(Ask::Input { .. })) {
                    self.typing = Some(Typing::Acknowledgement);
                }
                return step;
            }
            WizardKey::More | WizardKey::Less => w.count = counted(w.count, forward),
            WizardKey::NextValue | WizardKey::PreviousValue => match w.field {
                Field::Provider => {
                    w.provider = cycled(w.provider, w.providers.len(), forward);
                    w.sources = SourceList::Loading;
                    w.source = 0;
                    if let Some(p) = w.provider() {
                        step = Step::effects(vec![task(ProvisionTask::ListSources {
                            cluster: w.cluster.clone(),
                            provider: p.name.clone(),
                        })]);
                    }
                }
                Field::Role => {
                    w.role = match w.role {
                        MachineRole::Worker => MachineRole::Controlplane,
                        MachineRole::Controlplane => MachineRole::Worker,
                    };
                    w.select_configured_source(shared.config);
                }
                Field::Source => {
                    if let SourceList::Ready(list) = &w.sources {
                        w.source = cycled(w.source, list.len(), forward);
                    }
                }
                Field::Count => w.count = counted(w.count, forward),
                Field::Names => return self.edit_pattern(),
            },
            WizardKey::EditPattern => return self.edit_pattern(),
            WizardKey::MakePlan => {
                w.asked += 1;
                w.plan = AskedPlan::Planning(w.asked);
                w.guards.shown.clear();
                let request = PlanRequest {
                    cluster: w.key.clone(),
                    role: w.role,
                    count: w.count,
                    provider: w.provider().map(|p| p.name.clone()),
                    name_pattern: Some(w.pattern.clone()),
                };
                return Step::effects(vec![task(ProvisionTask::Plan {
                    cluster: w.cluster.clone(),
                    asked: w.asked,
                    config: Box::new(w.planning_config(shared.config)),
                    request,
                })]);
            }
            WizardKey::Back => {
                self.wizard = None;
                return Step::close();
            }
        }
        forget_plan(w);
        step
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
            }) if w.cluster == *cluster && w.asked == *asked => {
                w.plan = match result.clone() {
                    Ok(plan) => AskedPlan::Ready(plan),
                    Err(e) => AskedPlan::Failed(e),
                };
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
        let Some(w) = self.wizard.as_mut() else {
            return Step::default();
        };
        match self.typing.take() {
            Some(Typing::Pattern) => {
                let text = text.trim();
                w.pattern = if text.is_empty() {
                    DEFAULT_NAME_PATTERN.to_string()
                } else {
                    text.to_string()
                };
                forget_plan(w);
                Step::default()
            }
            Some(Typing::Acknowledgement) => ack_step(w, text, shared),
            None => Step::default(),
        }
    }

    /// The dispatcher approved a provision: it runs when it is the plan on screen and its
    /// guards still allow it, the wizard closing for the progress.
    fn on_approved(&mut self, approved: &ApprovedAction, _shared: &Shared) -> Option<Step> {
        if !matches!(approved.action(), MutatingAction::Provision { .. }) {
            return None;
        }
        let shown = self.wizard.as_ref().map(|w| w as &dyn GuardedPlan);
        if let Some(refused) = refused_approval(shown, approved) {
            return Some(refused);
        }
        let w = self.wizard.take()?;
        let plan = w.plan.ready()?.clone();
        Some(Step {
            effects: vec![Effect::RunAction {
                approved: approved.clone(),
                run: Box::new(ActionRun::Provision(Box::new(plan))),
                acks: w.guards.acks,
            }],
            ..Step::close()
        })
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

impl ProvisionScreen {
    /// The input line holds the name pattern.
    fn edit_pattern(&mut self) -> Step {
        let Some(w) = self.wizard.as_ref() else {
            return Step::default();
        };
        self.typing = Some(Typing::Pattern);
        Step::ask(Ask::Input {
            prompt: PATTERN_PROMPT,
            text: w.pattern.clone(),
        })
    }
}

/// The choice after `at` of `n` (before it, going back), wrapping around.
fn cycled(at: usize, n: usize, forward: bool) -> usize {
    let n = n.max(1);
    if forward {
        (at + 1) % n
    } else {
        (at + n - 1) % n
    }
}

/// One VM more or fewer, between 1 and [`MAX_COUNT`].
fn counted(count: usize, more: bool) -> usize {
    if more {
        (count + 1).min(MAX_COUNT)
    } else {
        count.saturating_sub(1).max(1)
    }
}

/// A field changed: the plan, its guards and their acknowledgements no longer hold.
fn forget_plan(w: &mut Wizard) {
    w.plan = AskedPlan::None;
    w.guards = PlanGuards::default();
}
