//! The log view's state: what it follows (one service of one or several nodes, or one node's
//! kernel log), the lines received in a bounded ring buffer in arrival order, and how the
//! operator looks at them (filter, pause, scroll, timestamps); the picker of a node's logs.
//! Pure: lines come as events.
use std::collections::VecDeque;

use unicode_width::UnicodeWidthStr;

use crate::fleet::FleetModel;
use crate::node_resources::NodeIdentity;
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
    /// Any Kubernetes container, `namespace/pod:container` (as `talosctl logs -k` names it).
    Container(String),
    /// The kernel log (`Dmesg`).
    Kernel,
}

impl LogSubject {
    /// What `:logs NAME` names: a container (`namespace/pod:container`), a static pod's
    /// component, else a Talos service.
    pub fn named(name: &str) -> LogSubject {
        let static_pod = Component::STATIC_PODS.iter().any(|c| c.as_str() == name);
        let container = name
            .split_once('/')
            .is_some_and(|(_, rest)| rest.contains(':'));
        if container {
            LogSubject::Container(name.to_string())
        } else if static_pod {
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
            LogSubject::Container(id) => LogSource::Container(id.clone()),
            LogSubject::Kernel => LogSource::Kernel,
        }
    }

    /// How the subject reads in titles: the service or component, or `kernel`.
    pub fn name(&self) -> &str {
        match self {
            LogSubject::Service(id) | LogSubject::StaticPod(id) | LogSubject::Container(id) => id,
            LogSubject::Kernel => "kernel",
        }
    }
}

/// What the console's stream runner (`console::run_logs`) starts: one stream per node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRequest {
    /// The view the lines are for; reports of a view since closed are ignored.
    pub view: u64,
    pub cluster: String,
    pub subject: LogSubject,
    /// The nodes followed: each one's name prefixes its lines, its address is asked.
    pub nodes: Vec<NodeIdentity>,
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
    /// What it follows, as the stream runner is asked for it.
    pub follows: LogRequest,
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
    /// `w`: long lines continue on the rows below instead of running off the right edge.
    pub wrap: bool,
    /// `n` / `N`: the occurrence of the filter text the view jumped to.
    pub hit: Option<SearchHit>,
}

/// Columns Left/Right scroll by.
pub const COLUMN_STEP: usize = 20;

/// The width of `hh:mm:ss ` before each line when timestamps are on.
pub const TIMESTAMP_WIDTH: usize = 9;

/// Where the lines are drawn: rows of the body and columns left for a line's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogArea {
    pub rows: usize,
    pub room: usize,
}

/// One occurrence of the filter text: the line (its `seq`) and the byte range in its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchHit {
    pub seq: u64,
    pub start: usize,
    pub end: usize,
}

/// The byte ranges of `needle` in `text`, case-insensitive (each character compared by its
/// lowercase form), left to right and not overlapping; none for an empty needle.
pub fn match_ranges(text: &str, needle: &str) -> Vec<(usize, usize)> {
    let fold = |c: char| c.to_lowercase().next().unwrap_or(c);
    let needle: Vec<char> = needle.chars().map(fold).collect();
    if needle.is_empty() {
        return Vec::new();
    }
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + needle.len() <= chars.len() {
        let found = needle
            .iter()
            .zip(&chars[i..])
            .all(|(n, (_, c))| *n == fold(*c));
        if found {
            let end = chars
                .get(i + needle.len())
                .map_or(text.len(), |(at, _)| *at);
            out.push((chars[i].0, end));
            i += needle.len();
        } else {
            i += 1;
        }
    }
    out
}

impl LogView {
    pub fn new(id: u64, cluster: &str, subject: LogSubject, nodes: Vec<NodeIdentity>) -> LogView {
        LogView {
            follows: LogRequest {
                view: id,
                cluster: cluster.to_string(),
                subject,
                nodes,
                tail: DEFAULT_TAIL,
            },
            lines: VecDeque::new(),
            next_seq: 0,
            dropped: 0,
            filter: String::new(),
            timestamps: false,
            paused_at: None,
            top: None,
            column: 0,
            wrap: false,
            hit: None,
        }
    }

    /// Whether each line starts with its node's name: when several nodes are merged.
    pub fn prefixed(&self) -> bool {
        self.nodes().len() > 1
    }

    /// Columns of the node prefix (`name: `, names padded to the longest), 0 for one node.
    pub fn prefix_width(&self) -> usize {
        if !self.prefixed() {
            return 0;
        }
        let longest = self.nodes().iter().map(|n| n.name.width()).max();
        longest.unwrap_or(0) + 2
    }

    /// Columns left for a line's text in a body `width` columns wide.
    pub fn text_room(&self, width: usize) -> usize {
        let time = if self.timestamps { TIMESTAMP_WIDTH } else { 0 };
        width.saturating_sub(time + self.prefix_width()).max(1)
    }

    /// Rows `entry` takes: one, or as many as its wrapped text needs.
    pub fn height(&self, entry: &LogEntry, room: usize) -> usize {
        if self.wrap {
            entry.text.width().div_ceil(room.max(1)).max(1)
        } else {
            1
        }
    }

    /// The view's id: its streams' reports carry it.
    pub fn id(&self) -> u64 {
        self.follows.view
    }

    /// The nodes it follows, in the order of their colours.
    pub fn nodes(&self) -> &[NodeIdentity] {
        &self.follows.nodes
    }

    /// Folds a node's report in; false when it was for another view or node.
    pub fn apply(&mut self, event: LogEvent) -> bool {
        if event.view != self.id() || event.node >= self.nodes().len() {
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
                self.note(node, format!("stream ended: {why}; again in {retry_in}s"));
            }
            LogReport::Reconnected => self.note(
                node,
                "stream open again; lines written while it was closed are not shown".into(),
            ),
        }
        true
    }

    /// A note of the view's own about `node`'s stream, at the time of the latest line.
    fn note(&mut self, node: usize, text: String) {
        let received = self.lines.back().map_or(0, |l| l.received);
        self.push(node, text, true, received);
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
            || self.nodes()[entry.node]
                .name
                .to_lowercase()
                .contains(needle)
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

    /// The lines `area` shows: as many as fit its rows (wrapped lines take several).
    pub fn window(&self, area: LogArea) -> LogWindow<'_> {
        let matching = self.matching();
        let first = self.first_shown(&matching, area);
        let mut used = 0;
        let lines = matching[first..]
            .iter()
            .take_while(|l| {
                let fits = used == 0 || used + self.height(l, area.room) <= area.rows;
                used += self.height(l, area.room);
                fits
            })
            .copied()
            .collect();
        LogWindow {
            lines,
            first,
            matching: matching.len(),
        }
    }

    /// The first line on screen in `area`, by its `seq`.
    fn top_line(&self, area: LogArea) -> Option<u64> {
        self.window(area).lines.first().map(|l| l.seq)
    }

    /// The index of the first line of the last screenful: the newest lines that fit.
    fn last_page(&self, matching: &[&LogEntry], area: LogArea) -> usize {
        let mut used = 0;
        let mut first = matching.len();
        for (i, l) in matching.iter().enumerate().rev() {
            used += self.height(l, area.room);
            if used > area.rows && first < matching.len() {
                break;
            }
            first = i;
        }
        first.min(matching.len().saturating_sub(1))
    }

    /// The index of the first shown line: the last screenful when following, else the
    /// scrolled-to line (the oldest kept one if it was dropped), never past the last screenful.
    fn first_shown(&self, matching: &[&LogEntry], area: LogArea) -> usize {
        let last_page = self.last_page(matching, area);
        match self.top {
            None => last_page,
            Some(top) => matching
                .iter()
                .position(|l| l.seq >= top)
                .unwrap_or(last_page)
                .min(last_page),
        }
    }

    /// Scrolls by `delta` lines (negative: up) in `area`; scrolling to the end follows again
    /// unless paused.
    pub fn scroll(&mut self, delta: isize, area: LogArea) {
        let matching = self.matching();
        let first = self.first_shown(&matching, area);
        let last_page = self.last_page(&matching, area);
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

    /// `f`: stops following where the screen is, or follows the end again.
    pub fn toggle_follow(&mut self, area: LogArea) {
        if self.following() {
            self.top = self.top_line(area);
        } else {
            self.follow();
        }
    }

    /// Sets the filter; the view follows the end of what it lets through.
    pub fn set_filter(&mut self, text: &str) {
        self.filter = text.to_string();
        self.top = None;
        self.hit = None;
    }

    /// The furthest the text scrolls right in `room` columns: the longest shown line's end
    /// at the right edge, so a scroll never leaves every line blank.
    fn last_column(&self, room: usize) -> usize {
        let longest = self.matching().iter().map(|l| l.text.width()).max();
        longest.unwrap_or(0).saturating_sub(room)
    }

    /// Left/Right: scrolls the text sideways, up to the longest line's end; wrapped lines
    /// do not scroll.
    pub fn shift(&mut self, right: bool, room: usize) {
        if self.wrap {
            self.column = 0;
            return;
        }
        let last = self.last_column(room);
        self.column = if right {
            self.column.saturating_add(COLUMN_STEP).min(last)
        } else {
            self.column.min(last).saturating_sub(COLUMN_STEP)
        };
    }

    /// `w`: wraps long lines, or cuts them at the edge again.
    pub fn toggle_wrap(&mut self) {
        self.wrap = !self.wrap;
        self.column = 0;
    }

    /// Every occurrence of the filter text in the lines it lets through, oldest first.
    fn hits(&self) -> Vec<SearchHit> {
        self.matching()
            .iter()
            .filter(|l| !l.note)
            .flat_map(|l| {
                match_ranges(&l.text, &self.filter)
                    .into_iter()
                    .map(|(start, end)| SearchHit {
                        seq: l.seq,
                        start,
                        end,
                    })
            })
            .collect()
    }

    /// `n` / `N`: the next (or previous) occurrence of the filter text after the current one
    /// (from the screen's top when none), round the end; the view stops following, shows its
    /// line and scrolls sideways until it is in view. False when the text occurs nowhere.
    pub fn jump(&mut self, forward: bool, area: LogArea) -> bool {
        let Some(hit) = self.next_hit(forward, area) else {
            return false;
        };
        let (top, columns) = {
            let matching = self.matching();
            let index = matching.iter().position(|l| l.seq == hit.seq).unwrap_or(0);
            let shown = self.window(area);
            let visible = shown.first <= index && index < shown.first + shown.lines.len();
            let top = if visible {
                shown.first
            } else {
                index.saturating_sub(area.rows / 2)
            };
            let text = &matching[index].text;
            let columns = (text[..hit.start].width(), text[..hit.end].width());
            (matching.get(top).map(|l| l.seq), columns)
        };
        self.hit = Some(hit);
        self.top = top;
        let (start, end) = columns;
        let off_screen = start < self.column || end > self.column.saturating_add(area.room);
        if !self.wrap && off_screen {
            let lead = if end - start < area.room * 3 / 4 {
                area.room / 4
            } else {
                0
            };
            self.column = start.saturating_sub(lead).min(self.last_column(area.room));
        }
        true
    }

    /// The occurrence `n` (forward) or `N` goes to from the current one, or from the
    /// screen's top line when there is none yet.
    fn next_hit(&self, forward: bool, area: LogArea) -> Option<SearchHit> {
        let hits = self.hits();
        let key = |h: &SearchHit| (h.seq, h.start);
        let next = match self.hit {
            Some(current) if forward => hits.iter().find(|h| key(h) > key(&current)),
            Some(current) => hits.iter().rev().find(|h| key(h) < key(&current)),
            None => {
                let top = self.top_line(area).unwrap_or(0);
                if forward {
                    hits.iter().find(|h| h.seq >= top)
                } else {
                    hits.iter().rev().find(|h| h.seq < top)
                }
            }
        };
        let round = if forward { hits.first() } else { hits.last() };
        next.or(round).copied()
    }
}

/// What the console's stream runner is asked to do with the streams of a view (the screen's
/// `ScreenTask`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogTask {
    /// One stream per node; any earlier view's streams stop first.
    Start(LogRequest),
    /// Stop the streams of view `id`.
    Stop(u64),
}

/// `l` on a node: which of its logs to follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServicePicker {
    pub cluster: String,
    pub node: NodeIdentity,
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
#[path = "buffer_tests.rs"]
mod tests;
