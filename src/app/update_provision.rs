//! The update step for provisioning: the wizard's fields, the plan asked of
//! the provider, Start and Terminate through the dispatcher, the runner's
//! events folded per cluster, and journals found at startup. Pure, like the
//! rest of update: IO is asked for as effects and answered as events.
use super::action::{Action, Effect, not_run};
use super::message::Message;
use super::plan_keys::not_approved;
use super::plan_screen::{AskedPlan, PlanGuards};
use super::provision::{
    Field, MAX_COUNT, ProviderChoice, ProvisionEffect, ProvisionKey, ProvisionUpdate,
    ProvisionView, SourceList, Wizard,
};
use super::screen::{Pane, Screen};
use super::state::{AppState, InputKind, Overlay};
use super::update_provision_guards as guards;
use crate::approval::{ApprovedAction, MutatingAction};
use crate::config::MachineRole;
use crate::provision::plan::DEFAULT_NAME_PATTERN;
use crate::provision::{PlanRequest, ProvisionEvent, ProvisionStage};

fn effect(e: ProvisionEffect) -> Vec<Effect> {
    vec![Effect::Provision(Box::new(e))]
}

/// `p` / `:provision`: the wizard for the cluster on screen (or selected on
/// the fleet); its progress pane instead while a provision runs there.
pub fn open_wizard(state: &mut AppState) -> Vec<Effect> {
    let name = state
        .cluster_on_screen()
        .map(str::to_string)
        .or_else(|| state.selected_cluster().map(|c| c.name.clone()));
    let Some(cluster) = name.and_then(|n| state.clusters.iter().find(|c| c.name == n).cloned())
    else {
        state.message = Some(Message::warn(
            "provision: choose a cluster first (:ctx NAME)",
        ));
        return Vec::new();
    };
    if state
        .provision
        .views
        .get(&cluster.name)
        .is_some_and(|v| v.running)
    {
        state.current = Some(cluster.name.clone());
        state.screen = Screen::Provision;
        state.message = Some(Message::info(format!(
            "a provision of {} is running; its VMs are shown",
            cluster.name
        )));
        return Vec::new();
    }
    let config = state.provision.config.clone();
    let key = crate::provision::cluster::config_key(&config, &cluster);
    let default = config.clusters.get(&key).and_then(|e| e.provider.clone());
    let mut providers: Vec<ProviderChoice> = config
        .providers
        .iter()
        .map(|(name, p)| ProviderChoice {
            name: name.clone(),
            kind: p.kind,
        })
        .collect();
    providers.sort_by_key(|p| Some(&p.name) != default.as_ref());
    let Some(first) = providers.first().map(|p| p.name.clone()) else {
        state.message = Some(Message::error(format!(
            "{}: no providers: add one under providers: (kind: opennebula or oneflow)",
            config.file_label()
        )));
        return Vec::new();
    };
    state.current = Some(cluster.name.clone());
    state.provision.wizard = Some(Wizard {
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
    state.screen = Screen::ProvisionWizard;
    effect(ProvisionEffect::ListSources {
        cluster: cluster.name,
        provider: first,
    })
}

/// `:provisions`: the VMs of the cluster in use.
pub fn show(state: &mut AppState) {
    let cluster = state.current.clone().unwrap_or_default();
    if state.provision.views.contains_key(&cluster) {
        state.screen = Screen::Provision;
    } else {
        state.message = Some(Message::info(format!(
            "no provision of {cluster:?} in this console; p opens the wizard"
        )));
    }
}

/// Keys on the wizard.
pub fn on_wizard(state: &mut AppState, action: Action) -> Vec<Effect> {
    let config = state.provision.config.clone();
    if let Some(effects) = guards::on_key(state, &action) {
        return effects;
    }
    let Some(w) = state.provision.wizard.as_mut() else {
        state.screen = Screen::Cluster(Pane::Nodes);
        return Vec::new();
    };
    let at = Field::ALL.iter().position(|f| *f == w.field).unwrap_or(0);
    let mut changed = false;
    let mut effects = Vec::new();
    match action {
        Action::MoveDown => w.field = Field::ALL[(at + 1).min(Field::ALL.len() - 1)],
        Action::MoveUp => w.field = Field::ALL[at.saturating_sub(1)],
        Action::Provision(ProvisionKey::More) => {
            w.count = (w.count + 1).min(MAX_COUNT);
            changed = true;
        }
        Action::Provision(ProvisionKey::Less) => {
            w.count = w.count.saturating_sub(1).max(1);
            changed = true;
        }
        Action::Provision(k @ (ProvisionKey::NextValue | ProvisionKey::PreviousValue)) => {
            let forward = k == ProvisionKey::NextValue;
            changed = true;
            match w.field {
                Field::Provider => {
                    let n = w.providers.len().max(1);
                    w.provider = if forward {
                        (w.provider + 1) % n
                    } else {
                        (w.provider + n - 1) % n
                    };
                    w.sources = SourceList::Loading;
                    w.source = 0;
                    if let Some(p) = w.provider() {
                        effects = effect(ProvisionEffect::ListSources {
                            cluster: w.cluster.clone(),
                            provider: p.name.clone(),
                        });
                    }
                }
                Field::Role => {
                    w.role = match w.role {
                        MachineRole::Worker => MachineRole::Controlplane,
                        MachineRole::Controlplane => MachineRole::Worker,
                    };
                    w.select_configured_source(&config);
                }
                Field::Source => {
                    if let SourceList::Ready(list) = &w.sources {
                        let n = list.len().max(1);
                        w.source = if forward {
                            (w.source + 1) % n
                        } else {
                            (w.source + n - 1) % n
                        };
                    }
                }
                Field::Count => {
                    w.count = if forward {
                        (w.count + 1).min(MAX_COUNT)
                    } else {
                        w.count.saturating_sub(1).max(1)
                    };
                }
                Field::Names => {
                    let text = w.pattern.clone();
                    state.open_input(InputKind::NamePattern, text);
                    return Vec::new();
                }
            }
        }
        Action::Provision(ProvisionKey::EditPattern) => {
            let text = w.pattern.clone();
            state.open_input(InputKind::NamePattern, text);
            return Vec::new();
        }
        Action::Provision(ProvisionKey::MakePlan) | Action::Submit => {
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
            return effect(ProvisionEffect::Plan {
                cluster: w.cluster.clone(),
                asked: w.asked,
                config: Box::new(w.planning_config(&config)),
                request,
            });
        }
        Action::Back => {
            state.provision.wizard = None;
            state.screen = Screen::Cluster(Pane::Nodes);
        }
        _ => {}
    }
    if changed && let Some(w) = state.provision.wizard.as_mut() {
        forget_plan(w);
    }
    effects
}

/// A field changed: the plan, its guards and their acknowledgements no longer hold.
fn forget_plan(w: &mut Wizard) {
    w.plan = AskedPlan::None;
    w.guards = PlanGuards::default();
}

/// Enter on the name pattern field.
pub fn set_pattern(state: &mut AppState, text: &str) {
    let Some(w) = state.provision.wizard.as_mut() else {
        return;
    };
    let text = text.trim();
    w.pattern = if text.is_empty() {
        DEFAULT_NAME_PATTERN.to_string()
    } else {
        text.to_string()
    };
    forget_plan(w);
}

/// Keys on the progress pane.
/// Lines PgUp/PgDn move the provision notes by.
const NOTES_PAGE: usize = 5;

pub fn on_progress(state: &mut AppState, action: Action) -> Vec<Effect> {
    let cluster = state.current.clone().unwrap_or_default();
    let Some(view) = state.provision.views.get_mut(&cluster) else {
        if matches!(action, Action::Back) {
            state.screen = Screen::Cluster(Pane::Nodes);
        }
        return Vec::new();
    };
    if view.scroll_notes(&action, NOTES_PAGE) {
        return Vec::new();
    }
    let last = view.vms.len().saturating_sub(1);
    let i = view.selected_index();
    let select = |view: &mut ProvisionView, to: usize| {
        view.selected = view.vms.get(to).map(|v| v.progress.name.clone());
    };
    match action {
        Action::MoveDown => select(view, (i + 1).min(last)),
        Action::MoveUp => select(view, i.saturating_sub(1)),
        Action::MoveFirst => select(view, 0),
        Action::MoveLast => select(view, last),
        Action::Provision(ProvisionKey::Terminate) => {
            let Some(vm) = view.selected_vm() else {
                return Vec::new();
            };
            let (stage, id) = (vm.progress.stage, vm.progress.id);
            match (stage, id) {
                (ProvisionStage::Failed, Some(id)) => {
                    return vec![Effect::Gate(MutatingAction::TerminateVm {
                        cluster: view.key.clone(),
                        provider: vm.provider.clone(),
                        vm: id.to_string(),
                    })];
                }
                (ProvisionStage::Failed, None) => {
                    state.message = Some(Message::info(
                        "this VM was never created: there is nothing to terminate",
                    ))
                }
                _ => {
                    state.message = Some(Message::info(format!(
                        "{} is {}: only a failed VM is terminated from here",
                        vm.progress.name,
                        stage.as_str()
                    )))
                }
            }
        }
        Action::Provision(ProvisionKey::Open) => return open_wizard(state),
        Action::Back => state.screen = Screen::Cluster(Pane::Nodes),
        Action::OpenHelp => state.overlay = Some(Overlay::Help { scroll: 0 }),
        Action::OpenCommandLine => state.open_input(InputKind::Command, String::new()),
        _ => {}
    }
    Vec::new()
}

/// The dispatcher approved a provision or a termination.
pub fn on_approved(state: &mut AppState, approved: ApprovedAction) -> Vec<Effect> {
    match approved.action() {
        MutatingAction::Provision { .. } => {
            if let Some(refused) = not_approved(state, Screen::ProvisionWizard, &approved) {
                return refused;
            }
            let Some((w, Some(plan))) =
                state.provision.wizard.as_ref().map(|w| (w, w.plan.ready()))
            else {
                return Vec::new();
            };
            let acks = w.guards.acks.clone();
            let (cluster, key, plan) = (w.cluster.clone(), w.key.clone(), Box::new(plan.clone()));
            let what = format!("{} {} node(s) via {}", plan.count, plan.role, plan.provider);
            let view = state
                .provision
                .views
                .entry(cluster.clone())
                .or_insert_with(|| ProvisionView::new(&cluster, &key, what.clone(), plan.count));
            view.start_run(what, plan.count);
            view.push_note(format!("provisioning: {}", plan.action().describe()));
            state.provision.wizard = None;
            state.current = Some(cluster.clone());
            state.screen = Screen::Provision;
            effect(ProvisionEffect::Start {
                cluster,
                approved,
                plan,
                acks,
            })
        }
        MutatingAction::TerminateVm { cluster: key, .. } => {
            let cluster = state
                .provision
                .views
                .values()
                .find(|v| &v.key == key)
                .map(|v| v.cluster.clone())
                .unwrap_or_else(|| key.clone());
            effect(ProvisionEffect::Terminate { cluster, approved })
        }
        _ => not_run(&approved, "no runner for this action in this version"),
    }
}

/// Folds what a provisioning task reported.
pub fn on_update(state: &mut AppState, update: ProvisionUpdate) {
    let now = state.wall_clock;
    match update {
        ProvisionUpdate::Sources {
            cluster,
            provider,
            result,
        } => {
            let config = state.provision.config.clone();
            let Some(w) = state.provision.wizard.as_mut() else {
                return;
            };
            if w.cluster != cluster || w.provider().map(|p| &p.name) != Some(&provider) {
                return;
            }
            w.sources = match result {
                Ok(list) => SourceList::Ready(list),
                Err(e) => SourceList::Failed(e),
            };
            w.source = 0;
            w.select_configured_source(&config);
        }
        ProvisionUpdate::Planned {
            cluster,
            asked,
            result,
            machine_config_endpoint,
        } => {
            if let Some(w) = state.provision.wizard.as_mut()
                && w.cluster == cluster
                && w.asked == asked
            {
                w.plan = match result {
                    Ok(plan) => AskedPlan::Ready(plan),
                    Err(e) => AskedPlan::Failed(e),
                };
                w.machine_config_endpoint = machine_config_endpoint;
                super::plan_keys::read_guards(state, Some(&cluster));
            }
        }
        ProvisionUpdate::Run {
            cluster,
            provider,
            role,
            event,
        } => {
            let Some(view) = state.provision.views.get_mut(&cluster) else {
                return;
            };
            match event {
                ProvisionEvent::Vm(progress) => view.fold_vm(&provider, &role, progress, now),
                ProvisionEvent::Note(note) => view.push_note(note),
                ProvisionEvent::Finished(summary) => {
                    view.succeeded = Some(summary.succeeded());
                    view.outcome = Some(summary.line());
                    view.push_note(summary.line());
                }
            }
        }
        ProvisionUpdate::Ended {
            cluster, result, ..
        } => {
            if let Some(view) = state.provision.views.get_mut(&cluster) {
                view.running = false;
                if let Err(e) = result
                    && view.outcome.is_none()
                {
                    view.succeeded = Some(false);
                    view.push_note(e.clone());
                    view.outcome = Some(e);
                }
            }
        }
        ProvisionUpdate::Journal {
            cluster,
            key,
            entries,
            following,
        } => {
            if state
                .provision
                .views
                .get(&cluster)
                .is_some_and(|v| v.running)
            {
                return;
            }
            let mut view = ProvisionView::from_journal(&cluster, &key, &entries);
            view.running = following;
            if following {
                view.push_note(format!(
                    "following {} unfinished VM(s) from the journal again",
                    view.unfinished().len()
                ));
                state.message = Some(Message::warn(format!(
                    "a provision of {cluster} did not finish: :ctx {cluster} then :provisions shows its VMs"
                )));
            }
            state.provision.views.insert(cluster, view);
        }
        ProvisionUpdate::Terminated {
            cluster,
            approved,
            result,
        } => {
            let provider = match approved.action() {
                MutatingAction::TerminateVm { provider, .. } => provider.clone(),
                _ => String::new(),
            };
            match result {
                Ok(progress) => {
                    state.message = Some(Message::info(format!("{} terminated", progress.name)));
                    if let Some(view) = state.provision.views.get_mut(&cluster) {
                        let role = view
                            .vms
                            .iter()
                            .find(|v| v.progress.id == progress.id)
                            .map(|v| v.role.clone())
                            .unwrap_or_default();
                        view.fold_vm(&provider, &role, progress, now);
                    }
                }
                Err(e) => {
                    state.message = Some(Message::error(format!("terminate: {e}")));
                    if let Some(view) = state.provision.views.get_mut(&cluster) {
                        view.push_note(format!("terminate failed: {e}"));
                    }
                }
            }
        }
    }
}

/// A wall-clock tick: VMs first seen before the clock was known get it.
/// Returns whether the progress pane shows the clock.
pub fn on_tick(state: &mut AppState) -> bool {
    let now = state.wall_clock;
    for view in state.provision.views.values_mut().filter(|v| v.running) {
        for vm in &mut view.vms {
            vm.seen_unix = vm.seen_unix.or(now);
        }
    }
    state.screen == Screen::Provision
}

#[cfg(test)]
#[path = "update_provision_tests.rs"]
mod tests;
