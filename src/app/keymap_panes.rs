//! The key tables of the fleet, cluster and node detail screens, in pieces
//! the keymap puts together per context: moves, table keys (filter, sort),
//! live-data keys (refresh, `Space` pause) and the keys every screen has.
use crossterm::event::KeyCode;

use super::action::Action;
use super::keymap::{Binding, Key};
use super::state::{AppState, Pane, Screen};

pub(super) static MOVES: &[Binding] = &[
    Binding {
        keys: &[Key::char('j'), Key::plain(KeyCode::Down)],
        action: Action::MoveDown,
        help: "move down",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('k'), Key::plain(KeyCode::Up)],
        action: Action::MoveUp,
        help: "move up",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('g'), Key::plain(KeyCode::Home)],
        action: Action::MoveFirst,
        help: "first row",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('G'), Key::plain(KeyCode::End)],
        action: Action::MoveLast,
        help: "last row",
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
];

pub(super) static FLEET_OWN: &[Binding] = &[
    Binding {
        keys: &[Key::plain(KeyCode::Enter)],
        action: Action::OpenSelected,
        help: "open the selected cluster",
        footer: Some("open"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('u')],
        action: Action::OpenUpgrade(None),
        help: "plan a Talos upgrade of the selected cluster",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('U')],
        action: Action::OpenKubernetesUpgrade(None),
        help: "plan a Kubernetes upgrade of the selected cluster",
        footer: None,
        offered: None,
    },
];

pub(super) static CLUSTER_OWN: &[Binding] = &[
    Binding {
        keys: &[Key::char('1')],
        action: Action::ShowPane(Pane::Nodes),
        help: "nodes pane",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('2')],
        action: Action::ShowPane(Pane::Etcd),
        help: "etcd pane",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('3')],
        action: Action::ShowPane(Pane::Versions),
        help: "versions pane",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Tab)],
        action: Action::NextPane,
        help: "next pane",
        footer: Some("pane"),
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Enter)],
        action: Action::OpenSelected,
        help: "node detail (nodes pane)",
        footer: Some("node"),
        offered: Some(on_the_nodes_pane),
    },
    Binding {
        keys: &[Key::char('u')],
        action: Action::OpenUpgrade(None),
        help: "plan a Talos upgrade (or show the running one)",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('U')],
        action: Action::OpenKubernetesUpgrade(None),
        help: "plan a Kubernetes upgrade (the versions pane shows what runs)",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "clear the filter, else back to the fleet",
        footer: None,
        offered: None,
    },
];

pub(super) static TABLE_KEYS: &[Binding] = &[
    Binding {
        keys: &[Key::char('/')],
        action: Action::OpenFilter,
        help: "filter rows (any visible cell)",
        footer: Some("filter"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('s')],
        action: Action::SortNext,
        help: "sort by the next column",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::char('S')],
        action: Action::SortReverse,
        help: "reverse the sort",
        footer: None,
        offered: None,
    },
];

const REFRESH: Binding = Binding {
    keys: &[Key::char('r')],
    action: Action::Refresh,
    help: "refresh now",
    footer: Some("refresh"),
    offered: None,
};

pub(super) static LIVE_KEYS: &[Binding] = &[
    REFRESH,
    Binding {
        keys: &[Key::char(' ')],
        action: Action::TogglePause,
        help: "pause or resume live data",
        footer: Some("pause"),
        offered: None,
    },
];

/// The live keys where the footer is full (cluster panes, node detail): pause
/// is in help only.
pub(super) static LIVE_KEYS_BRIEF: &[Binding] = &[
    REFRESH,
    Binding {
        keys: &[Key::char(' ')],
        action: Action::TogglePause,
        help: "pause or resume live data",
        footer: None,
        offered: None,
    },
];

/// Enter opens a node only from the nodes pane.
fn on_the_nodes_pane(state: &AppState) -> bool {
    state.screen == Screen::Cluster(Pane::Nodes)
}

pub(super) static FLEET_TAIL: &[Binding] = &[
    Binding {
        keys: &[Key::char('e')],
        action: Action::OpenErrors,
        help: "show discovery errors",
        footer: None,
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "clear the filter",
        footer: None,
        offered: None,
    },
];

pub(super) static DETAIL_OWN: &[Binding] = &[
    Binding {
        keys: &[Key::char('h'), Key::plain(KeyCode::Left)],
        action: Action::PreviousNode,
        help: "previous node",
        footer: Some("prev"),
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Right)],
        action: Action::NextNode,
        help: "next node",
        footer: Some("next"),
        offered: None,
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "back to the nodes pane",
        footer: Some("back"),
        offered: None,
    },
];

pub(super) static GLOBAL: &[Binding] = &[
    Binding {
        keys: &[Key::char(':')],
        action: Action::OpenCommandLine,
        help: "command line (:nodes, :etcd, :ctx NAME, :q)",
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
        keys: &[Key::char('q'), Key::ctrl('c')],
        action: Action::Quit,
        help: "quit",
        footer: Some("quit"),
        offered: None,
    },
];

/// The CAPI screen's own keys.
pub(super) static CAPI_OWN: &[Binding] = &[
    Binding {
        keys: &[Key::plain(KeyCode::Enter)],
        action: Action::OpenSelected,
        help: "every condition of the selected object",
        footer: Some("conditions"),
        offered: None,
    },
    Binding {
        keys: &[Key::char('f'), Key::char('a')],
        action: Action::OpenActions,
        help: "fix a stuck state the doctor found (its plan and guards first)",
        footer: Some("fix"),
        offered: Some(super::capi_doctor::offers_fix),
    },
    Binding {
        keys: &[Key::plain(KeyCode::Esc)],
        action: Action::Back,
        help: "back to the cluster's panes",
        footer: Some("back"),
        offered: None,
    },
];

/// On the cluster panes: the Cluster API tree of the cluster in use.
pub(super) static CAPI_FROM_CLUSTER: &[Binding] = &[Binding {
    keys: &[Key::char('C')],
    action: Action::OpenCapi,
    help: "the cluster's Cluster API tree and stuck states (:capi)",
    footer: None,
    offered: None,
}];
