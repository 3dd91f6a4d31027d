//! The progress screen's update step: the approved run starts it as its plan describes it
//! (`operation::planned`), a journal an upgrade or a provision left shows it interrupted, each progress event
//! folds into it and its end asks for what changed to be read again, and its keys (`c` cancels
//! after the current step, Space pauses an upgrade after it and `r` resumes it, or resumes the
//! journal's, `y` / `n` answer what it asks, `x` takes what it offers). Pure.
use super::ProgressScreen;
use crate::app::action::{Effect, PollerCommand};
use crate::app::actions::ActionRun;
use crate::app::message::Message;
use crate::app::screen::{Pane, Screen};
use crate::app::screens::Step;
use crate::approval::ApprovedAction;
use crate::operation::OperationKind;
use crate::operation::progress::{OperationProgress, ProgressEvent};

/// A run's progress shown, as its plan describes its start or a journal left it; Esc leads to
/// `back`, a create's to the fleet (the new cluster shows there).
pub(super) fn show(screen: &mut ProgressScreen, progress: OperationProgress, back: Screen) -> Step {
    let create = progress.kind == OperationKind::Create;
    screen.back = if create { Screen::Fleet } else { back };
    screen.progress = Some(progress);
    screen.scroll = Default::default();
    Step::default()
}

/// What a journal left shown, unless an operation runs here: a rollout that did not end
/// (shown interrupted, `r` resumes it after the typed confirmation), or the VMs of provisions
/// (each a step in its last known state, a failed one offering its terminate). While it goes
/// on (the VMs followed again) or `r` resumes it, the operator is told where to look: the
/// cluster, then the screen that `shows` its `what`.
pub(super) fn left(
    screen: &mut ProgressScreen,
    progress: Option<OperationProgress>,
    (what, shows): (&str, &str),
) -> Step {
    let Some(progress) = progress.filter(|_| screen.running().is_none()) else {
        return Step::default();
    };
    let cluster = progress.cluster.clone();
    let told = progress.running() || progress.resumable.is_some();
    let shown = show(screen, progress, Screen::Cluster(Pane::Nodes));
    let said = format!("a {what} of {cluster} did not finish: :ctx {cluster} then {shows}");
    if told {
        Step::message(Message::warn(said))
    } else {
        shown
    }
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
    progress.resume(now);
    Some(Step::effects(vec![Effect::RunAction {
        approved: approved.clone(),
        run: Box::new(ActionRun::ResumeUpgrade),
        acks: Vec::new(),
    }]))
}

/// `Space`: the upgrade pauses after the node under way.
pub(super) fn pause(screen: &ProgressScreen) -> Step {
    let why = match screen.rollout() {
        None => "no upgrade runs here: nothing to pause",
        Some(p) if !p.running() => "this upgrade ended: nothing to pause (u plans another)",
        Some(p) if p.paused => "paused already; r resumes",
        Some(p) if p.cancelling => "cancelling already: no next node starts",
        Some(_) => {
            return Step {
                message: Some(Message::info("pausing after the current node")),
                ..Step::effects(vec![Effect::HoldAction(true)])
            };
        }
    };
    Step::message(Message::warn(why))
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
