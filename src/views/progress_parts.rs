//! What the plan and progress panes draw alike: the framed table of steps (or why there is no
//! plan), the head line with its status, the ASCII gauge, elapsed times and the tail of a log;
//! each pane keeps its own rows, words and layout.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::Look;
use super::table::{render_listed, titled};
use crate::app::scroll::{Scroll, first_shown};
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

/// `What runs: status`, the words cut to leave the status whole.
pub(super) fn head_line(
    look: &Look,
    what: &str,
    status: String,
    role: Role,
    width: usize,
) -> Line<'static> {
    let s = &look.styles;
    Line::from(vec![
        Span::styled(
            super::fit(
                what,
                width.saturating_sub(status.len()),
                look.glyphs.ellipsis,
            ),
            s.get(Role::Text),
        ),
        Span::styled(status, s.get(role)),
    ])
}

/// `[=====>....] label`, ASCII in every mode; `label` starts with a space.
pub(super) fn gauge(
    look: &Look,
    done: usize,
    total: usize,
    label: String,
    width: usize,
) -> Line<'static> {
    let s = &look.styles;
    let bar = width.saturating_sub(label.len() + 2).clamp(4, 50);
    let filled = (bar * done).checked_div(total).unwrap_or(0).min(bar);
    Line::from(vec![
        Span::styled("[", s.get(Role::Muted)),
        Span::styled("=".repeat(filled), s.get(Role::Ok)),
        Span::styled(".".repeat(bar - filled), s.get(Role::Muted)),
        Span::styled("]", s.get(Role::Muted)),
        Span::styled(label, s.get(Role::Text)),
    ])
}

/// A framed pane titled `title` holding `log` around the operator's place in
/// it (`scroll`; the newest lines while it follows), each line cut to the
/// width; the place is marked when `active` (the pane has the move keys).
pub(super) fn render_log<'l, I>(
    look: &Look,
    title: &str,
    log: I,
    (scroll, active): (&Scroll, bool),
    area: Rect,
    buf: &mut Buffer,
) where
    I: IntoIterator<Item = &'l String>,
    I::IntoIter: ExactSizeIterator,
{
    let s = &look.styles;
    let inner = titled(look, title.to_string(), active, area, buf);
    let lines: Vec<Line> = log
        .into_iter()
        .map(|l| {
            Line::from(Span::styled(
                super::fit(l, usize::from(inner.width), look.glyphs.ellipsis),
                s.get(Role::Text),
            ))
        })
        .collect();
    let selected = scroll.at(lines.len(), lines.len().saturating_sub(1));
    let marked = (active && scroll.is_set()).then_some(selected);
    render_scrolled(look, lines, selected, marked, inner, buf);
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
