//! The log screen (`l` on the nodes and etcd panes and in node detail, `d` there, `:logs`,
//! `:dmesg`): one or several nodes' logs as they stream, or the picker of one node's logs.
//! What it follows and its buffer in `buffer`, the keys in `keys`, the pure update step in
//! `update`, the drawing in `view`; the console runs the streams while the screen is on top
//! (`console::run_logs`).

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use crate::app::action::Effect;
use crate::app::binding::{KeyLine, MOVE_KEYS, intent, key_lines};
use crate::app::message::Message;
use crate::app::screens::{
    FleetChange, Opening, ScreenModule, ScreenName, ScreenNews, Shared, Step,
};
use crate::tui::Look;

pub mod buffer;
mod keys;
mod update;
mod view;

pub use buffer::{
    DEFAULT_TAIL, LogEvent, LogNode, LogReport, LogRequest, LogSubject, LogTask, LogView,
    ServicePicker,
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

impl LogsScreen {
    /// The intent of `event`: the picker's keys and moves while it is open, else the view's;
    /// Esc and q on both.
    fn intent(&self, event: &KeyEvent) -> Option<keys::LogsKey> {
        let own = if self.picker.is_some() {
            intent(MOVE_KEYS, event)
                .map(|m| keys::LogsKey::Scroll(*m))
                .or_else(|| intent(keys::PICKER, event).copied())
        } else {
            intent(keys::VIEW, event).copied()
        };
        own.or_else(|| intent(keys::BACK, event).copied())
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
        let mut lines = if self.picker.is_some() {
            let mut lines = key_lines(keys::PICKER, self);
            lines.extend(key_lines(MOVE_KEYS, &()));
            lines
        } else {
            key_lines(keys::VIEW, self)
        };
        lines.extend(key_lines(keys::BACK, self));
        lines
    }

    fn binds(&self, event: &KeyEvent) -> bool {
        self.intent(event).is_some()
    }

    fn open(&mut self, _shared: &Shared) -> Result<Step, Message> {
        Err(Message::info(update::WHERE_LOGS_OPEN))
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

    fn of_cluster_in_use(&self) -> bool {
        true
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        (&view::LogsView::new(self, shared, look)).render(area, buf);
    }
}
