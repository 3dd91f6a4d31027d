//! The log view: the lines of one or several nodes' logs in arrival order, each after its
//! node's name in that node's colour (stern-style), with what it follows, whether it follows,
//! the filter and the buffer's drops on its border; or the service picker of one node.
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};
use unicode_width::UnicodeWidthChar;

use super::Look;
use super::table::pane_block;
use crate::app::logs::{LogEntry, LogView, LogWindow};
use crate::app::logs::{ServicePicker, picker_choices};
use crate::app::state::AppState;
use crate::tui::{Glyphs, Role};

/// The nodes' colours, in the order of the view's nodes: 16-colour ones that read on dark and
/// light backgrounds, red left to errors. NO_COLOR strips them with every other colour.
pub const NODE_COLORS: [Color; 10] = [
    Color::Cyan,
    Color::Magenta,
    Color::Yellow,
    Color::Green,
    Color::Blue,
    Color::LightCyan,
    Color::LightMagenta,
    Color::LightYellow,
    Color::LightGreen,
    Color::LightBlue,
];

/// The colour of the view's `index`th node.
pub fn node_color(index: usize) -> Color {
    NODE_COLORS[index % NODE_COLORS.len()]
}

pub struct LogsView<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> LogsView<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> LogsView<'a> {
        LogsView { state, look }
    }
}

impl Widget for &LogsView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        match (&self.state.logs.picker, &self.state.logs.view) {
            (Some(picker), _) => self.render_picker(picker, area, buf),
            (None, Some(view)) => self.render_view(view, area, buf),
            (None, None) => {}
        }
    }
}

impl LogsView<'_> {
    fn render_view(&self, view: &LogView, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let rows = usize::from(area.height.saturating_sub(2));
        let window = view.window(rows);
        let block = pane_block(self.look, self.title(view), true)
            .title(
                Line::from(Span::styled(
                    format!(" {} ", where_shown(view, &window)),
                    s.get(Role::Muted),
                ))
                .alignment(Alignment::Right),
            )
            .title_bottom(self.bottom(view, &window));
        let inner = block.inner(area);
        block.render(area, buf);
        let prefix_width = view
            .nodes
            .iter()
            .map(|n| n.name.chars().count())
            .max()
            .unwrap_or(0);
        let lines: Vec<Line> = window
            .lines
            .iter()
            .map(|entry| self.line(view, entry, prefix_width, usize::from(inner.width)))
            .collect();
        if lines.is_empty() {
            let waiting = if view.filter.is_empty() {
                "waiting for the first lines"
            } else {
                "no line contains the filter"
            };
            Paragraph::new(Span::styled(waiting, s.get(Role::Muted))).render(inner, buf);
            return;
        }
        Paragraph::new(lines).render(inner, buf);
    }

    fn title(&self, view: &LogView) -> Vec<Span<'static>> {
        let s = &self.look.styles;
        let names: Vec<&str> = view.nodes.iter().map(|n| n.name.as_str()).collect();
        let mut title = vec![Span::styled(
            format!(
                " Logs: {} of {} ",
                view.subject.name(),
                self.safe(&names.join(", "))
            ),
            s.get(Role::Title),
        )];
        if view.dropped > 0 {
            title.push(Span::styled(
                format!(
                    "{} oldest dropped (buffer keeps {}) ",
                    view.dropped,
                    crate::app::logs::MAX_LOG_LINES
                ),
                s.get(Role::Warn),
            ));
        }
        title
    }

    /// The bottom border: the filter and what it lets through.
    fn bottom(&self, view: &LogView, window: &LogWindow) -> Line<'static> {
        let s = &self.look.styles;
        if view.filter.is_empty() {
            return Line::default();
        }
        Line::from(vec![
            Span::styled(
                format!(" filter /{} ", self.safe(&view.filter)),
                s.get(Role::Accent),
            ),
            Span::styled(
                format!("{} matching (Esc clears) ", window.matching),
                s.get(Role::Muted),
            ),
        ])
    }

    fn line(
        &self,
        view: &LogView,
        entry: &LogEntry,
        prefix_width: usize,
        width: usize,
    ) -> Line<'static> {
        let s = &self.look.styles;
        let mut spans = Vec::new();
        let mut used = 0;
        if view.timestamps {
            let time = format!("{} ", self.state.zone.time_of_day(entry.received));
            used += time.len();
            spans.push(Span::styled(time, s.get(Role::Muted)));
        }
        let name = &view.nodes[entry.node].name;
        let prefix = format!("{:<prefix_width$}: ", self.safe(name));
        used += prefix.chars().count();
        let color = Style::default().fg(node_color(entry.node));
        spans.push(Span::styled(prefix, color.add_modifier(Modifier::BOLD)));
        let room = width.saturating_sub(used);
        let text = self.safe(&cut(&entry.text, view.column, room));
        let style = if entry.note {
            s.get(Role::Warn)
        } else {
            s.get(Role::Text)
        };
        spans.push(Span::styled(text, style));
        Line::from(spans)
    }

    /// Text from elsewhere as it may be shown: printable, and ASCII on an ASCII terminal.
    fn safe(&self, text: &str) -> String {
        let text = crate::printable::line(text);
        if self.look.glyphs == Glyphs::ASCII && !text.is_ascii() {
            return text
                .chars()
                .map(|c| if c.is_ascii() { c } else { '?' })
                .collect();
        }
        text
    }

    fn render_picker(&self, picker: &ServicePicker, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let (choices, missing) = picker_choices(&self.state.fleet, picker);
        let title = vec![Span::styled(
            format!(" Logs of {}: which one? ", self.safe(&picker.node.name)),
            s.get(Role::Title),
        )];
        let block: Block = pane_block(self.look, title, true);
        let inner = block.inner(area);
        block.render(area, buf);
        let selected = picker.selected.min(choices.len().saturating_sub(1));
        let mut lines: Vec<Line> = choices
            .iter()
            .enumerate()
            .map(|(i, (subject, what))| {
                let marker = if i == selected {
                    self.look.glyphs.selected
                } else {
                    " "
                };
                let style = if i == selected {
                    s.get(Role::Selection)
                } else {
                    s.get(Role::Text)
                };
                Line::from(vec![
                    Span::styled(format!("{marker} {:<26}", self.safe(subject.name())), style),
                    Span::styled(self.safe(what), s.get(Role::Muted)),
                ])
            })
            .collect();
        if let Some(missing) = missing {
            lines.insert(
                0,
                Line::from(Span::styled(self.safe(&missing), s.get(Role::Warn))),
            );
        }
        let room = usize::from(inner.height);
        let first = (selected + 1).saturating_sub(room);
        Paragraph::new(lines.into_iter().skip(first).collect::<Vec<_>>()).render(inner, buf);
    }
}

/// Whether the view follows, is paused or scrolled, and where.
fn where_shown(view: &LogView, window: &LogWindow) -> String {
    let last = window.first + window.lines.len();
    let range = format!(
        "lines {}-{} of {}",
        (window.first + 1).min(last),
        last,
        window.matching
    );
    match (view.paused_at, view.top) {
        (Some(_), _) => format!("paused, {} new; {range}", view.new_since_pause()),
        (None, Some(_)) => format!("scrolled; {range}"),
        (None, None) => format!("following; {range}"),
    }
}

/// `text` from display column `skip`, at most `width` columns of it.
fn cut(text: &str, skip: usize, width: usize) -> String {
    let mut out = String::new();
    let mut column = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if column >= skip {
            if column + w > skip + width {
                break;
            }
            out.push(c);
        }
        column += w;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_skips_and_bounds_by_columns() {
        assert_eq!(cut("abcdef", 2, 3), "cde");
        assert_eq!(cut("abc", 5, 3), "");
        assert_eq!(cut("日本語", 0, 3), "日");
    }
}
