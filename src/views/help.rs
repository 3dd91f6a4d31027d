//! The `?` help overlay, generated from the keymap tables and the command
//! list, so it always says what the keys really do.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::{Look, centered};
use crate::app::command::COMMANDS;
use crate::app::keymap::{KeyContext, bindings};
use crate::tui::Role;

pub struct Help<'a> {
    look: &'a Look,
    scroll: u16,
}

impl<'a> Help<'a> {
    pub fn new(look: &'a Look, scroll: u16) -> Help<'a> {
        Help { look, scroll }
    }

    /// The help text, one entry per line.
    pub fn lines(&self) -> Vec<Line<'static>> {
        let s = &self.look.styles;
        let mut lines = Vec::new();
        for ctx in KeyContext::ALL {
            lines.push(Line::from(Span::styled(ctx.title(), s.get(Role::Title))));
            for b in bindings(ctx) {
                lines.push(Line::from(vec![
                    Span::styled(format!("  {:<20}", b.key_labels()), s.get(Role::Key)),
                    Span::styled(b.help, s.get(Role::Text)),
                ]));
            }
            lines.push(Line::default());
        }
        lines.push(Line::from(Span::styled("Commands", s.get(Role::Title))));
        for c in COMMANDS {
            let usage = if c.arg.is_empty() {
                format!(":{}", c.name)
            } else {
                format!(":{} {}", c.name, c.arg)
            };
            lines.push(Line::from(vec![
                Span::styled(format!("  {usage:<20}"), s.get(Role::Key)),
                Span::styled(c.help, s.get(Role::Text)),
            ]));
        }
        lines
    }
}

impl Widget for &Help<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let lines = self.lines();
        let popup = centered(area, 72, lines.len() as u16 + 2);
        let max_scroll = (lines.len() as u16).saturating_sub(popup.height.saturating_sub(2));
        let block = Block::new()
            .borders(Borders::ALL)
            .border_set(self.look.glyphs.border)
            .border_style(s.get(Role::Border))
            .title(Span::styled(" Help ", s.get(Role::Title)))
            .title_bottom(Span::styled(" j/k scroll, Esc closes ", s.get(Role::Muted)));
        Clear.render(popup, buf);
        Paragraph::new(lines)
            .block(block)
            .style(s.get(Role::Popup))
            .scroll((self.scroll.min(max_scroll), 0))
            .render(popup, buf);
    }
}
