//! Drawing one of the app's tables: a bordered block whose title counts the
//! rows and names the filter and sort, a header with the sort column marked,
//! and only the rows that fit, so a 5,000-row table costs what a screenful
//! does. State shows as the cell's word; the tone only adds colour.
use std::borrow::Cow;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Flex, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Block, Borders, Cell, HighlightSpacing, Padding, Paragraph, Row, StatefulWidget, Table,
    TableState, Widget, Wrap,
};

use super::cut::fit_kind_apart;
use super::progress_parts::StepTable;
use super::{Look, fit};
use crate::app::screen::{TableKind, TableView};
use crate::app::state::AppState;
use crate::app::tables::{TableData, Tone, Width, text_width};
use crate::tui::Role;

/// One column to lay out: how it takes its width, its content's width (the
/// widest cell) and its title's (with the sort arrow).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnNeed {
    pub width: Width,
    pub content: u16,
    pub title: u16,
}

/// The widths of columns laid out in `available` cells with one-cell gaps.
/// `Content` columns (versions, ids, guard names) get their whole content
/// first; `Fill` columns get at least their title, then what is left, each
/// up to its content, by weight; what is still left goes to the last `Fill`
/// column so the table spans the pane. Only when even the titles do not fit
/// are the widest columns cut.
pub fn column_widths(needs: &[ColumnNeed], available: u16) -> Vec<u16> {
    let gaps = needs.len().saturating_sub(1) as u16;
    let budget = available.saturating_sub(gaps);
    let whole = |n: &ColumnNeed| n.content.max(n.title);
    let mut widths: Vec<u16> = needs
        .iter()
        .map(|n| match n.width {
            Width::Content => whole(n),
            Width::Fill(_) => n.title.min(whole(n)),
        })
        .collect();
    if widths.iter().sum::<u16>() > budget {
        cut_widest(&mut widths, budget);
        return widths;
    }
    let mut left = budget - widths.iter().sum::<u16>();
    // One cell at a time to the fill column furthest below its share.
    while left > 0 {
        let hungriest = needs
            .iter()
            .enumerate()
            .filter_map(|(i, n)| match n.width {
                Width::Fill(weight) if widths[i] < whole(n) => {
                    Some((i, f64::from(widths[i]) / f64::from(weight.max(1))))
                }
                _ => None,
            })
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some((i, _)) = hungriest else { break };
        widths[i] += 1;
        left -= 1;
    }
    if let Some(last) = needs
        .iter()
        .rposition(|n| matches!(n.width, Width::Fill(_)))
    {
        widths[last] += left;
    }
    widths
}

/// Takes a cell from the widest column until `widths` fit in `budget`.
fn cut_widest(widths: &mut [u16], budget: u16) {
    while widths.iter().sum::<u16>() > budget {
        let Some(widest) = (0..widths.len()).max_by_key(|i| (widths[*i], usize::MAX - i)) else {
            return;
        };
        if widths[widest] == 0 {
            return;
        }
        widths[widest] -= 1;
    }
}

pub fn tone_style(look: &Look, tone: Tone) -> Style {
    let s = &look.styles;
    match tone {
        Tone::Plain => s.get(Role::Text),
        Tone::Accent => s.get(Role::Accent),
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

/// Draws a [`pane_block`] titled `title` into `area` and gives the area inside it.
pub fn framed(
    look: &Look,
    title: Vec<Span<'_>>,
    active: bool,
    area: Rect,
    buf: &mut Buffer,
) -> Rect {
    let block = pane_block(look, title, active);
    let inner = block.inner(area);
    block.render(area, buf);
    inner
}

/// [`framed`] with one title, in the title style.
pub fn titled(look: &Look, title: String, active: bool, area: Rect, buf: &mut Buffer) -> Rect {
    let title = vec![Span::styled(title, look.styles.get(Role::Title))];
    framed(look, title, active, area, buf)
}

/// A pane's text: the last read's error, then `reading` (what is read, muted) while there is
/// nothing to show yet (both wrapped), then `lines(height)`, the lines for the height left, as
/// they are.
pub fn document(
    look: &Look,
    error: Option<&str>,
    reading: Option<String>,
    lines: impl FnOnce(usize) -> Vec<Line<'static>>,
    area: Rect,
    buf: &mut Buffer,
) {
    let s = &look.styles;
    let mut shown = Vec::new();
    if let Some(why) = error {
        let why = crate::printable::line(why);
        shown.push(Line::from(Span::styled(why, s.get(Role::Error))));
    }
    let wrap = reading.is_some();
    if let Some(text) = reading.filter(|_| error.is_none()) {
        shown.push(Line::from(Span::styled(text, s.get(Role::Muted))));
    }
    shown.extend(lines(usize::from(area.height).saturating_sub(shown.len())));
    let paragraph = Paragraph::new(shown);
    match wrap {
        true => paragraph.wrap(Wrap { trim: true }).render(area, buf),
        false => paragraph.render(area, buf),
    }
}

/// Draws `table` into `area` in its own order (no sort arrow), its selected row kept in view,
/// each row `i` followed by its lines `details[i]`: a plan's guards, a screen's list.
pub(super) fn render_listed(
    look: &Look,
    table: StepTable<'_>,
    details: &[Vec<Line<'static>>],
    area: Rect,
    buf: &mut Buffer,
) {
    let data = TableData::new(table.columns, table.rows, table.total);
    // No sort arrow: a plan's order is the rollout order.
    let view = TableView {
        selected: table.selected,
        sort: usize::MAX,
        ..TableView::default()
    };
    let (title, active, empty) = ("", table.active, table.empty);
    let table = DataTable {
        data: Cow::Owned(data),
        view: &view,
        look,
        title,
        active,
        empty,
    };
    table.render_rows_with_details(details, area, buf);
}

/// How a table lays out at one width.
struct TableLayout {
    shown: Vec<usize>,
    titles: Vec<String>,
    widths: Vec<u16>,
}

/// One table on screen.
pub struct DataTable<'a> {
    pub data: Cow<'a, TableData>,
    pub view: &'a TableView,
    pub look: &'a Look,
    pub title: &'a str,
    /// Whether this table has the keys (shows the selection).
    pub active: bool,
    /// What an empty table says before any data arrived.
    pub empty: &'a str,
}

impl<'a> DataTable<'a> {
    /// One of the console's own tables (the fleet and the cluster's panes) as `state` looks
    /// at it, its rows as prepared; its title and what it says while empty are its spec's
    /// (`TableKind::spec`).
    pub fn pane(state: &'a AppState, kind: TableKind, look: &'a Look, active: bool) -> Self {
        let spec = kind.spec();
        DataTable {
            data: crate::app::prepared::table(state, kind),
            view: state.tables.get(kind),
            look,
            title: spec.title,
            active,
            empty: spec.empty,
        }
    }

    /// Draws the table's block (accented when `accent`) and gives the area inside it, for
    /// a pane that draws more than the rows.
    pub fn frame(&self, area: Rect, buf: &mut Buffer, accent: bool) -> Rect {
        framed(self.look, self.title_spans(), accent, area, buf)
    }

    /// The sort column's arrow: down when reversed.
    fn arrow(&self) -> &'static str {
        let g = &self.look.glyphs;
        if self.view.reverse {
            g.sort_down
        } else {
            g.sort_up
        }
    }

    /// The title spans: name, row count, filter and sort.
    pub fn title_spans(&self) -> Vec<Span<'static>> {
        let s = &self.look.styles;
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
        if let Some(column) = self.data.sorted_by(self.view) {
            let arrow = self.arrow();
            spans.push(Span::styled(
                format!("sort: {}{arrow} ", column.title),
                s.get(Role::Muted),
            ));
        }
        spans
    }

    /// Draws the block and the table inside it; when the selected row's name is cut, its
    /// full name is on the block's bottom border.
    pub fn render_block(&self, area: Rect, buf: &mut Buffer) {
        let mut block = pane_block(self.look, self.title_spans(), self.active);
        let inner = block.inner(area);
        if let Some(name) = self
            .active
            .then(|| self.cut_selected_name(inner.width))
            .flatten()
        {
            block = block.title_bottom(Line::from(Span::styled(
                format!(" {name} "),
                self.look.styles.get(Role::Accent),
            )));
        }
        block.render(area, buf);
        self.render_rows(inner, buf);
    }

    /// The selected row's name in full, when a table `width` wide cuts it.
    pub fn cut_selected_name(&self, width: u16) -> Option<String> {
        let layout = self.layout(width);
        let selected = self.data.rows.get(self.data.selected_index(self.view))?;
        layout.shown.iter().enumerate().find_map(|(at, i)| {
            let c = self.data.columns[*i];
            let text = &selected.cells.get(*i)?.text;
            let cut = text_width(text) > layout.widths.get(at).copied().unwrap_or(0);
            (c.names && cut).then(|| text.clone())
        })
    }

    /// The shown columns, their titles (the sort column's with its arrow) and widths in a
    /// table `width` wide.
    fn layout(&self, width: u16) -> TableLayout {
        let g = &self.look.glyphs;
        // Narrow tables keep the columns marked for it; the rest is said
        // elsewhere on screen.
        let shown = self.data.shown_columns(width);
        let arrow = self.arrow();
        let titles: Vec<String> = shown
            .iter()
            .map(|i| {
                let c = &self.data.columns[*i];
                if *i == self.view.sort && self.data.sorted_by(self.view).is_some() {
                    format!("{}{arrow}", c.title)
                } else {
                    c.title.to_string()
                }
            })
            .collect();
        let marker_width = text_width(&format!("{} ", g.selected));
        let widths = column_widths(
            &self.needs(&shown, &titles),
            width.saturating_sub(marker_width),
        );
        TableLayout {
            shown,
            titles,
            widths,
        }
    }

    /// For each shown name column, what each row's name shares with its most similar
    /// neighbour (`views::fit_apart` keeps the rest); empty for other columns.
    fn shared_prefixes(&self, shown: &[usize]) -> Vec<Vec<usize>> {
        shown
            .iter()
            .map(|i| {
                if !self.data.columns[*i].names {
                    return Vec::new();
                }
                let names: Vec<&str> = (self.data.rows.iter())
                    .map(|r| r.cells.get(*i).map_or("", |c| c.text.as_str()))
                    .collect();
                super::shared_prefixes(&names)
            })
            .collect()
    }

    /// What each shown column needs: its widest cell over every row that
    /// passes the filter (not only those on screen, so widths hold still
    /// while scrolling) and its title.
    fn needs(&self, shown: &[usize], titles: &[String]) -> Vec<ColumnNeed> {
        let none = text_width(self.look.glyphs.none);
        shown
            .iter()
            .zip(titles)
            .map(|(i, title)| {
                let measured = self.data.widths.get(*i).copied().unwrap_or_default();
                let unknown = if measured.any_unknown { none } else { 0 };
                ColumnNeed {
                    width: self.data.columns[*i].width,
                    content: measured.known.max(unknown),
                    title: text_width(title),
                }
            })
            .collect()
    }

    /// Draws header and rows into `area` (no block).
    pub fn render_rows(&self, area: Rect, buf: &mut Buffer) {
        self.render_rows_with_details(&[], area, buf);
    }

    /// Draws header and rows into `area` (no block), each row `i` followed by its lines
    /// `details[i]` across the width from the first column on (a CAPI object's conditions).
    pub fn render_rows_with_details(
        &self,
        details: &[Vec<Line<'static>>],
        area: Rect,
        buf: &mut Buffer,
    ) {
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
        let TableLayout {
            shown,
            titles,
            widths,
        } = self.layout(area.width);
        let marker = format!("{} ", g.selected);
        let indent = text_width(&marker);
        let shared = self.shared_prefixes(&shown);
        let width_of = |at: usize| usize::from(widths.get(at).copied().unwrap_or(0));
        let header = Row::new(
            titles
                .iter()
                .enumerate()
                .map(|(at, title)| Cell::new(fit(title, width_of(at), g.ellipsis))),
        )
        .style(s.get(Role::Header));
        let constraints: Vec<Constraint> = widths.iter().copied().map(Constraint::Length).collect();
        let room = usize::from(area.height.saturating_sub(1)).max(1);
        let selected = self.data.selected_index(self.view);
        let below = |row: usize| details.get(row).map_or(0, Vec::len);
        // The first row shown: the selected one and its details fit under it.
        let mut offset = selected;
        let mut used = 1 + below(selected);
        while offset > 0 && used + 1 + below(offset - 1) <= room {
            offset -= 1;
            used += 1 + below(offset);
        }
        let rows = self
            .data
            .rows
            .iter()
            .enumerate()
            .skip(offset)
            .take(room)
            .map(|(row, r)| {
                let shared = &shared;
                Row::new(shown.iter().enumerate().filter_map(move |(at, i)| {
                    let c = r.cells.get(*i)?;
                    let text = match shared[at].get(row) {
                        _ if c.tone == Tone::Unknown => g.none.to_string(),
                        Some(common) => fit_kind_apart(&c.text, width_of(at), g.ellipsis, *common),
                        None => fit(&c.text, width_of(at), g.ellipsis),
                    };
                    Some(Cell::new(Span::styled(text, tone_style(self.look, c.tone))))
                }))
                .style(s.get(Role::Text))
                .bottom_margin(below(row) as u16)
            });
        let mut table = Table::new(rows, constraints)
            .header(header)
            .column_spacing(1)
            .highlight_symbol(marker)
            .highlight_spacing(HighlightSpacing::Always)
            .flex(Flex::Start);
        let mut state = TableState::default();
        if self.active {
            table = table.row_highlight_style(s.get(Role::Selection));
            state = state.with_selected(Some(selected - offset));
        }
        StatefulWidget::render(table, area, buf, &mut state);
        let mut y = area.y + 1;
        for row in offset..self.data.rows.len() {
            if y >= area.bottom() {
                return;
            }
            for line in details.get(row).into_iter().flatten() {
                y += 1;
                if y >= area.bottom() {
                    return;
                }
                let at = Rect::new(area.x + indent, y, area.width.saturating_sub(indent), 1);
                line.clone().render(at, buf);
            }
            y += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn need(width: Width, content: u16, title: u16) -> ColumnNeed {
        ColumnNeed {
            width,
            content,
            title,
        }
    }

    #[test]
    fn content_columns_are_whole_and_fill_columns_take_what_they_need() {
        let needs = [
            need(Width::Fill(2), 4, 4),
            need(Width::Content, 14, 5),
            need(Width::Fill(3), 10, 5),
        ];
        // Room for all: NAME keeps 4, the rest goes to the last fill column.
        assert_eq!(column_widths(&needs, 100), vec![4, 14, 80]);
        // Tight: the version stays whole, the fill columns share by weight.
        let tight = [
            need(Width::Fill(1), 30, 4),
            need(Width::Content, 14, 5),
            need(Width::Fill(1), 30, 5),
        ];
        assert_eq!(column_widths(&tight, 36), vec![10, 14, 10]);
        // Not even the titles fit: the widest is cut first.
        assert_eq!(column_widths(&tight, 20), vec![4, 9, 5]);
    }
}
