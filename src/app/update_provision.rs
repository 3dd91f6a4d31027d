//! Provisions on the shell's side: `p` / `:provision` opening the wizard (`views::provision`)
//! or the provision running there, the approved provision or terminate started on the one
//! runner and progress screen, and the VMs a killed console's journals left shown there. Pure.
use super::action::{Effect, not_run};
use super::actions::ActionRun;
use super::message::Message;
use super::plan_keys::refused_approval;
use super::provision::JournalVms;
use super::screen::{Pane, Screen, TableKind};
use super::screens::ScreenName;
use super::state::AppState;
use crate::approval::{ApprovedAction, MutatingAction};
use crate::operation::OperationKind;
use crate::operation::progress::{OperationProgress, ProgressEvent};
use crate::operation::runner_events::ProvisionSteps;
use crate::provision::ProvisionEvent;

/// The provision wizard's screen module (`views::provision`), by name.
const NAME: ScreenName = "provision";

/// `p` / `:provision`: the wizard for the cluster on screen (or selected on the fleet); the
/// progress of its provision instead while one runs there.
pub fn open(state: &mut AppState) -> Vec<Effect> {
    let name = state
        .cluster_on_screen()
        .map(str::to_string)
        .or_else(|| super::tables::selected_key(state, TableKind::Clusters));
    let Some(cluster) = name.filter(|n| state.clusters.iter().any(|c| &c.name == n)) else {
        state.message = Some(Message::warn(
            "provision: choose a cluster first (:ctx NAME)",
        ));
        return Vec::new();
    };
    if let Some(progress) = provision_of(state, &cluster).filter(|p| p.running()) {
        state.message = Some(Message::info(format!(
            "a provision of {} is running; its VMs are shown",
            progress.cluster
        )));
        show_progress(state, &cluster);
        return Vec::new();
    }
    let effects = super::shell::open_with(state, NAME, vec![NAME.into(), cluster.clone()]);
    if state.screen == Screen::Module(NAME) {
        state.current = Some(cluster);
    }
    effects
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

/// The dispatcher approved a provision (the wizard's plan on screen, which says whether it
/// still holds) or a termination: its run on the console's one runner, its progress on the
/// one progress screen.
pub fn on_approved(state: &mut AppState, approved: ApprovedAction) -> Vec<Effect> {
    let effects = match approved.action() {
        MutatingAction::Provision { .. } => match super::shell::on_approved(state, &approved) {
            Some(effects) => effects,
            None => {
                let refused = refused_approval(None, &approved).unwrap_or_default();
                state.message = refused.message;
                return refused.effects;
            }
        },
        MutatingAction::TerminateVm { .. } => vec![Effect::RunAction {
            approved: approved.clone(),
            run: Box::new(ActionRun::TerminateVm),
            acks: Vec::new(),
        }],
        _ => return not_run(&approved, "no runner for this action in this version"),
    };
    let cluster = state.current.clone().unwrap_or_default();
    for effect in &effects {
        let Effect::RunAction { approved, run, .. } = effect else {
            continue;
        };
        let what = match run.as_ref() {
            ActionRun::Provision(plan) => format!(
                "Provision of {cluster}, {} {} node(s) via {}",
                plan.count, plan.role, plan.provider
            ),
            _ => approved.action().describe(),
        };
        super::update_progress::start(state, approved, run, &what);
        show_progress(state, &cluster);
    }
    effects
}

/// What the journals left, on the one progress screen (unless an operation runs here): each
/// VM a step in its last known state, a failed one offering its terminate; while some are
/// followed again the progress runs and the operator is told where to look.
pub fn from_journals(state: &mut AppState, JournalVms { clusters, vms }: JournalVms) {
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
    for (key, entry) in &vms {
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
