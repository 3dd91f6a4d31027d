//! The log screen's update step: opening it (the picker of a node, its kernel log, etcd of
//! every control plane, `:logs`, `:dmesg`), its keys, the streams' reports folded in, and the
//! streams started and stopped as the screen comes and goes. Pure.
use super::buffer::{
    LogArea, LogEvent, LogSubject, LogTask, LogView, ServicePicker, picker_choices,
};
use super::{LogsKey, LogsScreen, NAME};
use crate::app::action::Effect;
use crate::app::binding::Move;
use crate::app::message::Message;
use crate::app::screen::{Pane, Screen};
use crate::app::screens::{Opening, ScreenTask, Shared, Step};
use crate::fleet::{ClusterStatus, NodeRole, NodeStatus};
use crate::node_resources::NodeIdentity;

/// What `l` says where it opens nothing.
pub(super) const WHERE_LOGS_OPEN: &str =
    "l opens logs from the nodes pane (1) or the etcd pane (2)";

/// The nodes `names` name (by name or address), or which name matches none.
fn named(names: &[String], status: &ClusterStatus) -> Result<Vec<NodeIdentity>, Message> {
    let node = |name: &String| status.node_named(name).map(NodeStatus::identity);
    names
        .iter()
        .map(node)
        .collect::<Result<_, _>>()
        .map_err(Message::error)
}

/// The nodes that run `subject`: the control planes for etcd and the static pods, else all.
fn running(subject: &LogSubject, nodes: &[NodeStatus]) -> Vec<NodeIdentity> {
    let control_planes_only = match subject {
        LogSubject::Service(id) => id == "etcd",
        LogSubject::StaticPod(_) => true,
        LogSubject::Container(_) | LogSubject::Kernel => false,
    };
    nodes
        .iter()
        .filter(|n| !control_planes_only || n.role == NodeRole::Controlplane)
        .map(NodeStatus::identity)
        .collect()
}

/// The node selected where the screen was opened.
fn selected<'a>(opening: &Opening, status: &'a ClusterStatus) -> Result<&'a NodeStatus, Message> {
    let node = opening.node.as_ref().and_then(|key| status.node(key));
    node.ok_or_else(|| Message::warn("no node selected"))
}

/// Columns of the lines inside the pane's border and its one column of padding each side on
/// a terminal of `size`.
fn log_columns(size: (u16, u16)) -> usize {
    usize::from(size.0.saturating_sub(4)).max(1)
}

fn task(task: LogTask) -> Effect {
    Effect::Screen(ScreenTask::new(NAME, task))
}

impl LogsScreen {
    /// `l` and `d` on the cluster panes and node detail (by where it was opened and its
    /// node), `:logs SERVICE [NODE...]` (no node: every node that runs it) and `:dmesg NODE`.
    pub(super) fn open_for(&mut self, opening: &Opening, shared: &Shared) -> Result<Step, Message> {
        // The cluster in use as the model has it; none of its nodes known before it answers.
        let unknown = ClusterStatus {
            name: shared.current.unwrap_or_default().to_string(),
            ..ClusterStatus::default()
        };
        let live = shared.current.and_then(|c| shared.fleet.cluster(c));
        let status = live.map_or(&unknown, |l| &l.status);
        match opening.words.split_first() {
            Some((command, names)) if command == "dmesg" => {
                let chosen = match names {
                    [] => vec![selected(opening, status)?.identity()],
                    names => named(names, status)?,
                };
                self.open_view(shared, LogSubject::Kernel, chosen)
            }
            Some((_, [service, names @ ..])) => {
                let subject = LogSubject::named(service);
                let chosen = match names {
                    [] => running(&subject, &status.nodes),
                    names => named(names, status)?,
                };
                self.open_view(shared, subject, chosen)
            }
            _ => match opening.from {
                Screen::Cluster(Pane::Etcd) => {
                    let etcd = LogSubject::Service("etcd".into());
                    let chosen = running(&etcd, &status.nodes);
                    self.open_view(shared, etcd, chosen)
                }
                Screen::Cluster(Pane::Nodes) | Screen::NodeDetail => {
                    let node = selected(opening, status)?;
                    self.open_picker(shared, node)
                }
                _ => Err(Message::info(WHERE_LOGS_OPEN)),
            },
        }
    }

    fn open_picker(&mut self, shared: &Shared, node: &NodeStatus) -> Result<Step, Message> {
        let cluster = shared.cluster_in_use()?;
        self.picker = Some(ServicePicker {
            cluster: cluster.to_string(),
            node: node.identity(),
            control_plane: node.role == NodeRole::Controlplane,
            selected: 0,
        });
        Ok(Step::default())
    }

    /// A view of `subject` on `nodes` of the cluster in use.
    fn open_view(
        &mut self,
        shared: &Shared,
        subject: LogSubject,
        nodes: Vec<NodeIdentity>,
    ) -> Result<Step, Message> {
        let cluster = shared.cluster_in_use()?;
        if nodes.is_empty() {
            return Err(Message::warn(format!(
                "no node of {cluster} to read {} from yet",
                subject.name()
            )));
        }
        self.next_id += 1;
        self.picker = None;
        self.view = Some(LogView::new(self.next_id, cluster, subject, nodes));
        Ok(Step::default())
    }

    /// After each update step: the streams of the view on screen run, any other's stop.
    pub(super) fn settle_streams(&mut self, on_top: bool) -> Vec<Effect> {
        let wanted = self
            .view
            .as_ref()
            .filter(|_| on_top && self.picker.is_none());
        if wanted.map(LogView::id) == self.streaming {
            return Vec::new();
        }
        let mut out: Vec<Effect> = self
            .streaming
            .take()
            .map(LogTask::Stop)
            .map(task)
            .into_iter()
            .collect();
        if let Some(view) = wanted {
            self.streaming = Some(view.id());
            out.push(task(LogTask::Start(view.follows.clone())));
        }
        out
    }

    /// Folds a stream's report in; whether the screen shows it.
    pub(super) fn on_event(&mut self, event: &LogEvent) -> bool {
        let applied = self.view.as_mut().is_some_and(|v| v.apply(event.clone()));
        applied && self.picker.is_none()
    }

    /// The screen's keys: the picker's while it is open, else the view's.
    pub(super) fn on_intent(&mut self, key: LogsKey, shared: &Shared) -> Step {
        if key == LogsKey::Back {
            return self.back();
        }
        if self.picker.is_some() {
            return self.on_picker(key, shared);
        }
        let rows = shared.pane_rows();
        // A page keeps one line of the last one, so a taller message line never skips a line.
        let page = rows.saturating_sub(1).max(1) as isize;
        let Some(view) = self.view.as_mut() else {
            return Step::close();
        };
        let area = LogArea {
            rows,
            room: view.text_room(log_columns(shared.size)),
        };
        match key {
            LogsKey::Scroll(Move::Down) => view.scroll(1, area),
            LogsKey::Scroll(Move::Up) => view.scroll(-1, area),
            LogsKey::Scroll(Move::PageDown) => view.scroll(page, area),
            LogsKey::Scroll(Move::PageUp) => view.scroll(-page, area),
            LogsKey::Scroll(Move::First) => view.scroll_home(),
            LogsKey::Scroll(Move::Last) => view.follow(),
            LogsKey::Pause => view.toggle_pause(),
            LogsKey::Timestamps => view.timestamps = !view.timestamps,
            LogsKey::Shift(right) => view.shift(right, area.room),
            LogsKey::Wrap => view.toggle_wrap(),
            LogsKey::Follow => view.toggle_follow(area),
            LogsKey::Jump(_) if view.filter.is_empty() => {
                return Step::message(Message::info(
                    "n and N jump between occurrences of the filter: type it with / first",
                ));
            }
            LogsKey::Jump(forward) => {
                if !view.jump(forward, area) {
                    let text = crate::printable::line(&view.filter);
                    let text = format!("{text:?} occurs in no line shown");
                    return Step::message(Message::warn(text));
                }
            }
            LogsKey::Filter => return Step::filter(view.filter.clone()),
            LogsKey::Pick | LogsKey::Back => {}
        }
        Step::default()
    }

    /// The picker's keys: the move keys through its choices, Enter follows the selected one.
    fn on_picker(&mut self, key: LogsKey, shared: &Shared) -> Step {
        let Some(picker) = self.picker.as_mut() else {
            return Step::default();
        };
        let (choices, _) = picker_choices(shared.fleet, picker);
        let last = choices.len().saturating_sub(1);
        match key {
            LogsKey::Scroll(step) => {
                picker.selected = step.from(picker.selected, last, shared.pane_rows());
            }
            LogsKey::Pick => {
                let chosen = choices.into_iter().nth(picker.selected.min(last));
                let node = picker.node.clone();
                let opened = chosen.map(|(subject, _)| self.open_view(shared, subject, vec![node]));
                if let Some(Err(why)) = opened {
                    return Step::message(why);
                }
            }
            _ => {}
        }
        Step::default()
    }

    /// Esc and q: the filter cleared, else back where the view or picker was opened from.
    fn back(&mut self) -> Step {
        match self.view.as_mut() {
            Some(view) if self.picker.is_none() && !view.filter.is_empty() => {
                view.set_filter("");
                Step::default()
            }
            _ => {
                self.picker = None;
                self.view = None;
                Step::close()
            }
        }
    }
}

#[cfg(test)]
#[path = "update_tests.rs"]
mod tests;
