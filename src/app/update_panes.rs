//! The update step for the fleet, cluster and node detail screens: moving
//! the selection by row identity, sorting, panes, refresh and pause, folding
//! poller reports into the fleet model, and the poller requests that follow
//! from what is on screen.
use super::action::{Action, Effect, PollerCommand};
use super::binding::Move;
use super::message::Message;
use super::screen::{Pane, Screen, TableKind};
use super::state::{AppState, InputKind, MAX_HELD_EVENTS};
use super::tables;
use crate::fleet::FleetEvent;
use crate::node_resources::NodeIdentity;

/// What the pollers should be doing for this screen: the cluster polled at
/// the refresh interval, and the node whose services and events are watched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watching {
    focus: Option<String>,
    node: Option<(String, String)>,
}

impl Watching {
    pub fn of(state: &AppState) -> Watching {
        let focus = state.cluster_on_screen().map(String::from);
        let node = match state.screen {
            Screen::NodeDetail => tables::selected_key(state, TableKind::Nodes),
            // A screen module's node (the log picker lists the node's services).
            Screen::Module(_) => super::shell::watched_node(state),
            _ => None,
        };
        let node = focus.clone().zip(node);
        Watching { focus, node }
    }

    /// The requests that take the pollers from `self` to `after`.
    pub fn transitions(&self, after: &Watching) -> Vec<PollerCommand> {
        let mut out = Vec::new();
        if self.focus != after.focus {
            out.push(PollerCommand::Focus(after.focus.clone()));
        }
        if self.node != after.node {
            out.push(match &after.node {
                Some((cluster, node)) => PollerCommand::WatchNode {
                    cluster: cluster.clone(),
                    node: node.clone(),
                },
                None => PollerCommand::UnwatchNode,
            });
        }
        out
    }
}

/// The nodes whose CPU, memory and disk use the nodes pane shows: the rows that can be on
/// screen (a terminal's height of them, from the first row the pane shows as it scrolls to
/// keep the selection in view), in the cluster on screen. Asked again only when they change
/// (`Tables::usage_asked`); leaving the cluster stops the reads with its focus.
pub fn usage_request(state: &mut AppState) -> Option<PollerCommand> {
    let live = live_on_cluster_screens(state);
    let shown = live.map(|live| (live.status.name.clone(), usage_window(state, live)));
    let shown = shown.filter(|(_, nodes)| !nodes.is_empty());
    if shown == state.tables.usage_asked {
        return None;
    }
    state.tables.usage_asked = shown.clone();
    let (cluster, nodes) = shown?;
    Some(PollerCommand::ReadUsage { cluster, nodes })
}

/// The nodes whose machine configurations the DRIFT column compares: every node of the cluster
/// on screen with a known role, asked once its first round has listed them and again when that
/// list changes or a configuration change ends (`update` forgets the cluster's); the
/// poller reads them again slowly on its own.
pub fn drift_request(state: &mut AppState) -> Option<PollerCommand> {
    let live = live_on_cluster_screens(state).filter(|l| l.poll_finished.is_some())?;
    let nodes: Vec<_> = (live.status.nodes.iter())
        .filter(|n| !n.address.is_empty() && n.role != crate::fleet::NodeRole::Unknown)
        .map(|n| n.drift_target())
        .collect();
    let addresses: Vec<String> = nodes.iter().map(|n| n.address.clone()).collect();
    let cluster = live.status.name.clone();
    if nodes.is_empty() || state.tables.drift_asked.get(&cluster) == Some(&addresses) {
        return None;
    }
    state.tables.drift_asked.insert(cluster.clone(), addresses);
    Some(PollerCommand::ReadConfigDrift { cluster, nodes })
}

/// The cluster in use, live, on the cluster panes and node detail: what the usage and drift
/// requests read; none on other screens.
fn live_on_cluster_screens(state: &AppState) -> Option<&crate::fleet::ClusterLive> {
    state
        .current_live()
        .filter(|_| state.screen.of_cluster_in_use())
}

fn usage_window(state: &AppState, live: &crate::fleet::ClusterLive) -> Vec<NodeIdentity> {
    let data = super::prepared::table(state, TableKind::Nodes);
    let room = usize::from(state.size.1);
    let first = (data.selected_index(state.tables.get(TableKind::Nodes)) + 1).saturating_sub(room);
    (data.rows.iter().skip(first).take(room))
        .filter_map(|row| live.status.nodes.iter().find(|n| n.address == row.key))
        .filter(|n| !n.address.is_empty())
        .map(|n| n.identity())
        .collect()
}

/// A poller's report folded in, or held while paused, then every screen module that reads the
/// cluster's model told it changed (`screens::on_fleet_change`). Returns whether the screen
/// may show something new: not for a start of round, not for a cluster that is not on screen,
/// not for a report that changed nothing.
pub fn on_fleet_event(state: &mut AppState, event: FleetEvent) -> bool {
    let cluster = event.cluster().to_string();
    let capi = matches!(event, FleetEvent::Capi { .. });
    let certificates = matches!(event, FleetEvent::Certificates { .. });
    let shown = if state.paused {
        if state.held.len() >= MAX_HELD_EVENTS {
            state.held.pop_front();
        }
        state.held.push_back(event);
        false
    } else {
        fold(state, event)
    };
    let change = super::screens::FleetChange {
        cluster: &cluster,
        certificates,
        capi,
    };
    shown | super::shell::on_fleet_change(state, &change)
}

fn fold(state: &mut AppState, event: FleetEvent) -> bool {
    let at = event.at();
    state.now = Some(state.now.map_or(at, |now| now.max(at)));
    let cluster = event.cluster().to_string();
    let start = matches!(event, FleetEvent::PollStarted { .. });
    let capi = matches!(event, FleetEvent::Capi { .. });
    let finish = matches!(event, FleetEvent::PollFinished { .. });
    let node = match &event {
        FleetEvent::Node { node, .. } => Some(node.address.clone()),
        _ => None,
    };
    let changed = state.fleet.apply(event);
    if let (Some(address), Some(wall)) = (node, state.wall_clock)
        && let Some(live) = state.fleet.clusters.get_mut(&cluster)
    {
        live.note_down_since(&address, wall);
    }
    if !changed || start {
        return false;
    }
    if capi {
        // Fleet-wide: the fleet's rows and the cluster screens say who owns a cluster.
        return matches!(state.screen, Screen::Fleet | Screen::Cluster(_));
    }
    // A screen module hears of the change on its own (`screens::on_fleet_change`).
    let of_cluster = state.screen.of_cluster_in_use() && state.current.as_deref() == Some(&cluster);
    if !(of_cluster || state.screen == Screen::Fleet) {
        return false;
    }
    if finish {
        // The end of a round moves only the ages of stale data, or the
        // "waiting" of a cluster that has not answered yet.
        return state.fleet.cluster(&cluster).is_some_and(|live| {
            live.status.error.is_some()
                || !live.has_data()
                || live.status.nodes.iter().any(|n| n.error.is_some())
        });
    }
    true
}

/// Rows PgUp/PgDn move by.
fn page(state: &AppState) -> usize {
    usize::from(state.size.1.saturating_sub(10)).max(1)
}

/// Moves the selection of `kind` and keeps it by the row's identity.
fn move_selection(state: &mut AppState, kind: TableKind, to: Move) {
    let data = tables::table(state, kind);
    let Some(last) = data.rows.len().checked_sub(1) else {
        return;
    };
    let i = data.selected_index(state.tables.get(kind));
    let to = to.from(i, last, page(state));
    state.select(kind, data.rows[to].key.clone());
}

/// The move keys on node detail scroll its recent events (newest first, so
/// it follows the top line).
fn scroll_node_events(state: &mut AppState, to: Move) {
    let len = tables::selected_key(state, TableKind::Nodes)
        .and_then(|node| state.current_live()?.events.get(&node).map(|e| e.len()))
        .unwrap_or(0);
    let page = page(state);
    state.node_events.go(to, len, 0, page);
}

/// Shows the cluster in use (after Enter or `:ctx`) on its nodes pane,
/// with fresh selections.
pub fn open_cluster(state: &mut AppState) {
    for kind in [TableKind::Nodes, TableKind::Etcd, TableKind::Versions] {
        let view = state.tables.get_mut(kind);
        view.selected = None;
        view.filter.clear();
    }
    state.screen = Screen::Cluster(Pane::Nodes);
}

/// Enter on the fleet: its selected cluster in use, on its nodes pane.
pub(super) fn open_selected_cluster(state: &mut AppState) {
    if let Some(name) = tables::selected_key(state, TableKind::Fleet) {
        state.use_cluster(&name);
        open_cluster(state);
    }
}

/// `:nodes`, `:etcd`, `:versions`: the pane of the cluster in use, or of the
/// fleet's selected cluster when none is in use yet.
pub fn show_pane(state: &mut AppState, pane: Pane) {
    if state.current.is_none() && state.screen == Screen::Fleet {
        open_selected_cluster(state);
    }
    if cluster_in_use(state).is_some() {
        state.screen = Screen::Cluster(pane);
    }
}

/// The cluster in use, or `None` said on the message line.
pub(super) fn cluster_in_use(state: &mut AppState) -> Option<String> {
    if state.current.is_none() {
        state.message = Some(Message::no_cluster_in_use());
    }
    state.current.clone()
}

fn toggle_pause(state: &mut AppState) {
    if !state.paused {
        state.paused = true;
        state.message = Some(Message::info(
            "paused: reports are held; Space applies them and goes on",
        ));
        return;
    }
    state.paused = false;
    let held = std::mem::take(&mut state.held);
    let n = held.len();
    for event in held {
        fold(state, event);
    }
    state.message = Some(Message::info(format!("resumed: {n} held reports applied")));
}

fn refresh(state: &mut AppState) -> Vec<Effect> {
    let request = match state.cluster_on_screen().map(String::from) {
        Some(cluster) => {
            state.message = Some(Message::info(format!("refreshing {cluster}")));
            PollerCommand::Refresh(cluster)
        }
        None => {
            state.message = Some(Message::info("refreshing every cluster"));
            PollerCommand::RefreshAll
        }
    };
    vec![Effect::Poller(request)]
}

/// Keys on the fleet, cluster and node detail screens.
pub fn on_screen(state: &mut AppState, action: Action) -> Vec<Effect> {
    let table = state.active_table();
    match action {
        Action::Move(to) => match table {
            Some(kind) => move_selection(state, kind, to),
            None if state.screen == Screen::NodeDetail => scroll_node_events(state, to),
            None => {}
        },
        Action::StepNode(to) if state.screen == Screen::NodeDetail => {
            move_selection(state, TableKind::Nodes, to);
            state.node_events = Default::default();
        }
        Action::OpenSelected => match state.screen {
            Screen::Fleet => open_selected_cluster(state),
            Screen::Clusters => {
                if let Some(name) = tables::selected_key(state, TableKind::Clusters) {
                    state.message = Some(Message::info(format!("using cluster {name}")));
                    state.current = Some(name);
                }
            }
            Screen::Cluster(Pane::Nodes) => {
                if let Some(node) = tables::selected_key(state, TableKind::Nodes) {
                    state.select(TableKind::Nodes, node);
                    state.node_events = Default::default();
                    state.screen = Screen::NodeDetail;
                }
            }
            Screen::Cluster(_) => {
                state.message = Some(Message::info("Enter opens a node from the nodes pane (1)"));
            }
            _ => {}
        },
        Action::NextPane => {
            if let Screen::Cluster(pane) = state.screen {
                state.screen = Screen::Cluster(pane.next());
            }
        }
        Action::SortNext | Action::SortReverse => {
            if let Some(kind) = table {
                let data = tables::table(state, kind);
                let width = tables::table_width(state.size, kind);
                let view = state.tables.get_mut(kind);
                if matches!(action, Action::SortNext) {
                    view.sort = tables::next_shown_column(&data, width, view.sort);
                    view.reverse = false;
                } else {
                    view.reverse = !view.reverse;
                }
            }
        }
        Action::Refresh => return refresh(state),
        Action::TogglePause => toggle_pause(state),
        Action::Back => match (state.screen, table) {
            (_, Some(kind)) if !state.tables.get(kind).filter.is_empty() => {
                state.tables.get_mut(kind).filter.clear();
            }
            (Screen::Cluster(_) | Screen::Clusters, _) => state.screen = Screen::Fleet,
            (Screen::NodeDetail, _) => state.screen = Screen::Cluster(Pane::Nodes),
            _ => state.message = None,
        },
        Action::OpenFilter => {
            if let Some(kind) = table {
                let text = state.tables.get(kind).filter.clone();
                state.open_input(InputKind::Filter, text);
            }
        }
        _ => {}
    }
    Vec::new()
}

#[cfg(test)]
#[path = "update_panes_tests.rs"]
mod tests;
