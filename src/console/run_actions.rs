//! The node and etcd actions' IO for the event loop besides their run: the survey a node
//! plan's guards need, a guard's refusal audited, the cancel sent to the running action, and
//! the actions a console or command now gone left unfinished.
use tokio::sync::mpsc;

use super::run::Console;
use crate::app::action::{Action, AppEvent};
use crate::app::message::Message;
use crate::app::state::AppState;
use crate::approval::ApprovedAction;
use crate::node_actions::{NodeActionPlan, NodeSurvey};
use crate::rollout::RolloutControl;
use crate::views::actions::{self, Surveyed};

/// Reads the survey of `plan` off the event loop; it comes back as the actions screen's news.
pub(super) fn survey(state: &AppState, plan: NodeActionPlan, app_tx: &mpsc::Sender<AppEvent>) {
    let connecting = super::connect(state, &plan.cluster);
    super::answer(app_tx, actions::NAME, async move {
        let survey = match connecting.await {
            Ok(observer) => Ok(NodeSurvey::read(&plan, &observer).await),
            Err(e) => Err(e),
        };
        Surveyed {
            cluster: plan.cluster.clone(),
            node: plan.node.clone(),
            survey,
        }
    });
}

/// The node and etcd actions a console or command now gone left unfinished: each audited as
/// interrupted and told once (`operation::report_interrupted`), as a warning the first frame
/// shows, with any audit or journal it could not write; a node one left cordoned is
/// remembered, so the node's action menu offers its uncordon first.
pub(super) fn startup(console: &mut Console) -> Vec<Action> {
    let (dispatcher, state_dir) = (&console.dispatcher, &console.paths.state_dir);
    let (found, warnings) = crate::operation::report_interrupted(dispatcher, state_dir);
    for record in found.iter().map(|interrupted| &interrupted.record) {
        if let Some(node) = &record.left_cordoned {
            let left = (record.cluster.clone(), node.clone(), record.action.clone());
            console.state.actions.left_cordoned.push(left);
        }
    }
    let told = crate::operation::interrupted_told(&found, warnings);
    told.map(|(_, text)| Action::Notify(Message::warn(text)))
        .collect()
}

impl Console {
    /// Cancels the running operation after its current step.
    pub(super) fn cancel_action(&self) {
        if let Some(rollout) = &self.rollout_control {
            let _ = rollout.send(RolloutControl::Abort);
        } else if let Some(cancel) = &self.action_cancel {
            let _ = cancel.send(true);
        }
    }

    /// Holds the running upgrade between its steps (`true`), or lets it go on.
    pub(super) fn hold_action(&mut self, hold: bool) -> Option<Action> {
        let control = match hold {
            true => RolloutControl::Pause,
            false => RolloutControl::Resume,
        };
        let sent = self.rollout_control.as_ref().map(|c| c.send(control));
        match sent {
            Some(Ok(())) => None,
            _ => Some(Action::Notify(Message::warn(
                "no upgrade runs in this console: nothing to pause or resume",
            ))),
        }
    }

    /// Audits an approved action that does not run, and says why.
    pub(super) fn not_run(&self, approved: &ApprovedAction, why: String) -> Action {
        let audit = self.dispatcher.finished(approved, Err(why.clone()));
        let text = match audit {
            Ok(()) => format!("{}: {why}", approved.action().describe()),
            Err(e) => format!("{}: {why}; {e}", approved.action().describe()),
        };
        Action::Notify(Message::warn(text))
    }
}
