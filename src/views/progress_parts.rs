//! What the plan and progress panes draw alike: the framed table of steps (or why there is no
//! plan) and lines scrolled to a selected one; each pane keeps its own rows, words and
//! layout.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::Look;
use super::table::{render_listed, titled};
use crate::app::scroll::first_shown;
use crate::app::tables::{Column, TableRow};
use crate::tui::Role;

/// The rows of a step table in the plan's own order (no sort arrow).
pub(super) struct StepTable<'a> {
    pub columns: &'static [Column],
    pub rows: Vec<TableRow>,
    pub total: usize,
    pub selected: Option<String>,
    /// Whether the table has the keys (shows the selection).
    pub active: bool,
    /// What the table says with no rows.
    pub empty: &'a str,
}

/// A framed pane titled `title` holding `table`, or the reason there is none in the error style.
pub(super) fn render_step_pane(
    look: &Look,
    title: String,
    framed_active: bool,
    table: Result<StepTable<'_>, &str>,
    area: Rect,
    buf: &mut Buffer,
) {
    let s = &look.styles;
    let inner = titled(look, title, framed_active, area, buf);
    match table {
        Ok(table) => render_listed(look, table, &[], inner, buf),
        Err(e) => Paragraph::new(e.to_string())
            .style(s.get(Role::Error))
            .wrap(Wrap { trim: true })
            .render(inner, buf),
    }
}

/// `lines` from where line `selected` is on screen, line `marked` (if any)
/// in the selection style.
pub(super) fn render_scrolled(
    look: &Look,
    lines: Vec<Line<'static>>,
    selected: usize,
    marked: Option<usize>,
    area: Rect,
    buf: &mut Buffer,
) {
    let room = usize::from(area.height);
    let first = first_shown(lines.len(), room, selected);
    let shown: Vec<Line> = lines
        .into_iter()
        .enumerate()
        .skip(first)
        .take(room)
        .map(|(i, line)| {
            if Some(i) == marked {
                let selection = look.styles.get(Role::Selection);
                Line::from(
                    line.spans
                        .into_iter()
                        .map(|span| span.style(selection))
                        .collect::<Vec<_>>(),
                )
            } else {
                line
            }
        })
        .collect();
    Paragraph::new(shown).render(area, buf);
}
