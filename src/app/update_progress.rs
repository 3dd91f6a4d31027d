//! The progress of the operation run from this console, in the update step: the approved run
//! starts it (its subjects' kind, timeout, cancel rule, a scale's tally, a CAPI-way upgrade's
//! phases), each
//! progress event folds into it, its end asks for what changed to be read again, and its keys
//! (Esc back while it goes on, `c` cancels after the current step). Pure.
use super::action::{Action, Effect, PollerRequest};
use super::actions::ActionRun;
use super::message::Message;
use super::screen::{Pane, Screen};
use super::state::{AppState, InputKind, Overlay};
use crate::approval::ApprovedAction;
use crate::operation::progress::{OperationProgress, ProgressEvent};
use crate::operation::{CancelRule, OperationKind, runner_events};

/// The progress of `run`, approved as `approved`, named `what`, starting now.
pub fn start(state: &mut AppState, approved: &ApprovedAction, run: &ActionRun, what: &str) {
    let cluster = approved.action().cluster();
    // A delete's words name its cluster already.
    let headline = match run {
        ActionRun::Delete(_) | ActionRun::Provision(_) => what.to_string(),
        _ => format!("{what} in {cluster}"),
    };
    // A CAPI fix is followed until its finding clears, with no stop between its steps.
    let kind = OperationKind::of(approved.action());
    let cancel = match run {
        ActionRun::CapiFix(_) => CancelRule::RunsToItsEnd,
        _ => kind.cancel(),
    };
    let now = state.wall_clock;
    let mut progress = OperationProgress::start(kind, cluster, what, headline, cancel, now);
    progress.timeout = run.timeout();
    match run {
        ActionRun::Node(_) => progress.subject_kind = "Node".into(),
        ActionRun::CapiScale(_) => progress.subject_kind = "Machines".into(),
        _ => {}
    }
    if let ActionRun::Etcd(plan) = run {
        progress.steps = runner_events::etcd_steps(plan);
    }
    if let ActionRun::CapiUpgrade(plan) = run {
        progress.steps = runner_events::capi_upgrade_steps(plan);
        progress.steps_word = "phases".into();
        progress.steps_title = "Phases".into();
    }
    if let ActionRun::Provision(plan) = run {
        let (cluster, provider) = (&plan.cluster, &plan.provider);
        let vms = runner_events::ProvisionSteps::new(cluster, provider, plan.vm_names.clone());
        vms.shape(&mut progress);
    }
    if let ActionRun::CapiScale(scale) = run {
        let (tally, checks) = runner_events::scale_start(&scale.plan);
        progress.tally = Some(tally);
        progress.checks = checks;
    }
    state.actions.progress = Some(progress);
}

/// One event of the running operation of `kind` (a create's progress is the create screen's);
/// its end reads again what it changed: discovery after a create (its contexts are written)
/// or a delete (they are gone), the management cluster after a scale or a CAPI-way upgrade.
pub fn on_event(state: &mut AppState, kind: OperationKind, event: ProgressEvent) -> Vec<Effect> {
    let now = state.wall_clock;
    let holder = match kind {
        OperationKind::Create => &mut state.create.progress,
        _ => &mut state.actions.progress,
    };
    let Some(progress) = holder.as_mut().filter(|p| p.kind == kind) else {
        return Vec::new();
    };
    let finished = matches!(event, ProgressEvent::Finished(_));
    if let ProgressEvent::Ask {
        about, question, ..
    } = &event
    {
        // Said on the message line too: the operator may be on another screen.
        state.message = Some(Message::warn(format!(
            "{about} {question} y confirms, n refuses"
        )));
    }
    progress.fold(now, event);
    let Some(result) = progress.outcome.as_ref().filter(|_| finished) else {
        return Vec::new();
    };
    let line = progress.lines.back().cloned().unwrap_or_default();
    let line = line.split_once("] ").map_or(line.as_str(), |(_, l)| l);
    let said = match result {
        Ok(_) if kind == OperationKind::Create => Message::info(format!(
            "{} is up; its contexts are written (reloading the fleet)",
            progress.cluster
        )),
        Ok(_) => Message::info(format!("{}: {line}", progress.what)),
        Err(_) => Message::error(format!("{}: {line}", progress.what)),
    };
    // A quit question asked while it ran stays on the message line until it is answered.
    if state.quit_question.is_none() {
        state.message = Some(said);
    }
    match kind {
        OperationKind::Create if result.is_ok() => vec![Effect::ReloadDiscovery],
        OperationKind::Delete => {
            // The cluster's contexts are gone: Esc goes to the fleet, which loses its row.
            if result.is_ok() {
                state.actions.back = Some(Screen::Fleet);
            }
            vec![Effect::ReloadDiscovery]
        }
        OperationKind::Scale | OperationKind::CapiUpgrade => {
            vec![Effect::Poller(PollerRequest::RefreshAll)]
        }
        _ => Vec::new(),
    }
}

/// `c` on the progress of a running operation: asks its runner to stop after the current
/// step (it says, when it stops, what state it leaves).
fn cancel(state: &mut AppState) -> Vec<Effect> {
    let now = state.wall_clock;
    let Some(progress) = state.actions.progress.as_mut().filter(|p| p.running()) else {
        state.message = Some(Message::info("no action runs from this console"));
        return Vec::new();
    };
    if !progress.cancellable() {
        state.message = Some(Message::warn(format!(
            "{} cannot be cancelled: it runs on its own runner until it ends",
            progress.what
        )));
        return Vec::new();
    }
    if progress.cancelling {
        return Vec::new();
    }
    progress.ask_cancel(now);
    state.message = Some(Message::warn(format!(
        "{}: cancelling after the current step",
        progress.what
    )));
    vec![Effect::CancelAction]
}

/// `x` on the progress: the action it offers (a failed VM's terminate) through the dispatcher.
fn take_offer(state: &mut AppState) -> Vec<Effect> {
    let offer = state
        .actions
        .progress
        .as_ref()
        .and_then(|p| p.offers.last());
    match offer {
        Some(offer) => vec![Effect::Gate(offer.action.clone())],
        None => {
            state.message = Some(Message::info("nothing is offered here"));
            Vec::new()
        }
    }
}

/// Keys on the progress: Esc back (the operation goes on), `c` cancels it after its current
/// step, `x` takes the action it offers, help, the command line.
pub fn on_key(state: &mut AppState, action: Action) -> Vec<Effect> {
    match action {
        Action::CancelAction => return cancel(state),
        Action::Provision(super::provision::ProvisionKey::Terminate) => return take_offer(state),
        Action::Back => state.screen = state.actions.back.unwrap_or(Screen::Cluster(Pane::Nodes)),
        Action::OpenHelp => state.overlay = Some(Overlay::Help { scroll: 0 }),
        Action::OpenCommandLine => state.open_input(InputKind::Command, String::new()),
        _ => {}
    }
    Vec::new()
}
