//! The update step for provisioning: the wizard's fields, the plan asked of the provider,
//! Start and a failed VM's terminate through the dispatcher onto the one runner and progress
//! screen, and unfinished VMs a journal left followed there. Pure, like the rest of update:
//! IO is asked for as effects and answered as events.
use super::action::{Action, Effect, not_run};
use super::actions::ActionRun;
use super::message::Message;
use super::plan_keys::{not_approved, plan_key};
use super::plan_screen::{AskedPlan, PlanGuards};
use super::provision::{
    Field, MAX_COUNT, ProviderChoice, ProvisionEffect, ProvisionKey, ProvisionUpdate, SourceList,
    Wizard,
};
use super::screen::{Pane, Screen, TableKind};
use super::state::{AppState, InputKind};
use crate::approval::{ApprovedAction, MutatingAction};
use crate::config::MachineRole;
use crate::operation::OperationKind;
use crate::operation::progress::OperationProgress;
use crate::operation::progress::ProgressEvent;
use crate::operation::runner_events::ProvisionSteps;
use crate::provision::plan::DEFAULT_NAME_PATTERN;
use crate::provision::{JournalEntry, PlanRequest, ProvisionEvent};

fn effect(e: ProvisionEffect) -> Vec<Effect> {
    vec![Effect::Provision(Box::new(e))]
}

/// `p` / `:provision`: the wizard for the cluster on screen (or selected on
/// the fleet); the progress of its provision instead while one runs there.
pub fn open_wizard(state: &mut AppState) -> Vec<Effect> {
    let name = state
        .cluster_on_screen()
        .map(str::to_string)
        .or_else(|| super::tables::selected_key(state, TableKind::Clusters));
    let Some(cluster) = name.and_then(|n| state.clusters.iter().find(|c| c.name == n).cloned())
    else {
        state.message = Some(Message::warn(
            "provision: choose a cluster first (:ctx NAME)",
        ));
        return Vec::new();
    };
    if let Some(progress) = provision_of(state, &cluster.name).filter(|p| p.running()) {
        state.message = Some(Message::info(format!(
            "a provision of {} is running; its VMs are shown",
            progress.cluster
        )));
        show_progress(state, &cluster.name);
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

/// The progress on the one progress screen when it is a provision of `cluster` (a run names
/// it by its key in taloscope's config).
fn provision_of<'a>(state: &'a AppState, cluster: &str) -> Option<&'a OperationProgress> {
    let key = state
        .clusters
        .iter()
        .find(|c| c.name == cluster)
        .map(|c| crate::provision::cluster::config_key(&state.provision.config, c));
    state.actions.progress.as_ref().filter(|p| {
        p.kind == OperationKind::Provision
            && (p.cluster == cluster || Some(&p.cluster) == key.as_ref())
    })
}

/// The one progress screen, for `cluster`; Esc leads back to its nodes.
fn show_progress(state: &mut AppState, cluster: &str) {
    state.current = Some(cluster.to_string());
    state.actions.back = Some(Screen::Cluster(Pane::Nodes));
    state.screen = Screen::Action;
}

/// `:provisions`: the VMs of the cluster in use, on the progress of its provision.
pub fn show(state: &mut AppState) {
    let cluster = state.current.clone().unwrap_or_default();
    if provision_of(state, &cluster).is_some() {
        show_progress(state, &cluster);
    } else {
        state.message = Some(Message::info(format!(
            "no provision of {cluster:?} in this console; p opens the wizard"
        )));
    }
}

/// Keys on the wizard: Tab between the request's fields and the plan's guards, then every
/// plan screen's keys (`plan_key`: moves while the guards have them, `a`, `s`, `?`, `r`),
/// then the fields'.
pub fn on_wizard(state: &mut AppState, action: Action) -> Vec<Effect> {
    let config = state.provision.config.clone();
    let Some(w) = state.provision.wizard.as_mut() else {
        state.screen = Screen::Cluster(Pane::Nodes);
        return Vec::new();
    };
    if matches!(action, Action::NextPane) {
        w.guards_focused = !w.guards_focused;
        return Vec::new();
    }
    if let Some(effects) = plan_key(state, &action) {
        return effects;
    }
    let Some(w) = state.provision.wizard.as_mut() else {
        return Vec::new();
    };
    let at = Field::ALL.iter().position(|f| *f == w.field).unwrap_or(0);
    let mut changed = false;
    let mut effects = Vec::new();
    match action {
        Action::MoveDown => w.field = Field::ALL[(at + 1).min(Field::ALL.len() - 1)],
        Action::MoveUp => w.field = Field::ALL[at.saturating_sub(1)],
        Action::Provision(k @ (ProvisionKey::More | ProvisionKey::Less)) => {
            w.count = counted(w.count, k == ProvisionKey::More);
            changed = true;
        }
        Action::Provision(k @ (ProvisionKey::NextValue | ProvisionKey::PreviousValue)) => {
            let forward = k == ProvisionKey::NextValue;
            changed = true;
            match w.field {
                Field::Provider => {
                    w.provider = cycled(w.provider, w.providers.len(), forward);
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
                        w.source = cycled(w.source, list.len(), forward);
                    }
                }
                Field::Count => w.count = counted(w.count, forward),
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
            let (acks, cluster) = (w.guards.acks.clone(), w.cluster.clone());
            let what = format!(
                "Provision of {cluster}, {} {} node(s) via {}",
                plan.count, plan.role, plan.provider
            );
            let run = ActionRun::Provision(Box::new(plan.clone()));
            state.provision.wizard = None;
            run_on_progress(state, approved, run, (&cluster, &what), acks)
        }
        MutatingAction::TerminateVm { .. } => {
            let cluster = state.current.clone().unwrap_or_default();
            let what = approved.action().describe();
            run_on_progress(
                state,
                approved,
                ActionRun::TerminateVm,
                (&cluster, &what),
                Vec::new(),
            )
        }
        _ => not_run(&approved, "no runner for this action in this version"),
    }
}

/// `run` on the console's one runner, its progress on the one progress screen.
fn run_on_progress(
    state: &mut AppState,
    approved: ApprovedAction,
    run: ActionRun,
    (cluster, what): (&str, &str),
    acks: Vec<String>,
) -> Vec<Effect> {
    super::update_progress::start(state, &approved, &run, what);
    show_progress(state, cluster);
    vec![Effect::RunAction {
        approved,
        run: Box::new(run),
        acks,
    }]
}

/// Folds what a provisioning task reported.
pub fn on_update(state: &mut AppState, update: ProvisionUpdate) {
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
        ProvisionUpdate::FromJournals { clusters, vms } => from_journals(state, &clusters, &vms),
    }
}

/// What the journals left, on the one progress screen (unless an operation runs here): each
/// VM a step in its last known state, a failed one offering its terminate; while some are
/// followed again the progress runs and the operator is told where to look.
fn from_journals(state: &mut AppState, clusters: &[String], vms: &[(String, JournalEntry)]) {
    let Some(cluster) = clusters.first().filter(|_| !state.actions.running()) else {
        return;
    };
    let names: Vec<String> = vms.iter().map(|(_, e)| e.progress.name.clone()).collect();
    let following = vms.iter().any(|(_, e)| !e.progress.stage.is_final());
    let left = if following {
        "the unfinished followed again"
    } else {
        "failed"
    };
    let headline = format!(
        "Provision of {}, {} VM(s) from the journal, {left}",
        clusters.join(", "),
        vms.len()
    );
    let (kind, now) = (OperationKind::Provision, state.wall_clock);
    let mut progress = OperationProgress::start(
        kind,
        cluster,
        &headline,
        headline.clone(),
        kind.cancel(),
        now,
    );
    ProvisionSteps::new(cluster, "", names.clone()).shape(&mut progress);
    for (key, entry) in vms {
        let mut steps = ProvisionSteps::new(key, &entry.provider, names.clone());
        for event in steps.events(&ProvisionEvent::Vm(entry.progress.clone())) {
            progress.fold(now, event);
        }
    }
    if following {
        state.message = Some(Message::warn(format!(
            "a provision of {cluster} did not finish: :ctx {cluster} then :provisions shows its VMs"
        )));
    } else {
        let end = format!("{} VM(s) failed: x terminates one", vms.len());
        progress.fold(now, ProgressEvent::Finished(Err(end)));
    }
    state.actions.progress = Some(progress);
}

#[cfg(test)]
#[path = "update_provision_tests.rs"]
mod tests;
