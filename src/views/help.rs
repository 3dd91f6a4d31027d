//! The `?` help overlay, sized to the screen: the keys of where you are
//! first, then the rest and the commands, wrapped (two columns when wide) as
//! `app::help` lays them out from the keymap, so it says what keys really do;
//! its own keys are in the footer below it, generated like every footer.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use super::table::pane_block;
use super::{Look, centered};
use crate::app::help::{COLUMN_GAP, HelpCell, HelpLayout, help_box, layout};
use crate::app::keymap::screen_context;
use crate::app::state::AppState;
use crate::tui::Role;

/// One cell of a column as spans `help.column_width` cells wide (`pad`: filled out with
/// blanks, for a column with another to its right).
fn cell(look: &Look, help: &HelpLayout, cell: Option<&HelpCell>, pad: bool) -> Vec<Span<'static>> {
    let s = &look.styles;
    let width = help.column_width;
    let padded = |text: String| {
        if pad {
            let used = unicode_width::UnicodeWidthStr::width(text.as_str());
            format!("{text}{}", " ".repeat(width.saturating_sub(used)))
        } else {
            text
        }
    };
    match cell {
        Some(HelpCell::Title { text, here }) => {
            let role = if *here { Role::Accent } else { Role::Title };
            vec![Span::styled(padded(text.clone()), s.get(role))]
        }
        Some(HelpCell::Entry { keys, text }) => vec![
            Span::styled(
                format!("{keys:<w$} ", w = help.keys_width),
                s.get(Role::Key),
            ),
            Span::styled(
                padded(text.clone())
                    .chars()
                    .take(width.saturating_sub(help.keys_width + 1))
                    .collect::<String>(),
                s.get(Role::Text),
            ),
        ],
        Some(HelpCell::Blank) | None => vec![Span::raw(padded(String::new()))],
    }
}

/// The help's lines at `width`, the columns side by side.
fn lines(state: &AppState, look: &Look, width: usize) -> Vec<Line<'static>> {
    let help = layout(screen_context(state), state, width);
    let last = help.columns.len().saturating_sub(1);
    (0..help.rows())
        .map(|row| {
            let mut spans = Vec::new();
            for (i, column) in help.columns.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::raw(" ".repeat(COLUMN_GAP)));
                }
                spans.extend(cell(look, &help, column.get(row), i < last));
            }
            Line::from(spans)
        })
        .collect()
}

/// The help popup over the body `area`, scrolled down `scroll` lines (at most to its end).
pub fn render(state: &AppState, look: &Look, scroll: u16, area: Rect, buf: &mut Buffer) {
    let s = &look.styles;
    let (width, height) = help_box((area.width, area.height + 3));
    let popup = centered(area, width, height);
    let block = pane_block(
        look,
        vec![Span::styled(" Help ", s.get(Role::Title))],
        false,
    );
    let inner = block.inner(popup);
    let lines = lines(state, look, usize::from(inner.width));
    let max_scroll = (lines.len() as u16).saturating_sub(inner.height);
    Clear.render(popup, buf);
    Paragraph::new(lines)
        .block(block)
        .style(s.get(Role::Popup))
        .scroll((scroll.min(max_scroll), 0))
        .render(popup, buf);
}
