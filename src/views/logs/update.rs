//! The update step of the log view: opening it (the service picker of a node, `d` for its
//! kernel log, etcd of every control plane, `:logs`, `:dmesg`), its keys, folding the
//! streams' reports in, and the start and stop of the streams as the screen comes and goes.
use super::action::{Action, Effect};
use super::logs::{
    LogArea, LogEffect, LogEvent, LogKey, LogNode, LogRequest, LogSubject, LogView, ServicePicker,
    picker_choices,
};
use super::message::Message;
use super::screen::{Pane, Screen};
use super::state::{AppState, InputKind};
use super::update_panes::detail_node_key;
use crate::fleet::{NodeRole, NodeStatus};

/// Which view's streams should run: the log view's while it is on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Streaming(Option<LogRequest>);

impl Streaming {
    pub fn of(state: &AppState) -> Streaming {
        let on_screen = state.screen == Screen::Logs && state.logs.picker.is_none();
        Streaming(
            on_screen
                .then(|| state.logs.view.as_ref().map(LogView::request))
                .flatten(),
        )
    }

    /// The effects that take the streams from `self` to `after`.
    pub fn transitions(&self, after: &Streaming) -> Vec<Effect> {
        let id = |s: &Streaming| s.0.as_ref().map(|r| r.view);
        if id(self) == id(after) {
            return Vec::new();
        }
        let mut out = Vec::new();
        if let Some(before) = &self.0 {
            out.push(Effect::Logs(LogEffect::Stop(before.view)));
        }
        if let Some(request) = &after.0 {
            out.push(Effect::Logs(LogEffect::Start(request.clone())));
        }
        out
    }
}

/// Folds a stream's report in; whether the screen shows it.
pub fn on_event(state: &mut AppState, event: LogEvent) -> bool {
    let applied = state.logs.view.as_mut().is_some_and(|v| v.apply(event));
    applied && state.screen == Screen::Logs && state.logs.picker.is_none()
}

/// The nodes of the cluster in use, as the fleet model lists them.
fn cluster_nodes(state: &AppState) -> Vec<NodeStatus> {
    state
        .current_live()
        .map(|live| live.status.nodes.clone())
        .unwrap_or_default()
}

fn log_node(node: &NodeStatus) -> LogNode {
    LogNode {
        name: node.name.clone(),
        address: node.address.clone(),
    }
}

/// `l` and `d` from the cluster panes and node detail.
pub fn open(state: &mut AppState, key: LogKey) -> Vec<Effect> {
    match (state.screen, key) {
        (Screen::Cluster(Pane::Etcd), LogKey::Open) => {
            let nodes: Vec<LogNode> = cluster_nodes(state)
                .iter()
                .filter(|n| n.role == NodeRole::Controlplane)
                .map(log_node)
                .collect();
            open_view(state, LogSubject::Service("etcd".into()), nodes);
        }
        (Screen::Cluster(Pane::Nodes) | Screen::NodeDetail, LogKey::Open | LogKey::Dmesg) => {
            let node = detail_node_key(state)
                .and_then(|key| cluster_nodes(state).into_iter().find(|n| n.address == key));
            let Some(node) = node else {
                state.message = Some(Message::warn("no node selected"));
                return Vec::new();
            };
            if key == LogKey::Dmesg {
                open_view(state, LogSubject::Kernel, vec![log_node(&node)]);
            } else {
                open_picker(state, &node);
            }
        }
        (Screen::Cluster(_), LogKey::Open) => {
            state.message = Some(Message::info(
                "l opens logs from the nodes pane (1) or the etcd pane (2)",
            ));
        }
        _ => {}
    }
    Vec::new()
}

fn remember_back(state: &mut AppState) {
    if state.screen != Screen::Logs {
        state.logs.back_to = Some(state.screen);
    }
}

fn open_picker(state: &mut AppState, node: &NodeStatus) {
    let Some(cluster) = state.current.clone() else {
        return;
    };
    remember_back(state);
    state.logs.picker = Some(ServicePicker {
        cluster,
        node: log_node(node),
        control_plane: node.role == NodeRole::Controlplane,
        selected: 0,
    });
    state.screen = Screen::Logs;
}

/// Opens a view of `subject` on `nodes` of the cluster in use.
pub fn open_view(state: &mut AppState, subject: LogSubject, nodes: Vec<LogNode>) {
    let Some(cluster) = state.current.clone() else {
        state.message = Some(Message::warn(
            "no cluster in use: Enter on the fleet or :ctx NAME",
        ));
        return;
    };
    if nodes.is_empty() {
        state.message = Some(Message::warn(format!(
            "no node of {cluster} to read {} from yet",
            subject.name()
        )));
        return;
    }
    remember_back(state);
    let id = state.logs.next_view_id();
    state.logs.picker = None;
    state.logs.view = Some(LogView::new(id, &cluster, subject, nodes));
    state.screen = Screen::Logs;
    state.message = None;
}

/// `:logs SERVICE [NODE...]` (no node: every node that runs it, the control planes for etcd
/// and the static pods) and `:dmesg NODE`.
pub fn open_command(state: &mut AppState, subject: LogSubject, names: &[String]) {
    let nodes = cluster_nodes(state);
    let chosen: Vec<LogNode> = if names.is_empty() {
        let control_planes_only = match &subject {
            LogSubject::Service(id) => id == "etcd",
            LogSubject::StaticPod(_) => true,
            LogSubject::Kernel => false,
        };
        nodes
            .iter()
            .filter(|n| !control_planes_only || n.role == NodeRole::Controlplane)
            .map(log_node)
            .collect()
    } else {
        let mut chosen = Vec::new();
        for name in names {
            match nodes.iter().find(|n| &n.name == name || &n.address == name) {
                Some(n) => chosen.push(log_node(n)),
                None => {
                    let known: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
                    state.message = Some(Message::error(format!(
                        "no node named {name:?} in the cluster in use; its nodes: {}",
                        known.join(", ")
                    )));
                    return;
                }
            }
        }
        chosen
    };
    open_view(state, subject, chosen);
}

/// Rows of log lines on a terminal of `size`: all but the header, input and footer lines
/// and the pane's border.
pub fn log_rows(size: (u16, u16)) -> usize {
    usize::from(size.1.saturating_sub(5)).max(1)
}

/// Columns of the lines inside the pane's border and its one column of padding each side on
/// a terminal of `size`.
pub fn log_columns(size: (u16, u16)) -> usize {
    usize::from(size.0.saturating_sub(4)).max(1)
}

/// Keys on the log screen: the picker's while it is open, else the view's.
pub fn on_logs(state: &mut AppState, action: Action) -> Vec<Effect> {
    if state.logs.picker.is_some() {
        on_picker(state, action);
        return Vec::new();
    }
    let rows = log_rows(state.size);
    // A page keeps one line of the last one, so a taller message line never skips a line.
    let page = rows.saturating_sub(1).max(1) as isize;
    let columns = log_columns(state.size);
    let Some(view) = state.logs.view.as_mut() else {
        go_back(state);
        return Vec::new();
    };
    let area = LogArea {
        rows,
        room: view.text_room(columns),
    };
    match action {
        Action::MoveDown => view.scroll(1, area),
        Action::MoveUp => view.scroll(-1, area),
        Action::PageDown => view.scroll(page, area),
        Action::PageUp => view.scroll(-page, area),
        Action::MoveFirst => view.scroll_home(),
        Action::MoveLast => view.follow(),
        Action::TogglePause => view.toggle_pause(),
        Action::Logs(LogKey::Timestamps) => view.timestamps = !view.timestamps,
        Action::Logs(LogKey::Left) => view.shift(false, area.room),
        Action::Logs(LogKey::Right) => view.shift(true, area.room),
        Action::Logs(LogKey::Wrap) => view.toggle_wrap(),
        Action::Logs(LogKey::Follow) => view.toggle_follow(area),
        Action::Logs(key @ (LogKey::NextMatch | LogKey::PreviousMatch)) => {
            let forward = key == LogKey::NextMatch;
            if view.filter.is_empty() {
                state.message = Some(Message::info(
                    "n and N jump between occurrences of the filter: type it with / first",
                ));
            } else if !view.jump(forward, area) {
                let text = crate::printable::line(&view.filter);
                state.message = Some(Message::warn(format!("{text:?} occurs in no line shown")));
            }
        }
        Action::OpenFilter => {
            let text = view.filter.clone();
            state.open_input(InputKind::Filter, text);
        }
        Action::Back if !view.filter.is_empty() => view.set_filter(""),
        Action::Back => go_back(state),
        Action::OpenHelp => state.overlay = Some(super::state::Overlay::Help { scroll: 0 }),
        Action::OpenCommandLine => state.open_input(InputKind::Command, String::new()),
        _ => {}
    }
    Vec::new()
}

fn on_picker(state: &mut AppState, action: Action) {
    let Some(picker) = state.logs.picker.clone() else {
        return;
    };
    let (choices, _) = picker_choices(&state.fleet, &picker);
    let last = choices.len().saturating_sub(1);
    let selected = picker.selected.min(last);
    let to = match action {
        Action::MoveDown => (selected + 1).min(last),
        Action::MoveUp => selected.saturating_sub(1),
        Action::MoveFirst | Action::PageUp => 0,
        Action::MoveLast | Action::PageDown => last,
        Action::OpenSelected => {
            if let Some((subject, _)) = choices.into_iter().nth(selected) {
                open_view(state, subject, vec![picker.node]);
            }
            return;
        }
        Action::Back => {
            go_back(state);
            return;
        }
        Action::OpenHelp => {
            state.overlay = Some(super::state::Overlay::Help { scroll: 0 });
            selected
        }
        _ => selected,
    };
    if let Some(p) = state.logs.picker.as_mut() {
        p.selected = to;
    }
}

/// Esc and q: back where the view or picker was opened from.
fn go_back(state: &mut AppState) {
    state.logs.picker = None;
    state.logs.view = None;
    state.screen = state.logs.back_to.take().unwrap_or(Screen::Fleet);
}

/// The filter typed on the log screen (`/`).
pub fn set_filter(state: &mut AppState, text: &str) -> bool {
    match state.logs.view.as_mut() {
        Some(view) if state.screen == Screen::Logs => {
            view.set_filter(text);
            true
        }
        _ => false,
    }
}

#[cfg(test)]
#[path = "update_logs_tests.rs"]
mod tests;
