//! The key tables of the fleet, cluster and node detail screens, in pieces
//! the keymap puts together per context: moves, table keys (filter, sort),
//! live-data keys (refresh, `Space` pause) and the keys every screen has.
use crossterm::event::KeyCode;

use super::action::Action;
use super::binding::{Binding, Key, bind};
use super::screen::{Pane, Screen};
use super::state::AppState;

#[rustfmt::skip]
pub(super) static MOVES: &[Binding] = &[
    bind(&[Key::char('j'), Key::plain(KeyCode::Down)], Action::MoveDown, "move down"),
    bind(&[Key::char('k'), Key::plain(KeyCode::Up)], Action::MoveUp, "move up"),
    bind(&[Key::char('g'), Key::plain(KeyCode::Home)], Action::MoveFirst, "first row"),
    bind(&[Key::char('G'), Key::plain(KeyCode::End)], Action::MoveLast, "last row"),
    bind(&[Key::plain(KeyCode::PageDown), Key::ctrl('f')], Action::PageDown, "page down"),
    bind(&[Key::plain(KeyCode::PageUp), Key::ctrl('b')], Action::PageUp, "page up"),
];

#[rustfmt::skip]
pub(super) static FLEET_OWN: &[Binding] = &[
    bind(&[Key::plain(KeyCode::Enter)], Action::OpenSelected, "open the selected cluster").footer("open"),
    bind(&[Key::char('u')], Action::OpenUpgrade(None), "plan a Talos upgrade of the selected cluster"),
    bind(&[Key::char('U')], Action::OpenKubernetesUpgrade(None), "plan a Kubernetes upgrade of the selected cluster"),
];

#[rustfmt::skip]
pub(super) static CLUSTER_OWN: &[Binding] = &[
    bind(&[Key::char('1')], Action::ShowPane(Pane::Nodes), "nodes pane"),
    bind(&[Key::char('2')], Action::ShowPane(Pane::Etcd), "etcd pane"),
    bind(&[Key::char('3')], Action::ShowPane(Pane::Versions), "versions pane"),
    bind(&[Key::plain(KeyCode::Tab)], Action::NextPane, "next pane").footer("pane"),
    bind(&[Key::plain(KeyCode::Enter)], Action::OpenSelected, "node detail (nodes pane)").footer("node").offered(on_the_nodes_pane),
    bind(&[Key::char('u')], Action::OpenUpgrade(None), "plan a Talos upgrade (or show the running one)"),
    bind(&[Key::char('U')], Action::OpenKubernetesUpgrade(None), "plan a Kubernetes upgrade (the versions pane shows what runs)"),
    bind(&[Key::plain(KeyCode::Esc)], Action::Back, "clear the filter, else back to the fleet"),
];

#[rustfmt::skip]
pub(super) static TABLE_KEYS: &[Binding] = &[
    bind(&[Key::char('/')], Action::OpenFilter, "filter rows (any visible cell)").footer("filter"),
    bind(&[Key::char('s')], Action::SortNext, "sort by the next column"),
    bind(&[Key::char('S')], Action::SortReverse, "reverse the sort"),
];

#[rustfmt::skip]
const REFRESH: Binding = bind(&[Key::char('r')], Action::Refresh, "refresh now").footer("refresh");

#[rustfmt::skip]
pub(super) static LIVE_KEYS: &[Binding] = &[
    REFRESH,
    bind(&[Key::char(' ')], Action::TogglePause, "pause or resume live data").footer("pause"),
];

/// The live keys where the footer is full (cluster panes, node detail): pause
/// is in help only.
#[rustfmt::skip]
pub(super) static LIVE_KEYS_BRIEF: &[Binding] = &[
    REFRESH,
    bind(&[Key::char(' ')], Action::TogglePause, "pause or resume live data"),
];

/// Enter opens a node only from the nodes pane.
fn on_the_nodes_pane(state: &AppState) -> bool {
    state.screen == Screen::Cluster(Pane::Nodes)
}

#[rustfmt::skip]
pub(super) static FLEET_TAIL: &[Binding] = &[
    bind(&[Key::char('e')], Action::OpenErrors, "show discovery errors"),
    bind(&[Key::plain(KeyCode::Esc)], Action::Back, "clear the filter"),
];

#[rustfmt::skip]
pub(super) static DETAIL_OWN: &[Binding] = &[
    bind(&[Key::char('h'), Key::plain(KeyCode::Left)], Action::PreviousNode, "previous node").footer("prev"),
    bind(&[Key::plain(KeyCode::Right)], Action::NextNode, "next node").footer("next"),
    bind(&[Key::plain(KeyCode::Esc)], Action::Back, "back to the nodes pane").footer("back"),
];

#[rustfmt::skip]
pub(super) static GLOBAL: &[Binding] = &[
    bind(&[Key::char(':')], Action::OpenCommandLine, "command line (:nodes, :etcd, :ctx NAME, :q)"),
    bind(&[Key::char('?')], Action::OpenHelp, "help").footer("help"),
    bind(&[Key::char('q'), Key::ctrl('c')], Action::Quit, "quit").footer("quit"),
];

/// The CAPI screen's own keys.
#[rustfmt::skip]
pub(super) static CAPI_OWN: &[Binding] = &[
    bind(&[Key::plain(KeyCode::Enter)], Action::OpenSelected, "every condition of the selected object").footer("conditions"),
    bind(&[Key::char('f'), Key::char('a')], Action::OpenActions, "fix a stuck state the doctor found (its plan and guards first)").footer("fix").offered(super::capi_doctor::offers_fix),
    bind(&[Key::plain(KeyCode::Esc)], Action::Back, "back to the cluster's panes").footer("back"),
];

/// On the cluster panes: the Cluster API tree of the cluster in use.
#[rustfmt::skip]
pub(super) static CAPI_FROM_CLUSTER: &[Binding] = &[bind(&[Key::char('C')], Action::OpenCapi, "the cluster's Cluster API tree and stuck states (:capi)")];
