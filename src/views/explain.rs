//! The `?` popup of the upgrade plan: what the selected guard checks and why
//! it matters, or what happens to the selected node and why it sits where it
//! does in the order.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use super::table::pane_block;
use super::{Look, centered};
use crate::tui::Role;

const WIDTH: u16 = 72;

/// The frame of a popup Esc closes, titled `title`.
pub(super) fn popup_block(look: &Look, title: String) -> Block<'static> {
    let s = &look.styles;
    pane_block(look, vec![Span::styled(title, s.get(Role::Title))], false)
        .title_bottom(Span::styled(" Esc closes ", s.get(Role::Muted)))
}

/// Draws the explanation `text` of `title` over `area`, scrolled by `scroll`.
pub fn render(title: &str, text: &str, scroll: u16, look: &Look, area: Rect, buf: &mut Buffer) {
    let s = &look.styles;
    let width = WIDTH.min(area.width);
    let text_width = usize::from(width.saturating_sub(4)).max(1);
    // Wrapped height, roughly: each paragraph's width over the text width.
    let lines: u16 = text
        .split('\n')
        .map(|p| (unicode_width::UnicodeWidthStr::width(p) / text_width + 1) as u16)
        .sum();
    let popup = centered(area, width, lines.saturating_add(3));
    let block = popup_block(look, format!(" Why: {title} "));
    Clear.render(popup, buf);
    Paragraph::new(text.to_string())
        .block(block)
        .style(s.get(Role::Popup))
        .wrap(Wrap { trim: true })
        .scroll((scroll, 0))
        .render(popup, buf);
}
