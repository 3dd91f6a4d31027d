//! The key tables of the node, etcd and delete actions: `a` on the nodes pane, node detail and
//! the etcd pane (the actions screen, `views::actions`, has its own), `D` on the fleet and a
//! cluster, and an action's progress.
use super::action::Action;
use super::binding::{Binding, HELP, Key, bind, command_line, quit};
use super::state::AppState;

/// On the cluster panes and node detail, ahead of their other keys.
#[rustfmt::skip]
pub(super) static FROM_PANES: &[Binding] = &[bind(&[Key::char('a')], Action::OpenActions, "actions on the selected node (reboot, drain, restart a service...) or etcd member")];

#[rustfmt::skip]
pub(super) static PROGRESS: &[Binding] = &[
    bind(&[Key::char('c')], Action::CancelAction, "cancel the running action after its current step (says what it leaves)").footer("cancel").offered(cancellable),
    bind(&[Key::char(' ')], Action::PauseRollout, "pause the upgrade after the current node").footer("pause").offered(super::update_progress::can_pause),
    bind(&[Key::char('r')], Action::ResumeRollout, "resume the paused upgrade (one a journal kept: after confirming the name)").footer("resume").offered(super::update_progress::can_resume),
    bind(&[Key::char('y')], Action::Answer(true), "the maintenance certificate fingerprint shown is the VM's: apply its config").footer("confirm").offered(asking),
    bind(&[Key::char('n')], Action::Answer(false), "it is not: the run stops before applying any config to it").footer("refuse").offered(asking),
    bind(&[Key::TAB], Action::NextPane, "switch between the steps and the lines (j/k, PgUp/PgDn, g/G scroll)").footer("focus").offered(super::update_progress::has_steps),
    bind(&[Key::ESC], Action::Back, "back to the pane (the action goes on; a shows it again)").footer("back"),
    HELP,
    command_line("command line"),
    quit("quit (asks first while an action runs)").footer("quit"),
];

/// On the fleet and the cluster panes, after their other keys.
#[rustfmt::skip]
pub(super) static DELETE_CLUSTER: &[Binding] = &[bind(&[Key::char('D')], Action::OpenDelete, "delete the cluster: its plan and guards (VMs, contexts, journals; nothing runs yet)")];

/// The running operation asks a question (a create's fingerprint).
fn asking(state: &AppState) -> bool {
    (state.actions.progress.as_ref()).is_some_and(|p| p.asking.is_some())
}

fn cancellable(state: &AppState) -> bool {
    state
        .actions
        .progress
        .as_ref()
        .is_some_and(|p| p.running() && p.cancellable() && !p.cancelling)
}
