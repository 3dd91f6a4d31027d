//! The key tables of the fleet, cluster and node detail screens, in pieces
//! the keymap puts together per context: moves, table keys (filter, sort),
//! live-data keys (refresh, `Space` pause) and the keys every screen has.
use super::action::Action;
use super::binding::{Binding, HELP, Key, bind, command_line, quit};
use super::screen::{Pane, Screen};
use super::state::AppState;

#[rustfmt::skip]
pub(super) static MOVES: &[Binding] = &[
    bind(&[Key::char('j'), Key::DOWN], Action::MoveDown, "move down"),
    bind(&[Key::char('k'), Key::UP], Action::MoveUp, "move up"),
    bind(&[Key::char('g'), Key::HOME], Action::MoveFirst, "first row"),
    bind(&[Key::char('G'), Key::END], Action::MoveLast, "last row"),
    bind(&[Key::PAGE_DOWN, Key::ctrl('f')], Action::PageDown, "page down"),
    bind(&[Key::PAGE_UP, Key::ctrl('b')], Action::PageUp, "page up"),
];

#[rustfmt::skip]
pub(super) static FLEET_OWN: &[Binding] = &[
    bind(&[Key::ENTER], Action::OpenSelected, "open the selected cluster").footer("open"),
    bind(&[Key::char('u')], Action::OpenUpgrade(None), "plan a Talos upgrade of the selected cluster"),
    bind(&[Key::char('U')], Action::OpenKubernetesUpgrade(None), "plan a Kubernetes upgrade of the selected cluster"),
];

#[rustfmt::skip]
pub(super) static CLUSTER_OWN: &[Binding] = &[
    bind(&[Key::char('1')], Action::ShowPane(Pane::Nodes), "nodes pane"),
    bind(&[Key::char('2')], Action::ShowPane(Pane::Etcd), "etcd pane"),
    bind(&[Key::char('3')], Action::ShowPane(Pane::Versions), "versions pane"),
    bind(&[Key::TAB], Action::NextPane, "next pane").footer("pane"),
    bind(&[Key::ENTER], Action::OpenSelected, "node detail (nodes pane)").footer("node").offered(on_the_nodes_pane),
    bind(&[Key::char('u')], Action::OpenUpgrade(None), "plan a Talos upgrade (or show the running one)"),
    bind(&[Key::char('U')], Action::OpenKubernetesUpgrade(None), "plan a Kubernetes upgrade (the versions pane shows what runs)"),
    bind(&[Key::ESC], Action::Back, "clear the filter, else back to the fleet"),
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
const PAUSE: Binding = bind(&[Key::char(' ')], Action::TogglePause, "pause or resume live data");

pub(super) static LIVE_KEYS: &[Binding] = &[REFRESH, PAUSE.footer("pause")];

/// The live keys where the footer is full (cluster panes, node detail): pause
/// is in help only.
pub(super) static LIVE_KEYS_BRIEF: &[Binding] = &[REFRESH, PAUSE];

/// Enter opens a node only from the nodes pane.
fn on_the_nodes_pane(state: &AppState) -> bool {
    state.screen == Screen::Cluster(Pane::Nodes)
}

#[rustfmt::skip]
pub(super) static FLEET_TAIL: &[Binding] = &[
    bind(&[Key::char('e')], Action::OpenErrors, "show discovery errors"),
    bind(&[Key::ESC], Action::Back, "clear the filter"),
];

#[rustfmt::skip]
pub(super) static DETAIL_OWN: &[Binding] = &[
    bind(&[Key::char('h'), Key::LEFT], Action::PreviousNode, "previous node").footer("prev"),
    bind(&[Key::RIGHT], Action::NextNode, "next node").footer("next"),
    bind(&[Key::ESC], Action::Back, "back to the nodes pane").footer("back"),
];

#[rustfmt::skip]
pub(super) static GLOBAL: &[Binding] = &[
    command_line("command line (:nodes, :etcd, :ctx NAME, :q)"),
    HELP,
    quit("quit").footer("quit"),
];

/// On the cluster panes: the Cluster API tree of the cluster in use.
#[rustfmt::skip]
pub(super) static CAPI_FROM_CLUSTER: &[Binding] = &[bind(&[Key::char('C')], Action::Open("capi"), "the cluster's Cluster API tree and stuck states (:capi)")];
