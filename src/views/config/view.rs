//! The machine configuration pane: a heading per section (`+` folded, `-` open, with its
//! size), the open sections' YAML beneath, the cursor's row highlighted and kept in view.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{ConfigScreen, Row};
use crate::tui::{Look, Role};
use crate::views::table::titled;

fn title(screen: &ConfigScreen) -> String {
    let Some(request) = &screen.node.request else {
        return " Machine config ".to_string();
    };
    let node = crate::printable::line(&request.node.name);
    match &screen.node.document {
        None => format!(" Machine config of {node} "),
        Some(config) => {
            let documents = config.documents.len();
            let plural = if documents == 1 { "" } else { "s" };
            format!(
                " Machine config of {node}: {documents} document{plural}, {} secrets redacted ",
                config.redacted
            )
        }
    }
}

/// The text of one row and the role it is drawn in.
fn row(screen: &ConfigScreen, row: Row) -> (String, Role) {
    let section = &screen.sections[row.section];
    match row.line {
        Some(line) => (format!("    {}", section.lines[line]), Role::Text),
        None => {
            let mark = if section.open { '-' } else { '+' };
            let size = section.lines.len();
            let unit = if size == 1 { "line" } else { "lines" };
            let text = format!("{mark} {}  ({size} {unit})", section.path);
            (crate::printable::line(&text), Role::Header)
        }
    }
}

/// The rows on screen, the cursor's among them, in `height` lines.
fn rows(screen: &ConfigScreen, look: &Look, height: usize) -> Vec<Line<'static>> {
    let s = &look.styles;
    let rows = screen.rows();
    let skip = (screen.cursor + 1).saturating_sub(height.max(1));
    rows.iter()
        .enumerate()
        .skip(skip)
        .take(height)
        .map(|(at, r)| {
            let (text, role) = row(screen, *r);
            let role = if at == screen.cursor {
                Role::Selection
            } else {
                role
            };
            Line::from(Span::styled(text, s.get(role)))
        })
        .collect()
}

/// Draws the configuration pane of `screen` into `area`.
pub(super) fn render(screen: &ConfigScreen, look: &Look, area: Rect, buf: &mut Buffer) {
    let inner = titled(look, title(screen), true, area, buf);
    let waiting = |node: &str| format!("reading the machine configuration of {node}...");
    let lines = |height| rows(screen, look, height);
    screen.node.render(look, waiting, lines, inner, buf);
}
