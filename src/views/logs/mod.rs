//! The log screen (`l` on the nodes and etcd panes and in node detail, `d` there, `:logs`,
//! `:dmesg`): one or several nodes' logs as they stream, or the picker of one node's logs.
//! What it follows and its buffer in `buffer`, the keys here (the view's: filter, pause,
//! scrolling, time, wrap, search; the picker's: Enter with the shared move keys; Esc and q go
//! back on both), the pure update step in `update`, the drawing in `view`; the console runs
//! the streams while the screen is on top (`console::run_logs`).

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use crate::app::action::Effect;
use crate::app::binding::{Binding, Key, KeyLine, MOVE_KEYS, Move, bind, intent, key_lines};
use crate::app::message::Message;
use crate::app::screens::{
    FleetChange, Opening, ScreenModule, ScreenName, ScreenNews, Shared, Step,
};
use crate::tui::Look;

pub mod buffer;
mod update;
mod view;

pub use buffer::{
    DEFAULT_TAIL, LogEvent, LogReport, LogRequest, LogSubject, LogTask, LogView, ServicePicker,
};

/// The screen module's name: its news and tasks are addressed to it.
pub const NAME: ScreenName = "logs";

/// The log view or the picker leading to it, and the view whose streams run.
#[derive(Debug, Clone, Default)]
pub struct LogsScreen {
    next_id: u64,
    pub picker: Option<ServicePicker>,
    pub view: Option<LogView>,
    /// The view whose streams the console runs: the one on screen, else none.
    streaming: Option<u64>,
}

/// The log screen's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LogsKey {
    Filter,
    Pause,
    Timestamps,
    Scroll(Move),
    /// Right (true) / Left: the text sideways.
    Shift(bool),
    /// `n` (true) / `N`: the next or previous occurrence of the filter text.
    Jump(bool),
    Wrap,
    /// `f`: follow the newest lines, or hold the screen where it is.
    Follow,
    /// Enter on the picker: follow the selected log.
    Pick,
    Back,
}

#[rustfmt::skip]
static VIEW: &[Binding<LogsKey, LogsScreen>] = &[
    bind(&[Key::char('/')], LogsKey::Filter, "show only lines containing a text (node names too); Esc clears").footer("filter"),
    bind(&[Key::char(' ')], LogsKey::Pause, "pause: hold the screen, keep receiving; again to follow").footer("pause"),
    bind(&[Key::char('t')], LogsKey::Timestamps, "show the time each line arrived").footer("time"),
    bind(&[Key::char('j'), Key::DOWN], LogsKey::Scroll(Move::Down), "scroll down"),
    bind(&[Key::char('k'), Key::UP], LogsKey::Scroll(Move::Up), "scroll up (stops following)"),
    bind(&[Key::PAGE_DOWN, Key::ctrl('f')], LogsKey::Scroll(Move::PageDown), "page down"),
    bind(&[Key::PAGE_UP, Key::ctrl('b')], LogsKey::Scroll(Move::PageUp), "page up"),
    bind(&[Key::char('g'), Key::HOME], LogsKey::Scroll(Move::First), "the oldest line kept"),
    bind(&[Key::char('G'), Key::END], LogsKey::Scroll(Move::Last), "the newest lines, following again").footer("follow").offered(not_following),
    bind(&[Key::LEFT], LogsKey::Shift(false), "scroll the text left"),
    bind(&[Key::RIGHT], LogsKey::Shift(true), "scroll the text right, up to the longest line's end"),
    bind(&[Key::char('n')], LogsKey::Jump(true), "the next occurrence of the filter text, scrolled into view").footer("next").offered(filtered),
    bind(&[Key::char('N')], LogsKey::Jump(false), "the previous occurrence of the filter text"),
    bind(&[Key::char('w')], LogsKey::Wrap, "wrap long lines, or cut them at the edge").footer("wrap"),
    bind(&[Key::char('f')], LogsKey::Follow, "follow the newest lines, or hold the screen where it is"),
];

/// The picker's own key; it moves with the shared move keys.
#[rustfmt::skip]
static PICKER: &[Binding<LogsKey, LogsScreen>] = &[bind(&[Key::ENTER], LogsKey::Pick, "follow the selected log").footer("follow")];

/// Esc and q go back (Ctrl-c still quits, the shell's).
#[rustfmt::skip]
static BACK: &[Binding<LogsKey, LogsScreen>] = &[bind(&[Key::ESC, Key::char('q')], LogsKey::Back, "clear the filter, else back where the logs were opened").footer("back")];

fn filtered(screen: &LogsScreen) -> bool {
    screen.view.as_ref().is_some_and(|v| !v.filter.is_empty())
}

fn not_following(screen: &LogsScreen) -> bool {
    screen.view.as_ref().is_some_and(|v| !v.following())
}

impl LogsScreen {
    /// The keys of what shows: the picker's (it moves with the shared move keys), else the
    /// view's.
    fn own_keys(&self) -> &'static [Binding<LogsKey, LogsScreen>] {
        if self.picker.is_some() { PICKER } else { VIEW }
    }

    /// The intent of `event`: the picker's keys and moves while it is open, else the view's;
    /// Esc and q on both.
    fn intent(&self, event: &KeyEvent) -> Option<LogsKey> {
        let moves = intent(MOVE_KEYS, event).filter(|_| self.picker.is_some());
        let own = || intent(self.own_keys().iter().chain(BACK), event).copied();
        moves.map(|m| LogsKey::Scroll(*m)).or_else(own)
    }
}

impl ScreenModule for LogsScreen {
    fn name(&self) -> ScreenName {
        NAME
    }

    fn title(&self) -> &'static str {
        "Logs (l on nodes/etcd, d in node detail, :logs, :dmesg)"
    }

    fn keys(&self) -> Vec<KeyLine> {
        let mut lines = key_lines(self.own_keys(), self);
        if self.picker.is_some() {
            lines.extend(key_lines(MOVE_KEYS, &()));
        }
        lines.extend(key_lines(BACK, self));
        lines
    }

    fn open_from(&mut self, opening: &Opening, shared: &Shared) -> Result<Step, Message> {
        self.open_for(opening, shared)
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        match self.intent(event) {
            Some(key) => self.on_intent(key, shared),
            None => Step::default(),
        }
    }

    fn on_news(&mut self, news: &ScreenNews, _shared: &Shared) -> bool {
        news.get::<LogEvent>().is_some_and(|e| self.on_event(e))
    }

    fn on_fleet_change(&mut self, change: &FleetChange, _shared: &Shared) -> bool {
        // The picker lists the node's services as the pollers read them.
        self.picker
            .as_ref()
            .is_some_and(|p| p.cluster == change.cluster)
    }

    fn set_filter(&mut self, text: &str) {
        if let Some(view) = self.view.as_mut() {
            view.set_filter(text);
        }
    }

    fn watched_node(&self) -> Option<&str> {
        self.picker.as_ref().map(|p| p.node.address.as_str())
    }

    fn settle(&mut self, on_top: bool) -> Vec<Effect> {
        self.settle_streams(on_top)
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        (&view::LogsView {
            screen: self,
            shared,
            look,
        })
            .render(area, buf);
    }
}
