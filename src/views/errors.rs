//! The discovery errors overlay (`e`): every bad file or context with the
//! reason, so the operator can fix the config without reading logs.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

use super::Look;
use crate::discovery::DiscoveryError;
use crate::tui::Role;

pub struct ErrorList<'a> {
    errors: &'a [DiscoveryError],
    look: &'a Look,
    scroll: u16,
}

impl<'a> ErrorList<'a> {
    pub fn new(errors: &'a [DiscoveryError], look: &'a Look, scroll: u16) -> ErrorList<'a> {
        ErrorList {
            errors,
            look,
            scroll,
        }
    }
}

impl Widget for &ErrorList<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let g = &self.look.glyphs;
        let mut lines = Vec::new();
        if self.errors.is_empty() {
            lines.push(Line::from(Span::styled(
                format!("{} no discovery errors", g.ok),
                s.get(Role::Muted),
            )));
        }
        for e in self.errors {
            let mut head = vec![
                Span::styled(format!("{} ", g.error), s.get(Role::Error)),
                Span::styled(e.file.display().to_string(), s.get(Role::Accent)),
            ];
            if let Some(ctx) = &e.context {
                head.push(Span::styled(format!("  context {ctx}"), s.get(Role::Text)));
            }
            lines.push(Line::from(head));
            lines.push(Line::from(Span::styled(
                format!("  {}", e.message),
                s.get(Role::Text),
            )));
        }
        let title = format!(" Discovery errors ({}) ", self.errors.len());
        render_list_overlay(self.look, title, lines, self.scroll, area, buf);
    }
}

/// A popup over all of `area` titled `title`, holding `lines` wrapped and
/// scrolled by `scroll`: the errors and the messages overlays.
pub(super) fn render_list_overlay(
    look: &Look,
    title: String,
    lines: Vec<Line<'static>>,
    scroll: u16,
    area: Rect,
    buf: &mut Buffer,
) {
    let s = &look.styles;
    let block = Block::new()
        .borders(Borders::ALL)
        .border_set(look.glyphs.border)
        .border_style(s.get(Role::Border))
        .title(Span::styled(title, s.get(Role::Title)))
        .title_bottom(Span::styled(" j/k scroll, Esc closes ", s.get(Role::Muted)));
    Clear.render(area, buf);
    Paragraph::new(lines)
        .block(block)
        .style(s.get(Role::Popup))
        .wrap(Wrap { trim: false })
        .scroll((scroll, 0))
        .render(area, buf);
}
