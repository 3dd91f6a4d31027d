//! The `:messages` overlay: every message the console showed, newest first
//! and whole, however the message line shortened it.
use std::collections::VecDeque;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::Look;
use super::errors::render_list_overlay;
use super::message_line::level_look;
use crate::app::message::Message;
use crate::tui::Role;

/// Draws the log over `area`, scrolled by `scroll`.
pub fn render(
    messages: &VecDeque<Message>,
    look: &Look,
    scroll: u16,
    area: Rect,
    buf: &mut Buffer,
) {
    let s = &look.styles;
    let mut lines: Vec<Line> = (messages.iter().rev())
        .map(|m| {
            let (glyph, role) = level_look(look, m.level);
            Line::from(Span::styled(format!("{glyph} {}", m.text), s.get(role)))
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::from(Span::styled(
            "no messages yet",
            s.get(Role::Muted),
        )));
    }
    let title = format!(" Messages ({}), newest first ", messages.len());
    render_list_overlay(look, title, lines, scroll, area, buf);
}
