//! The key tables of the log view and its service picker, and the keys that open them from
//! the cluster panes (`l`) and node detail (`l` the picker, `d` the kernel log).
use crossterm::event::KeyCode;

use super::action::Action;
use super::keymap::{Binding, Key};
use super::state::{AppState, Pane, Screen};
use super::update_logs::LogKey;

/// `l` on the nodes pane (the selected node's picker) and the etcd pane (every control plane).
pub(super) static FROM_CLUSTER: &[Binding] = &[Binding {
    keys: &[Key::char('l')],
    action: Action::Logs(LogKey::Open),
    help: "logs: the selected node's (nodes pane), etcd of every control plane (etcd pane)",
    footer: Some("logs"),
    offered: Some(on_a_logs_pane),
}];

/// Offered on the nodes and etcd panes where the footer has room for it: at 80 columns the
/// pane's own keys fill it, and `?` lists `l` there.
fn on_a_logs_pane(state: &AppState) -> bool {
    let pane = matches!(
        state.screen,
        Screen::Cluster(Pane::Nodes) | Screen::Cluster(Pane::Etcd)
    );
    pane && state.size.0 >= FOOTER_ROOM
}

/// The width from which the cluster panes' footer has room for `l logs`.
const FOOTER_ROOM: u16 = 90;

pub(super) static FROM_DETAIL: &[Binding] = &[
    Binding {
        keys: &[Key::char('l')],
        action: Action::Logs(LogKey::Open),
        help: "logs of one of the node's services (a picker)",
        footer: Some("logs"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('d')],
        action: Action::Logs(LogKey::Dmesg),
        help: "the node's kernel log (dmesg)",
        footer: None,
        offered: None,
    },
];

pub(super) static VIEW: &[Binding] = &[
    Binding {
        keys: &[Key::char('/')],
        action: Action::OpenFilter,
        help: "show only lines containing a text (node names too); Esc clears",
        footer: Some("filter"),
        offered: None,
    },
    Binding {
        keys: &[Key::char(' ')],
        action: Action::TogglePause,
        help: "pause: hold the screen, keep receiving; again to follow",
        footer: Some("pause"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('t')],
        action: Action::Logs(LogKey::Timestamps),
        help: "show the time each line arrived",
        footer: Some("time"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('j'), Key::plain(KeyCode::Down)],
        action: Action::MoveDown,
        help: "scroll down",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('k'), Key::plain(KeyCode::Up)],
        action: Action::MoveUp,
        help: "scroll up (stops following)",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::PageDown), Key::ctrl('f')],
        action: Action::PageDown,
        help: "page down",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::PageUp), Key::ctrl('b')],
        action: Action::PageUp,
        help: "page up",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('g'), Key::plain(KeyCode::Home)],
        action: Action::MoveFirst,
        help: "the oldest line kept",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('G'), Key::plain(KeyCode::End)],
        action: Action::MoveLast,
        help: "the newest lines, following again",
        footer: Some("follow"),
        offered: Some(not_following),
    },
    Binding {
        keys: &[Key::plain(KeyCode::Left)],
        action: Action::Logs(LogKey::Left),
        help: "scroll the text left",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Right)],
        action: Action::Logs(LogKey::Right),
        help: "scroll the text right (long lines)",
        footer: None,
        offered: None,
    },
];

fn not_following(state: &AppState) -> bool {
    state.logs.view.as_ref().is_some_and(|v| !v.following())
}

/// The picker's own key; it moves with the shared move keys.
pub(super) static PICKER: &[Binding] = &[Binding {
    keys: &[Key::plain(KeyCode::Enter)],
    action: Action::OpenSelected,
    help: "follow the selected log",
    footer: Some("follow"),
    offered: None,
}];

/// Esc and q go back (Ctrl-C still quits); `?` and `:` as everywhere.
pub(super) static BACK: &[Binding] = &[
    Binding {
        keys: &[Key::plain(KeyCode::Esc), Key::char('q')],
        action: Action::Back,
        help: "clear the filter, else back where the logs were opened",
        footer: Some("back"),
        offered: None,
    },
    Binding {
        keys: &[Key::char(':')],
        action: Action::OpenCommandLine,
        help: "command line (:logs SERVICE [NODE...], :dmesg NODE)",
        footer: None,
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
        keys: &[Key::ctrl('c')],
        action: Action::Quit,
        help: "quit",
        footer: None,
        offered: None,
    },
];
