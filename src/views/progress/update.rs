//! The progress screen's update step: the approved run starts it (its subjects' kind, timeout,
//! cancel rule, a scale's tally, a CAPI-way upgrade's phases, an upgrade's nodes, a create's
//! phases), a journal an upgrade or a provision left shows it interrupted, each progress event
//! folds into it and its end asks for what changed to be read again, and its keys (`c` cancels
//! after the current step, Space pauses an upgrade after it and `r` resumes it, or resumes the
//! journal's, `y` / `n` answer what it asks, `x` takes what it offers). Pure.
use super::ProgressScreen;
use crate::app::action::{Effect, PollerCommand};
use crate::app::actions::{ActionRun, SNAPSHOT_BOUND};
use crate::app::message::Message;
use crate::app::provision::JournalVms;
use crate::app::screen::{Pane, Screen};
use crate::app::screens::Step;
use crate::approval::{ApprovedAction, EtcdAction};
use crate::node_actions::NodeActionOptions;
use crate::operation::progress::{OperationProgress, ProgressEvent, StepRow};
use crate::operation::{CancelRule, OperationKind, capi_upgrade, runner_events};
use crate::rollout::RolloutSummary;

/// The progress of `run`, approved as `approved`, named `what`, starting `now`.
pub(super) fn start(
    screen: &mut ProgressScreen,
    approved: &ApprovedAction,
    run: &ActionRun,
    what: &str,
    now: Option<u64>,
) {
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
    let mut progress = OperationProgress::start(kind, cluster, what, headline, cancel, now);
    // The most the run may take, where its runner bounds it.
    match run {
        ActionRun::Node(_) => {
            progress.subject_kind = "Node".into();
            progress.timeout = Some(NodeActionOptions::console().node_timeout);
        }
        ActionRun::Etcd(plan) => {
            progress.steps = runner_events::etcd_steps(plan);
            progress.timeout = (plan.action == EtcdAction::Snapshot).then_some(SNAPSHOT_BOUND);
        }
        ActionRun::CapiUpgrade(plan) => {
            progress.steps = runner_events::capi_upgrade_steps(plan);
            (progress.steps_word, progress.steps_title) = ("phases".into(), "Phases".into());
            let phases = plan.phases.iter();
            progress.timeout = Some(phases.map(|p| capi_upgrade::phase_bound(plan, p)).sum());
        }
        ActionRun::Provision(plan) => {
            let (cluster, provider) = (&plan.cluster, &plan.provider);
            let vms = runner_events::ProvisionSteps::new(cluster, provider, plan.vm_names.clone());
            vms.shape(&mut progress);
            progress.timeout = Some(crate::provision::RunnerOptions::default().timeout);
        }
        ActionRun::CapiScale(scale) => {
            progress.subject_kind = "Machines".into();
            let (tally, checks) = runner_events::scale_start(&scale.plan);
            (progress.tally, progress.checks) = (Some(tally), checks);
        }
        ActionRun::Upgrade(plan) => runner_events::shape_rollout(&mut progress, &plan.steps()),
        ActionRun::Create(plan) => {
            progress.steps = runner_events::create_steps();
            progress.steps_word = "phases".into();
            progress.steps_title = format!("Create of {}", plan.cluster);
            // Opened from the fleet, where Esc leads back (the new cluster shows there).
            screen.back = Screen::Fleet;
        }
        ActionRun::ConfigPatch(plan) => {
            progress.steps = plan.steps().iter().map(|s| StepRow::pending(s)).collect();
            progress.step_timeout = Some(NodeActionOptions::console().node_timeout);
            (progress.steps_word, progress.steps_title) = ("nodes".into(), "Nodes".into());
        }
        _ => {}
    }
    screen.progress = Some(progress);
    screen.scroll = Default::default();
}

/// A rollout journal that did not end, found at startup: shown interrupted, `r` resumes it
/// (after the typed confirmation) unless another operation runs here.
pub(super) fn on_journal(screen: &mut ProgressScreen, summary: &RolloutSummary) -> Step {
    if screen.running().is_some() {
        return Step::default();
    }
    let Some(progress) = runner_events::interrupted_rollout(summary) else {
        return Step::default();
    };
    screen.progress = Some(progress);
    screen.scroll = Default::default();
    screen.back = Screen::Cluster(Pane::Nodes);
    let cluster = &summary.cluster;
    Step::message(Message::warn(format!(
        "a rollout of {cluster} did not finish: :ctx {cluster} then :rollout shows it, r resumes"
    )))
}

/// What the provision journals left, unless an operation runs here: each VM a step in its
/// last known state, a failed one offering its terminate; while some are followed again the
/// progress runs and the operator is told where to look.
pub(super) fn from_journals(
    screen: &mut ProgressScreen,
    JournalVms { clusters, vms }: &JournalVms,
    now: Option<u64>,
) -> Step {
    if screen.running().is_some() {
        return Step::default();
    }
    let Some(progress) = runner_events::provisions_left(clusters, vms, now) else {
        return Step::default();
    };
    let following = progress.running();
    screen.progress = Some(progress);
    let cluster = &clusters[0];
    if !following {
        return Step::default();
    }
    Step::message(Message::warn(format!(
        "a provision of {cluster} did not finish: :ctx {cluster} then :provisions shows its VMs"
    )))
}

/// The dispatcher approved the resume of the journal's upgrade on screen: it runs again from
/// its journal. `None` when the approval is not for it.
pub(super) fn resume_approved(
    screen: &mut ProgressScreen,
    approved: &ApprovedAction,
    now: Option<u64>,
) -> Option<Step> {
    let progress = screen.progress.as_mut()?;
    if progress.resumable.as_ref() != Some(approved.action()) {
        return None;
    }
    progress.resumable = None;
    progress.outcome = None;
    progress.started = now;
    progress.ended = None;
    progress.say(now, "resuming from the journal".into());
    Some(Step::effects(vec![Effect::RunAction {
        approved: approved.clone(),
        run: Box::new(ActionRun::ResumeUpgrade),
        acks: Vec::new(),
    }]))
}

/// `Space`: the upgrade pauses after the node under way.
pub(super) fn pause(screen: &ProgressScreen) -> Step {
    if !screen.can_pause() {
        let why = match screen.rollout() {
            None => "no upgrade runs here: nothing to pause",
            Some(p) if !p.running() => "this upgrade ended: nothing to pause (u plans another)",
            Some(p) if p.paused => "paused already; r resumes",
            Some(_) => "cancelling already: no next node starts",
        };
        return Step::message(Message::warn(why));
    }
    Step {
        message: Some(Message::info("pausing after the current node")),
        ..Step::effects(vec![Effect::HoldAction(true)])
    }
}

/// `r`: a paused upgrade goes on; a journal's is resumed through the gate.
pub(super) fn resume(screen: &ProgressScreen) -> Step {
    let Some(p) = screen.rollout() else {
        return Step::message(Message::info("no upgrade to resume here"));
    };
    if let Some(action) = &p.resumable {
        return Step::effects(vec![Effect::Gate(action.clone())]);
    }
    if p.running() && p.paused {
        return Step {
            message: Some(Message::info("resuming")),
            ..Step::effects(vec![Effect::HoldAction(false)])
        };
    }
    Step::message(Message::info(
        "not paused: Space pauses after the current node",
    ))
}

/// One event of the running operation of `kind`; its end says how it went and reads again
/// what it changed: discovery after a delete (its contexts are gone) or a create that wrote
/// its contexts (the fleet shows the new cluster at once), the management cluster after a
/// scale or a CAPI-way upgrade.
pub(super) fn on_event(
    screen: &mut ProgressScreen,
    kind: OperationKind,
    event: ProgressEvent,
    now: Option<u64>,
) -> Step {
    let Some(progress) = screen.progress.as_mut().filter(|p| p.kind == kind) else {
        return Step::default();
    };
    let finished = matches!(event, ProgressEvent::Finished(_));
    let mut step = Step::default();
    if let ProgressEvent::Ask {
        about, question, ..
    } = &event
    {
        // Said on the message line too: the operator may be on another screen.
        step.message = Some(Message::warn(format!(
            "{about} {question} y confirms, n refuses"
        )));
    }
    progress.fold(now, event);
    let Some(result) = progress.outcome.as_ref().filter(|_| finished) else {
        return step;
    };
    let line = progress.lines.back().cloned().unwrap_or_default();
    let line = line.split_once("] ").map_or(line.as_str(), |(_, l)| l);
    step.message = Some(match result {
        Ok(_) if kind == OperationKind::Create => Message::info(format!(
            "{} is up; its contexts are written (reloading the fleet)",
            progress.cluster
        )),
        Ok(_) => Message::info(format!("{}: {line}", progress.what)),
        Err(_) => Message::error(format!("{}: {line}", progress.what)),
    });
    step.effects = match kind {
        OperationKind::Delete => {
            // The cluster's contexts are gone: Esc goes to the fleet, which loses its row.
            if result.is_ok() {
                screen.back = Screen::Fleet;
            }
            vec![Effect::ReloadDiscovery]
        }
        OperationKind::Create if result.is_ok() => vec![Effect::ReloadDiscovery],
        OperationKind::Scale | OperationKind::CapiUpgrade => {
            vec![Effect::Poller(PollerCommand::RefreshAll)]
        }
        _ => Vec::new(),
    };
    step
}

/// `c` on the progress of a running operation: asks its runner to stop after the current
/// step (it says, when it stops, what state it leaves).
pub(super) fn cancel(screen: &mut ProgressScreen, now: Option<u64>) -> Step {
    let Some(progress) = screen.progress.as_mut().filter(|p| p.running()) else {
        return Step::message(Message::info("no action runs from this console"));
    };
    if !progress.cancellable() {
        return Step::message(Message::warn(format!(
            "{} cannot be cancelled: it runs on its own runner until it ends",
            progress.what
        )));
    }
    if progress.cancelling {
        return Step::default();
    }
    progress.ask_cancel(now);
    Step {
        message: Some(Message::warn(format!(
            "{}: cancelling after the current step",
            progress.what
        ))),
        ..Step::effects(vec![Effect::CancelAction])
    }
}

/// `y` / `n` to the question the run asks (a create's maintenance certificate fingerprint):
/// the answer goes to its run, which applies the VM's config or stops before it.
pub(super) fn answer(screen: &mut ProgressScreen, trust: bool, now: Option<u64>) -> Step {
    let asked = (screen.progress.as_mut()).and_then(|p| Some((p.asking.take()?, p)));
    let Some((ask, progress)) = asked else {
        return Step::message(Message::info("no fingerprint waits for an answer"));
    };
    let answer = if trust { "confirmed" } else { "refused" };
    progress.say(
        now,
        format!("{}: maintenance certificate {answer}", ask.about),
    );
    let (cluster, id) = (progress.cluster.clone(), ask.id);
    Step {
        message: Some(Message::info(format!(
            "{}: its maintenance certificate {answer}",
            ask.about
        ))),
        ..Step::effects(vec![Effect::AnswerAction { cluster, id, trust }])
    }
}

/// `x` on the progress: the action it offers (a failed VM's terminate) through the dispatcher.
pub(super) fn take_offer(screen: &ProgressScreen) -> Step {
    match screen.progress.as_ref().and_then(|p| p.offers.last()) {
        Some(offer) => Step::effects(vec![Effect::Gate(offer.action.clone())]),
        None => Step::message(Message::info("nothing is offered here")),
    }
}
