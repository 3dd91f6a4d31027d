//! The progress of the operation run from this console, in the update step: the approved run
//! starts it (its subjects' kind, timeout, cancel rule, a scale's tally, a CAPI-way upgrade's
//! phases, an upgrade's nodes, a create's phases), a journal an upgrade left shows it
//! interrupted, each progress event folds into it, its end asks for what changed to be read
//! again, and its keys (Esc back while it goes on, `c` cancels after the current step, Space
//! pauses an upgrade after it and `r` resumes it, or resumes the journal's, `y` / `n` answer
//! what it asks). Pure.
use super::action::{Action, Effect, PollerCommand};
use super::actions::ActionRun;
use super::message::Message;
use super::screen::{Pane, Screen};
use super::state::{AppState, InputKind, Overlay};
use crate::approval::{ApprovedAction, MutatingAction};
use crate::operation::progress::{OperationProgress, ProgressEvent, StepRow};
use crate::operation::{CancelRule, OperationKind, runner_events};
use crate::rollout::{RolloutKind, RolloutSummary, StepProgress};
use crate::upgrade::{RolloutInProgress, RunOptions};

/// The progress of `run`, approved as `approved`, named `what`, starting now.
pub fn start(state: &mut AppState, approved: &ApprovedAction, run: &ActionRun, what: &str) {
    let cluster = approved.action().cluster();
    // A delete's and a create's words name its cluster already.
    let headline = match run {
        ActionRun::Delete(_) | ActionRun::Provision(_) | ActionRun::Create(_) => what.to_string(),
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
        ActionRun::Etcd(plan) => progress.steps = runner_events::etcd_steps(plan),
        ActionRun::CapiUpgrade(plan) => {
            progress.steps = runner_events::capi_upgrade_steps(plan);
            (progress.steps_word, progress.steps_title) = ("phases".into(), "Phases".into());
        }
        ActionRun::Provision(plan) => {
            let (cluster, provider) = (&plan.cluster, &plan.provider);
            let vms = runner_events::ProvisionSteps::new(cluster, provider, plan.vm_names.clone());
            vms.shape(&mut progress);
        }
        ActionRun::CapiScale(scale) => {
            progress.subject_kind = "Machines".into();
            let (tally, checks) = runner_events::scale_start(&scale.plan);
            (progress.tally, progress.checks) = (Some(tally), checks);
        }
        ActionRun::Upgrade(plan) => rollout_steps(&mut progress, &plan.steps()),
        ActionRun::Create(plan) => {
            progress.steps = runner_events::create_steps();
            progress.steps_word = "phases".into();
            progress.steps_title = format!("Create of {}", plan.cluster);
            // Opened from the fleet, where Esc leads back (the new cluster shows there).
            state.actions.back = Some(Screen::Fleet);
        }
        ActionRun::ConfigPatch(plan) => {
            progress.steps = plan.steps().iter().map(|s| StepRow::pending(s)).collect();
            progress.step_timeout =
                Some(crate::node_actions::NodeActionOptions::console().node_timeout);
            (progress.steps_word, progress.steps_title) = ("nodes".into(), "Nodes".into());
        }
        _ => {}
    }
    state.actions.progress = Some(progress);
    state.progress_scroll = Default::default();
}

/// An in-place upgrade's steps (node and what it does) and the bound of each.
fn rollout_steps(progress: &mut OperationProgress, steps: &[StepProgress]) {
    progress.steps = runner_events::rollout_steps(steps);
    progress.step_timeout = Some(RunOptions::default().node_timeout);
    if progress.kind == OperationKind::TalosUpgrade {
        progress.steps_word = "nodes".into();
        progress.steps_title = "Nodes".into();
    }
}

fn is_rollout(progress: &OperationProgress) -> bool {
    matches!(
        progress.kind,
        OperationKind::TalosUpgrade | OperationKind::KubernetesUpgrade
    )
}

/// The in-place upgrade this console shows, running or left in a journal.
fn rollout(state: &AppState) -> Option<&OperationProgress> {
    state.actions.progress.as_ref().filter(|p| is_rollout(p))
}

/// An upgrade runs from this console (quitting leaves its journal to resume).
pub fn rollout_running(state: &AppState) -> bool {
    rollout(state).is_some_and(OperationProgress::running)
}

/// This console's upgrade of `cluster` that has not ended (running, or left in a journal), as
/// the plans' guards see it ("node 3 of 5").
pub fn rollout_in_progress(state: &AppState, cluster: &str) -> Option<RolloutInProgress> {
    let p = rollout(state).filter(|p| p.cluster == cluster)?;
    (p.running() || p.resumable.is_some()).then(|| RolloutInProgress {
        holder: state.identity.clone(),
        node_index: (p.steps_done() + 1).min(p.steps.len()),
        node_count: p.steps.len(),
    })
}

/// `Tab` switches lists, offered where the steps run long: an upgrade's nodes beside its
/// lines.
pub fn has_steps(state: &AppState) -> bool {
    rollout(state).is_some_and(|p| !p.steps.is_empty())
}

/// `Space` pauses: an upgrade runs, not paused or cancelling already.
pub fn can_pause(state: &AppState) -> bool {
    rollout(state).is_some_and(|p| p.running() && !p.paused && !p.cancelling)
}

/// `r` resumes: a paused upgrade, or one a journal kept.
pub fn can_resume(state: &AppState) -> bool {
    rollout(state).is_some_and(|p| (p.running() && p.paused) || p.resumable.is_some())
}

/// A rollout journal that did not end, found at startup: shown interrupted, `r` resumes it
/// (after the typed confirmation) unless another operation runs here.
pub fn on_journal(state: &mut AppState, summary: RolloutSummary) {
    let Some(at) = summary
        .first_unfinished()
        .filter(|_| summary.outcome.is_none())
    else {
        return;
    };
    if state.actions.running() {
        return;
    }
    let (cluster, target) = (summary.cluster.clone(), summary.target.clone());
    let action = match summary.kind {
        RolloutKind::TalosUpgrade => MutatingAction::UpgradeTalos { cluster, target },
        RolloutKind::KubernetesUpgrade => MutatingAction::UpgradeKubernetes { cluster, target },
    };
    let kind = OperationKind::of(&action);
    let (what, cluster) = (action.describe(), summary.cluster.clone());
    let headline = format!("{what} in {cluster}");
    let mut progress =
        OperationProgress::start(kind, &cluster, &what, headline, kind.cancel(), None);
    rollout_steps(&mut progress, &summary.steps);
    progress.lines.clear();
    progress.say(
        None,
        format!(
            "journal: stopped at node {} of {}; r resumes after the guards pass again",
            at + 1,
            summary.steps.len()
        ),
    );
    progress.outcome = Some(Err(format!(
        "interrupted: its run ({}) did not end; r resumes it from its journal",
        summary.holder
    )));
    progress.resumable = Some(action);
    state.actions.progress = Some(progress);
    state.progress_scroll = Default::default();
    state.actions.back = Some(Screen::Cluster(Pane::Nodes));
    state.message = Some(Message::warn(format!(
        "a rollout of {cluster} did not finish: :ctx {cluster} then :rollout shows it, r resumes"
    )));
}

/// The dispatcher approved the resume of the journal's upgrade on screen: it runs again from
/// its journal. `None` when the approval is not for it.
pub fn resume_approved(state: &mut AppState, approved: &ApprovedAction) -> Option<Vec<Effect>> {
    let now = state.wall_clock;
    let progress = state.actions.progress.as_mut()?;
    if progress.resumable.as_ref() != Some(approved.action()) {
        return None;
    }
    progress.resumable = None;
    progress.outcome = None;
    progress.started = now;
    progress.ended = None;
    progress.say(now, "resuming from the journal".into());
    state.current = Some(progress.cluster.clone());
    state.screen = Screen::Action;
    Some(vec![Effect::RunAction {
        approved: approved.clone(),
        run: Box::new(ActionRun::ResumeUpgrade),
        acks: Vec::new(),
    }])
}

/// `Space`: the upgrade pauses after the node under way.
fn pause(state: &mut AppState) -> Vec<Effect> {
    if !can_pause(state) {
        let why = match rollout(state) {
            None => "no upgrade runs here: nothing to pause",
            Some(p) if !p.running() => "this upgrade ended: nothing to pause (u plans another)",
            Some(p) if p.paused => "paused already; r resumes",
            Some(_) => "cancelling already: no next node starts",
        };
        state.message = Some(Message::warn(why));
        return Vec::new();
    }
    state.message = Some(Message::info("pausing after the current node"));
    vec![Effect::HoldAction(true)]
}

/// `r`: a paused upgrade goes on; a journal's is resumed through the gate.
fn resume(state: &mut AppState) -> Vec<Effect> {
    let Some(p) = rollout(state) else {
        state.message = Some(Message::info("no upgrade to resume here"));
        return Vec::new();
    };
    if let Some(action) = &p.resumable {
        return vec![Effect::Gate(action.clone())];
    }
    if p.running() && p.paused {
        state.message = Some(Message::info("resuming"));
        return vec![Effect::HoldAction(false)];
    }
    state.message = Some(Message::info(
        "not paused: Space pauses after the current node",
    ));
    Vec::new()
}

/// One event of the running operation of `kind`; its end reads again what it changed:
/// discovery after a delete (its contexts are gone) or a create that wrote its contexts (the
/// fleet shows the new cluster at once), the management cluster after a scale or a CAPI-way
/// upgrade.
pub fn on_event(state: &mut AppState, kind: OperationKind, event: ProgressEvent) -> Vec<Effect> {
    let now = state.wall_clock;
    let Some(progress) = state.actions.progress.as_mut().filter(|p| p.kind == kind) else {
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
        OperationKind::Delete => {
            // The cluster's contexts are gone: Esc goes to the fleet, which loses its row.
            if result.is_ok() {
                state.actions.back = Some(Screen::Fleet);
            }
            vec![Effect::ReloadDiscovery]
        }
        OperationKind::Create if result.is_ok() => vec![Effect::ReloadDiscovery],
        OperationKind::Scale | OperationKind::CapiUpgrade => {
            vec![Effect::Poller(PollerCommand::RefreshAll)]
        }
        // The nodes' configurations are compared again for the DRIFT column.
        OperationKind::ConfigPatch => {
            let cluster = progress.cluster.clone();
            state.tables.drift_asked.remove(&cluster);
            Vec::new()
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

/// `y` / `n` to the question the run asks (a create's maintenance certificate fingerprint):
/// the answer goes to its run, which applies the VM's config or stops before it.
fn answer(state: &mut AppState, trust: bool) -> Vec<Effect> {
    let now = state.wall_clock;
    let asked = (state.actions.progress.as_mut()).and_then(|p| Some((p.asking.take()?, p)));
    let Some((ask, progress)) = asked else {
        state.message = Some(Message::info("no fingerprint waits for an answer"));
        return Vec::new();
    };
    let answer = if trust { "confirmed" } else { "refused" };
    progress.say(
        now,
        format!("{}: maintenance certificate {answer}", ask.about),
    );
    state.message = Some(Message::info(format!(
        "{}: its maintenance certificate {answer}",
        ask.about
    )));
    let (cluster, id) = (progress.cluster.clone(), ask.id);
    vec![Effect::AnswerAction { cluster, id, trust }]
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

/// Keys on the progress: Tab and the move keys scroll its steps and lines, Esc back (the
/// operation goes on), `c` cancels it after its current step, Space pauses an upgrade and `r`
/// resumes it, `y` / `n` answer its question, `x` takes the action it offers, help, the
/// command line.
pub fn on_key(state: &mut AppState, action: Action) -> Vec<Effect> {
    let page = state.page();
    if let Some(p) = &state.actions.progress {
        let steps = (p.steps.len(), p.current_step());
        if state
            .progress_scroll
            .apply(&action, steps, p.lines.len(), page)
        {
            return Vec::new();
        }
    }
    match action {
        Action::CancelAction => return cancel(state),
        Action::Answer(trust) => return answer(state, trust),
        Action::Provision(super::provision::ProvisionKey::Terminate) => return take_offer(state),
        Action::PauseRollout => return pause(state),
        Action::ResumeRollout => return resume(state),
        Action::Back => state.screen = state.actions.back.unwrap_or(Screen::Cluster(Pane::Nodes)),
        Action::OpenHelp => state.overlay = Some(Overlay::Help { scroll: 0 }),
        Action::OpenCommandLine => state.open_input(InputKind::Command, String::new()),
        _ => {}
    }
    Vec::new()
}
