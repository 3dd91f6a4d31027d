//! Drawing one of the app's tables: a bordered block whose title counts the
//! rows and names the filter and sort, a header with the sort column marked,
//! and only the rows that fit, so a 5,000-row table costs what a screenful
//! does. State shows as the cell's word; the tone only adds colour.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Block, Borders, Cell, HighlightSpacing, Padding, Paragraph, Row, StatefulWidget, Table,
    TableState, Widget, Wrap,
};

use super::{Look, fit};
use crate::app::state::TableView;
use crate::app::tables::{TableData, Tone, Width};
use crate::tui::Role;

/// From this width a table shows all its columns.
pub const WIDE_TABLE: u16 = 90;

pub fn tone_style(look: &Look, tone: Tone) -> Style {
    let s = &look.styles;
    match tone {
        Tone::Plain => s.get(Role::Text),
        Tone::Ok => s.get(Role::Ok),
        Tone::Warn => s.get(Role::Warn),
        Tone::Error => s.get(Role::Error),
        Tone::Muted | Tone::Unknown => s.get(Role::Muted),
    }
}

/// A bordered block titled `title`, accented when it has the keys.
pub fn pane_block<'a>(look: &Look, title: Vec<Span<'a>>, active: bool) -> Block<'a> {
    let s = &look.styles;
    Block::new()
        .borders(Borders::ALL)
        .border_set(look.glyphs.border)
        .border_style(if active {
            s.get(Role::Accent)
        } else {
            s.get(Role::Border)
        })
        .padding(Padding::horizontal(1))
        .title(Line::from(title))
}

/// One table on screen.
pub struct DataTable<'a> {
    pub data: &'a TableData,
    pub view: &'a TableView,
    pub look: &'a Look,
    pub title: &'a str,
    /// Whether this table has the keys (shows the selection).
    pub active: bool,
    /// What an empty table says before any data arrived.
    pub empty: &'a str,
}

impl DataTable<'_> {
    /// The title spans: name, row count, filter and sort.
    pub fn title_spans(&self) -> Vec<Span<'static>> {
        let s = &self.look.styles;
        let g = &self.look.glyphs;
        let count = if self.view.filter.is_empty() {
            format!(" {} ({}) ", self.title, self.data.rows.len())
        } else {
            format!(
                " {} ({} of {}) ",
                self.title,
                self.data.rows.len(),
                self.data.total
            )
        };
        let mut spans = vec![Span::styled(count, s.get(Role::Title))];
        if !self.view.filter.is_empty() {
            spans.push(Span::styled(
                format!("filter: {} ", self.view.filter),
                s.get(Role::Accent),
            ));
        }
        if let Some(column) = self.data.columns.get(self.view.sort) {
            let arrow = if self.view.reverse {
                g.sort_down
            } else {
                g.sort_up
            };
            spans.push(Span::styled(
                format!("sort: {}{arrow} ", column.title),
                s.get(Role::Muted),
            ));
        }
        spans
    }

    /// Draws the block and the table inside it.
    pub fn render_block(&self, area: Rect, buf: &mut Buffer) {
        let block = pane_block(self.look, self.title_spans(), self.active);
        let inner = block.inner(area);
        block.render(area, buf);
        self.render_rows(inner, buf);
    }

    /// Draws header and rows into `area` (no block).
    pub fn render_rows(&self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let g = &self.look.glyphs;
        if self.data.rows.is_empty() {
            let text = if self.data.total == 0 {
                self.empty.to_string()
            } else {
                format!(
                    "No row matches filter {:?}. Esc clears it.",
                    self.view.filter
                )
            };
            Paragraph::new(text)
                .style(s.get(Role::Muted))
                .wrap(Wrap { trim: true })
                .render(area, buf);
            return;
        }
        // Narrow tables keep the columns marked for it; the rest is said
        // elsewhere on screen.
        let wide = area.width >= WIDE_TABLE;
        let shown: Vec<usize> = (0..self.data.columns.len())
            .filter(|i| wide || self.data.columns[*i].narrow)
            .collect();
        let widths: Vec<Constraint> = shown
            .iter()
            .map(|i| self.data.columns[*i])
            .map(|c| if wide { c.wide_width } else { c.width })
            .map(|w| match w {
                Width::Fixed(n) => Constraint::Length(n),
                Width::Fill(n) => Constraint::Fill(n),
            })
            .collect();
        let marker = format!("{} ", g.selected);
        let marker_width = unicode_width::UnicodeWidthStr::width(marker.as_str()) as u16;
        let cols = Layout::horizontal(widths.clone()).spacing(1).split(Rect {
            width: area.width.saturating_sub(marker_width),
            ..area
        });
        let width_of = |i: usize| cols.get(i).map(|r| r.width as usize).unwrap_or(0);
        let header = Row::new(shown.iter().enumerate().map(|(at, i)| {
            let c = &self.data.columns[*i];
            let title = if *i == self.view.sort {
                let arrow = if self.view.reverse {
                    g.sort_down
                } else {
                    g.sort_up
                };
                format!("{}{arrow}", c.title)
            } else {
                c.title.to_string()
            };
            Cell::new(fit(&title, width_of(at), g.ellipsis))
        }))
        .style(s.get(Role::Header));
        let room = usize::from(area.height.saturating_sub(1)).max(1);
        let selected = self.data.selected_index(self.view);
        let offset = (selected + 1).saturating_sub(room);
        let rows = self.data.rows.iter().skip(offset).take(room).map(|r| {
            Row::new(shown.iter().enumerate().filter_map(|(at, i)| {
                let c = r.cells.get(*i)?;
                let text = if c.tone == Tone::Unknown {
                    g.none.to_string()
                } else {
                    fit(&c.text, width_of(at), g.ellipsis)
                };
                Some(Cell::new(Span::styled(text, tone_style(self.look, c.tone))))
            }))
            .style(s.get(Role::Text))
        });
        let mut table = Table::new(rows, widths)
            .header(header)
            .column_spacing(1)
            .highlight_symbol(marker)
            .highlight_spacing(HighlightSpacing::Always);
        let mut state = TableState::default();
        if self.active {
            table = table.row_highlight_style(s.get(Role::Selection));
            state = state.with_selected(Some(selected - offset));
        }
        StatefulWidget::render(table, area, buf, &mut state);
    }
}
