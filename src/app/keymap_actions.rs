//! The key tables of the node, etcd and delete actions: `a` on the nodes pane, node detail and
//! the etcd pane, `D` on the fleet and a cluster, the action menu, an action's plan and its
//! progress.
use crossterm::event::KeyCode;

use super::action::Action;
use super::keymap::{Binding, Key};
use super::state::AppState;

/// On the cluster panes and node detail, ahead of their other keys.
pub(super) static FROM_PANES: &[Binding] = &[Binding {
    keys: &[Key::char('a')],
    action: Action::OpenActions,
    help: "actions on the selected node (reboot, drain, restart a service...) or etcd member",
    footer: None,
    offered: None,
}];

pub(super) static MENU: &[Binding] = &[
    Binding {
        keys: &[Key::char('j'), Key::plain(KeyCode::Down)],
        action: Action::MoveDown,
        help: "next action",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('k'), Key::plain(KeyCode::Up)],
        action: Action::MoveUp,
        help: "previous action",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Enter)],
        action: Action::Submit,
        help: "the chosen action's plan and guards (nothing runs yet)",
        footer: Some("plan"),
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc), Key::char('q')],
        action: Action::Back,
        help: "close the menu",
        footer: Some("close"),
        offered: None,
    },
    Binding {
        keys: &[Key::ctrl('c')],
        action: Action::Quit,
        help: "quit",
        footer: None,
        offered: None,
    },
];

pub(super) static PLAN: &[Binding] = &[
    Binding {
        keys: &[Key::char('j'), Key::plain(KeyCode::Down)],
        action: Action::MoveDown,
        help: "next guard",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('k'), Key::plain(KeyCode::Up)],
        action: Action::MoveUp,
        help: "previous guard",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('?')],
        action: Action::Explain,
        help: "why: what the selected guard checks",
        footer: Some("why"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('a')],
        action: Action::Acknowledge,
        help: "type the acknowledgement a guard needs (a delete's)",
        footer: Some("ack"),
        offered: Some(ack_needed),
    },
    Binding {
        keys: &[Key::char('s')],
        action: Action::StartAction,
        help: "run it (through the typed confirmation)",
        footer: Some("start"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('r')],
        action: Action::Refresh,
        help: "read the cluster (and the node's pods and services) again",
        footer: Some("refresh"),
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "close the plan",
        footer: Some("back"),
        offered: None,
    },
    Binding {
        keys: &[Key::char(':')],
        action: Action::OpenCommandLine,
        help: "command line",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('q'), Key::ctrl('c')],
        action: Action::Quit,
        help: "quit (asks first while an action runs)",
        footer: None,
        offered: None,
    },
];

pub(super) static PROGRESS: &[Binding] = &[
    Binding {
        keys: &[Key::char('c')],
        action: Action::CancelAction,
        help: "cancel the running action after its current step (says what it leaves)",
        footer: Some("cancel"),
        offered: Some(cancellable),
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "back to the pane (the action goes on; a shows it again)",
        footer: Some("back"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('?')],
        action: Action::OpenHelp,
        help: "help",
        footer: Some("help"),
        offered: None,
    },
    Binding {
        keys: &[Key::char(':')],
        action: Action::OpenCommandLine,
        help: "command line",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('q'), Key::ctrl('c')],
        action: Action::Quit,
        help: "quit (asks first while an action runs)",
        footer: Some("quit"),
        offered: None,
    },
];

/// On the fleet and the cluster panes, after their other keys.
pub(super) static DELETE_CLUSTER: &[Binding] = &[Binding {
    keys: &[Key::char('D')],
    action: Action::OpenDelete,
    help: "delete the cluster: its plan and guards (VMs, contexts, journals; nothing runs yet)",
    footer: None,
    offered: None,
}];

fn cancellable(state: &AppState) -> bool {
    state
        .actions
        .progress
        .as_ref()
        .is_some_and(|p| p.running() && p.cancellable && !p.cancelling)
}

fn ack_needed(state: &AppState) -> bool {
    state
        .actions
        .plan
        .as_ref()
        .is_some_and(|p| p.ack_prompt().is_some())
}
