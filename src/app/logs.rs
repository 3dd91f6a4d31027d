//! The log view's state: what it follows (one service of one or several nodes, or one node's
//! kernel log), the lines received in a bounded ring buffer in arrival order, and how the
//! operator looks at them (filter, pause, scroll, timestamps). Pure: lines come as events.
use std::collections::VecDeque;

use super::screen::Screen;
use crate::fleet::FleetModel;
use crate::talos::LogSource;
use crate::upgrade::kubernetes::Component;

/// Lines the view keeps; older ones are dropped, and the header says how many.
pub const MAX_LOG_LINES: usize = 10_000;
/// Lines each node sends of its log's past when the view opens. The headless `logs` reads
/// the whole log unless told `--tail N`; a console screen wants a screenful and some more.
pub const DEFAULT_TAIL: u32 = 100;

/// What the view follows on each of its nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogSubject {
    /// A Talos service (an id of the node's ServiceList): containerd's `system` namespace.
    Service(String),
    /// A control plane's static pod (`kube-apiserver`...): its container, CRI namespace.
    StaticPod(String),
    /// The kernel log (`Dmesg`).
    Kernel,
}

impl LogSubject {
    /// What `:logs NAME` names: a static pod's component, else a Talos service.
    pub fn named(name: &str) -> LogSubject {
        let static_pod = Component::STATIC_PODS.iter().any(|c| c.as_str() == name);
        if static_pod {
            LogSubject::StaticPod(name.to_string())
        } else {
            LogSubject::Service(name.to_string())
        }
    }

    /// The log to ask a node for, its hostname being `node`: the same [`LogSource`] the
    /// headless `logs` and `dmesg` read.
    pub fn source_for(&self, node: &str) -> LogSource {
        match self {
            LogSubject::Service(id) => LogSource::requested(id, false),
            LogSubject::StaticPod(component) => LogSource::static_pod(component, node),
            LogSubject::Kernel => LogSource::Kernel,
        }
    }

    /// How the subject reads in titles: the service or component, or `kernel`.
    pub fn name(&self) -> &str {
        match self {
            LogSubject::Service(id) | LogSubject::StaticPod(id) => id,
            LogSubject::Kernel => "kernel",
        }
    }
}

/// A node the view follows: its name (the prefix of its lines) and the address asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogNode {
    pub name: String,
    pub address: String,
}

/// What the console's effect runner starts: one stream per node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRequest {
    /// The view the lines are for; reports of a view since closed are ignored.
    pub view: u64,
    pub cluster: String,
    pub subject: LogSubject,
    pub nodes: Vec<LogNode>,
    pub tail: u32,
}

/// What one node's stream reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogReport {
    /// Lines as they arrived (printable, bounded by the Talos client), at wall-clock `received`.
    Lines { lines: Vec<String>, received: u64 },
    /// The stream failed or ended; the runner opens it again after `retry_in` seconds.
    Ended { why: String, retry_in: u64 },
    /// Opened again after it ended; only lines written from now on arrive.
    Reconnected,
}

/// A report of node `node` (an index into the view's nodes) for view `view`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEvent {
    pub view: u64,
    pub node: usize,
    pub report: LogReport,
}

/// One line of the buffer: a node's log line, or a note about its stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// Arrival order over the view's life; survives drops from the buffer.
    pub seq: u64,
    /// Index into the view's nodes.
    pub node: usize,
    pub text: String,
    /// A note of the view's own (a stream ended, reconnected), not the node's.
    pub note: bool,
    /// Wall-clock seconds when it arrived.
    pub received: u64,
}

/// The lines on screen, and where they sit among the lines the filter lets through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogWindow<'a> {
    pub lines: Vec<&'a LogEntry>,
    /// The index of the first shown line among the matching ones.
    pub first: usize,
    /// Lines the filter lets through (up to the pause, when paused).
    pub matching: usize,
}

/// One log view: what it follows, its buffer, and how it is looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogView {
    pub id: u64,
    pub cluster: String,
    pub subject: LogSubject,
    pub nodes: Vec<LogNode>,
    pub tail: u32,
    lines: VecDeque<LogEntry>,
    next_seq: u64,
    /// Lines dropped from the front of the buffer so far.
    pub dropped: u64,
    /// Case-insensitive substring over the line and its node's name.
    pub filter: String,
    /// `t`: each line starts with the time it arrived.
    pub timestamps: bool,
    /// Space: the lines from this one on arrived after the pause; they are kept, not shown.
    pub paused_at: Option<u64>,
    /// Scrolled away from the end: the first line shown; `None` follows the end.
    pub top: Option<u64>,
    /// Columns of the lines' text scrolled off to the left.
    pub column: usize,
}

/// Columns Left/Right scroll by.
pub const COLUMN_STEP: usize = 20;

impl LogView {
    pub fn new(id: u64, cluster: &str, subject: LogSubject, nodes: Vec<LogNode>) -> LogView {
        LogView {
            id,
            cluster: cluster.to_string(),
            subject,
            nodes,
            tail: DEFAULT_TAIL,
            lines: VecDeque::new(),
            next_seq: 0,
            dropped: 0,
            filter: String::new(),
            timestamps: false,
            paused_at: None,
            top: None,
            column: 0,
        }
    }

    /// What the effect runner starts for this view.
    pub fn request(&self) -> LogRequest {
        LogRequest {
            view: self.id,
            cluster: self.cluster.clone(),
            subject: self.subject.clone(),
            nodes: self.nodes.clone(),
            tail: self.tail,
        }
    }

    /// Every line in the buffer, oldest first.
    pub fn buffer(&self) -> impl Iterator<Item = &LogEntry> {
        self.lines.iter()
    }

    /// Folds a node's report in; false when it was for another view or node.
    pub fn apply(&mut self, event: LogEvent) -> bool {
        if event.view != self.id || event.node >= self.nodes.len() {
            return false;
        }
        let node = event.node;
        match event.report {
            LogReport::Lines { lines, received } => {
                for text in lines {
                    self.push(node, text, false, received);
                }
            }
            LogReport::Ended { why, retry_in } => {
                let why = crate::printable::line(&why);
                let text = format!("stream ended: {why}; again in {retry_in}s");
                let received = self.lines.back().map_or(0, |l| l.received);
                self.push(node, text, true, received);
            }
            LogReport::Reconnected => {
                let text = "stream open again; lines written while it was closed are not shown"
                    .to_string();
                let received = self.lines.back().map_or(0, |l| l.received);
                self.push(node, text, true, received);
            }
        }
        true
    }

    fn push(&mut self, node: usize, text: String, note: bool, received: u64) {
        if self.lines.len() >= MAX_LOG_LINES {
            self.lines.pop_front();
            self.dropped += 1;
        }
        self.lines.push_back(LogEntry {
            seq: self.next_seq,
            node,
            text,
            note,
            received,
        });
        self.next_seq += 1;
    }

    /// Whether the filter lets `entry` through; notes about streams always show.
    fn matches(&self, entry: &LogEntry, needle: &str) -> bool {
        entry.note
            || needle.is_empty()
            || entry.text.to_lowercase().contains(needle)
            || self.nodes[entry.node].name.to_lowercase().contains(needle)
    }

    /// The lines the filter lets through, up to the pause.
    fn matching(&self) -> Vec<&LogEntry> {
        let needle = self.filter.to_lowercase();
        self.lines
            .iter()
            .filter(|l| self.paused_at.is_none_or(|p| l.seq < p))
            .filter(|l| self.matches(l, &needle))
            .collect()
    }

    /// Lines that arrived since the pause (all of them, whatever the filter).
    pub fn new_since_pause(&self) -> usize {
        match self.paused_at {
            Some(p) => self.lines.iter().filter(|l| l.seq >= p).count(),
            None => 0,
        }
    }

    /// Whether the view shows the newest lines as they come.
    pub fn following(&self) -> bool {
        self.top.is_none() && self.paused_at.is_none()
    }

    /// The lines a body of `rows` rows shows.
    pub fn window(&self, rows: usize) -> LogWindow<'_> {
        let matching = self.matching();
        let first = self.first_shown(&matching, rows);
        let lines = matching.iter().skip(first).take(rows).copied().collect();
        LogWindow {
            lines,
            first,
            matching: matching.len(),
        }
    }

    /// The index of the first shown line: the last screenful when following, else the
    /// scrolled-to line (the oldest kept one if it was dropped), never past the last screenful.
    fn first_shown(&self, matching: &[&LogEntry], rows: usize) -> usize {
        let last_page = matching.len().saturating_sub(rows);
        match self.top {
            None => last_page,
            Some(top) => matching
                .iter()
                .position(|l| l.seq >= top)
                .unwrap_or(last_page)
                .min(last_page),
        }
    }

    /// Scrolls by `delta` lines (negative: up) on a body of `rows` rows; scrolling to the end
    /// follows again unless paused.
    pub fn scroll(&mut self, delta: isize, rows: usize) {
        let matching = self.matching();
        let first = self.first_shown(&matching, rows);
        let last_page = matching.len().saturating_sub(rows);
        let to = first.saturating_add_signed(delta).min(last_page);
        self.top = if to >= last_page && delta > 0 {
            None
        } else {
            matching.get(to).map(|l| l.seq)
        };
    }

    /// Home: the oldest line kept.
    pub fn scroll_home(&mut self) {
        self.top = Some(self.lines.front().map_or(0, |l| l.seq));
    }

    /// End: the newest lines, following again (a pause ends).
    pub fn follow(&mut self) {
        self.top = None;
        self.paused_at = None;
    }

    /// Space: holds the screen where it is, or follows again.
    pub fn toggle_pause(&mut self) {
        if self.paused_at.is_some() {
            self.follow();
        } else {
            self.paused_at = Some(self.next_seq);
        }
    }

    /// Sets the filter; the view follows the end of what it lets through.
    pub fn set_filter(&mut self, text: &str) {
        self.filter = text.to_string();
        self.top = None;
    }

    /// Left/Right: scrolls the text sideways.
    pub fn shift(&mut self, right: bool) {
        self.column = if right {
            self.column
                .saturating_add(COLUMN_STEP)
                .min(crate::talos::logs::MAX_LINE_BYTES)
        } else {
            self.column.saturating_sub(COLUMN_STEP)
        };
    }
}

/// The log keys the keymap binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKey {
    /// `l` on the nodes pane or node detail: the node's service picker; on the etcd pane:
    /// etcd of every control plane.
    Open,
    /// `d` in node detail: the node's kernel log.
    Dmesg,
    /// `t`: the time each line arrived, or not.
    Timestamps,
    /// Left / Right: the text sideways.
    Left,
    Right,
}

/// What the effect runner is asked to do with the streams of a view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEffect {
    /// One stream per node; any earlier view's streams stop first.
    Start(LogRequest),
    /// Stop the streams of view `id`.
    Stop(u64),
}

/// The log view, the picker that leads to it, and where Esc goes back to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogsState {
    next_id: u64,
    pub picker: Option<ServicePicker>,
    pub view: Option<LogView>,
    pub back_to: Option<Screen>,
}

impl LogsState {
    /// A new view's id, so the streams of an earlier view are told apart.
    pub fn next_view_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }
}

/// `l` on a node: which of its logs to follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServicePicker {
    pub cluster: String,
    pub node: LogNode,
    pub control_plane: bool,
    pub selected: usize,
}

/// The picker's choices: the node's services as its ServiceList says (state and health),
/// its static pods on a control plane, and its kernel log; or why the services are missing.
pub fn picker_choices(
    fleet: &FleetModel,
    picker: &ServicePicker,
) -> (Vec<(LogSubject, String)>, Option<String>) {
    let services = fleet
        .cluster(&picker.cluster)
        .and_then(|live| live.services.get(&picker.node.address));
    let mut choices = Vec::new();
    let mut missing = None;
    match services {
        Some((Ok(list), _)) => choices.extend(list.iter().map(|s| {
            let health = match s.healthy {
                Some(true) => ", healthy",
                Some(false) => ", unhealthy",
                None => "",
            };
            (
                LogSubject::Service(s.id.clone()),
                format!("{}{health}", s.state),
            )
        })),
        Some((Err(e), _)) => missing = Some(format!("services not listed: {e}")),
        None => missing = Some("waiting for the node's service list".to_string()),
    }
    if picker.control_plane {
        choices.extend(Component::STATIC_PODS.iter().map(|c| {
            let subject = LogSubject::StaticPod(c.as_str().to_string());
            (subject, "static pod".to_string())
        }));
    }
    choices.push((LogSubject::Kernel, "dmesg".to_string()));
    (choices, missing)
}

#[cfg(test)]
#[path = "logs_tests.rs"]
mod tests;
