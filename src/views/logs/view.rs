//! The log view: the lines of one or several nodes' logs in arrival order, each after its
//! node's name in that node's colour (stern-style) when several are merged, coloured by level,
//! the filter's occurrences highlighted, cut at the edge or wrapped; with what it follows,
//! whether it follows, the filter and the buffer's drops on its border; or the service picker
//! of one node.
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use unicode_width::UnicodeWidthChar;

use super::LogsScreen;
use super::buffer::{LogArea, LogEntry, LogView, LogWindow, MAX_LOG_LINES, match_ranges};
use super::buffer::{ServicePicker, picker_choices};
use crate::app::screens::Shared;
use crate::talos::LogLevel;
use crate::tui::{Glyphs, Look, Role};
use crate::views::table::{pane_block, titled};

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
    pub screen: &'a LogsScreen,
    pub shared: &'a Shared<'a>,
    pub look: &'a Look,
}

impl Widget for &LogsView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        match (&self.screen.picker, &self.screen.view) {
            (Some(picker), _) => self.render_picker(picker, area, buf),
            (None, Some(view)) => self.render_view(view, area, buf),
            (None, None) => {}
        }
    }
}

impl LogsView<'_> {
    fn render_view(&self, view: &LogView, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let block = pane_block(self.look, self.title(view), true);
        let inner = block.inner(area);
        let body = LogArea {
            rows: usize::from(inner.height),
            room: view.text_room(usize::from(inner.width)),
        };
        let window = view.window(body);
        let block = block
            .title(
                Line::from(Span::styled(
                    format!(" {} ", where_shown(view, &window)),
                    s.get(Role::Muted),
                ))
                .alignment(Alignment::Right),
            )
            .title_bottom(self.bottom(view, &window));
        block.render(area, buf);
        let lines: Vec<Line> = window
            .lines
            .iter()
            .flat_map(|entry| self.rows_of(view, entry, body.room))
            .take(body.rows)
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
        let names: Vec<&str> = view.nodes().iter().map(|n| n.name.as_str()).collect();
        let mut title = vec![Span::styled(
            format!(
                " Logs: {} of {} ",
                view.follows.subject.name(),
                self.safe(&names.join(", "))
            ),
            s.get(Role::Title),
        )];
        if view.dropped > 0 {
            title.push(Span::styled(
                format!(
                    "{} oldest dropped (buffer keeps {}) ",
                    view.dropped, MAX_LOG_LINES
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

    /// The rows of one entry: its time and node prefix, then its text from the scrolled-to
    /// column (one row), or all of it in rows of `room` columns when wrapping.
    fn rows_of(&self, view: &LogView, entry: &LogEntry, room: usize) -> Vec<Line<'static>> {
        let s = &self.look.styles;
        let mut lead = Vec::new();
        if view.timestamps {
            let time = format!("{} ", self.shared.zone.time_of_day(entry.received));
            lead.push(Span::styled(time, s.get(Role::Muted)));
        }
        if view.prefixed() {
            let name = self.safe(&view.nodes()[entry.node].name);
            let width = view.prefix_width().saturating_sub(2);
            let color = Style::default().fg(node_color(entry.node));
            lead.push(Span::styled(
                format!("{name:<width$}: "),
                color.add_modifier(Modifier::BOLD),
            ));
        }
        let blank: usize = lead.iter().map(|span| span.width()).sum();
        let cells = self.cells(view, entry);
        let ranges: Vec<(usize, usize)> = if view.wrap {
            let rows = 0..view.height(entry, room);
            rows.map(|row| (row * room, (row + 1) * room)).collect()
        } else {
            vec![(view.column, view.column.saturating_add(room))]
        };
        ranges
            .into_iter()
            .enumerate()
            .map(|(i, (from, to))| {
                let mut spans = if i == 0 {
                    lead.clone()
                } else {
                    vec![Span::raw(" ".repeat(blank))]
                };
                spans.extend(self.spans_between(&cells, from, to));
                Line::from(spans)
            })
            .collect()
    }

    /// Each character of the entry's text with its column and style: its level's colour
    /// (a note of the view's own as a warning), occurrences of the filter reversed, the one
    /// `n` jumped to also bold and underlined (both stand out without colour).
    fn cells(&self, view: &LogView, entry: &LogEntry) -> Vec<Cell> {
        let s = &self.look.styles;
        let base = if entry.note {
            s.get(Role::Warn)
        } else {
            level_style(self.look, &entry.text)
        };
        let matches = if entry.note {
            Vec::new()
        } else {
            match_ranges(&entry.text, &view.filter)
        };
        let current = view
            .hit
            .filter(|h| h.seq == entry.seq)
            .map(|h| (h.start, h.end));
        let mut column = 0;
        entry
            .text
            .char_indices()
            .map(|(at, c)| {
                let inside = |(start, end): &(usize, usize)| *start <= at && at < *end;
                let style = if current.as_ref().is_some_and(inside) {
                    base.add_modifier(Modifier::REVERSED | Modifier::BOLD | Modifier::UNDERLINED)
                } else if matches.iter().any(inside) {
                    base.add_modifier(Modifier::REVERSED)
                } else {
                    base
                };
                let width = c.width().unwrap_or(0);
                let cell = Cell {
                    c,
                    column,
                    width,
                    style,
                };
                column += width;
                cell
            })
            .collect()
    }

    /// The characters whose columns lie in `from..to`, as spans of one style each.
    fn spans_between(&self, cells: &[Cell], from: usize, to: usize) -> Vec<Span<'static>> {
        let mut spans: Vec<(String, Style)> = Vec::new();
        let shown = cells
            .iter()
            .filter(|cell| cell.column >= from && cell.column + cell.width <= to);
        for cell in shown {
            match spans.last_mut() {
                Some((text, style)) if *style == cell.style => text.push(cell.c),
                _ => spans.push((cell.c.to_string(), cell.style)),
            }
        }
        spans
            .into_iter()
            .map(|(text, style)| Span::styled(self.safe(&text), style))
            .collect()
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
        let (choices, missing) = picker_choices(self.shared.fleet, picker);
        let title = format!(" Logs of {}: which one? ", self.safe(&picker.node.name));
        let inner = titled(self.look, title, true, area, buf);
        let selected = picker.selected.min(choices.len().saturating_sub(1));
        let mut lines: Vec<Line> = choices
            .iter()
            .enumerate()
            .map(|(i, (subject, what))| {
                let (marker, role) = match i == selected {
                    true => (self.look.glyphs.selected, Role::Selection),
                    false => (" ", Role::Text),
                };
                let name = format!("{marker} {:<26}", self.safe(subject.name()));
                Line::from(vec![
                    Span::styled(name, s.get(role)),
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

/// One character of a log line as drawn.
struct Cell {
    c: char,
    column: usize,
    width: usize,
    style: Style,
}

/// How a line of `text` is drawn: errors and warnings in the theme's error and warning
/// colours and bold (so they stand out under NO_COLOR too), debug muted, the rest as text.
fn level_style(look: &Look, text: &str) -> Style {
    let s = &look.styles;
    match LogLevel::of(text) {
        Some(LogLevel::Error) => s.get(Role::Error).add_modifier(Modifier::BOLD),
        Some(LogLevel::Warn) => s.get(Role::Warn).add_modifier(Modifier::BOLD),
        Some(LogLevel::Debug) => s.get(Role::Muted),
        Some(LogLevel::Info) | None => s.get(Role::Text),
    }
}
