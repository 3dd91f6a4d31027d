//! The discovery list (`:contexts`): one row per cluster (name, talos context, kube context,
//! endpoints, how it was paired) in the one table every list is drawn with, and a line
//! counting discovery errors with the key that shows them.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::Look;
use super::table::DataTable;
use crate::app::prepared;
use crate::app::screen::TableKind;
use crate::app::state::AppState;
use crate::tui::Role;

/// Draws the discovery list into `area`.
pub fn render(state: &AppState, look: &Look, area: Rect, buf: &mut Buffer) {
    let data = prepared::table(state, TableKind::Clusters);
    let table = DataTable::pane(state, &data, look, true);
    let inner = table.frame(area, buf, false);
    let [rows, errors] = inner.layout(&Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(1),
    ]));
    table.render_rows(rows, buf);
    Paragraph::new(errors_line(state, look)).render(errors, buf);
}

/// "2 discovery errors: press e to see them", or that there are none.
pub fn errors_line(state: &AppState, look: &Look) -> Line<'static> {
    let s = &look.styles;
    let g = &look.glyphs;
    match state.errors.len() {
        0 => Line::from(Span::styled(
            format!("{} no discovery errors", g.ok),
            s.get(Role::Muted),
        )),
        n => Line::from(vec![
            Span::styled(
                format!(
                    "{} {n} discovery error{}",
                    g.warn,
                    if n == 1 { "" } else { "s" }
                ),
                s.get(Role::Warn),
            ),
            Span::styled(": press ", s.get(Role::Muted)),
            Span::styled("e", s.get(Role::Key)),
            Span::styled(" to see them", s.get(Role::Muted)),
        ]),
    }
}
