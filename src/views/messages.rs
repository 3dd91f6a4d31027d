//! The `:messages` overlay: every message the console showed, newest first
//! and whole, however the message line shortened it.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::Look;
use super::errors::render_list_overlay;
use super::message_line::level_look;
use crate::app::message::Message;
use crate::tui::Role;

pub struct MessageLog<'a> {
    messages: &'a std::collections::VecDeque<Message>,
    look: &'a Look,
    scroll: u16,
}

impl<'a> MessageLog<'a> {
    pub fn new(
        messages: &'a std::collections::VecDeque<Message>,
        look: &'a Look,
        scroll: u16,
    ) -> MessageLog<'a> {
        MessageLog {
            messages,
            look,
            scroll,
        }
    }
}

impl Widget for &MessageLog<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let mut lines: Vec<Line> = self
            .messages
            .iter()
            .rev()
            .map(|m| {
                let (glyph, role) = level_look(self.look, m.level);
                Line::from(Span::styled(format!("{glyph} {}", m.text), s.get(role)))
            })
            .collect();
        if lines.is_empty() {
            lines.push(Line::from(Span::styled(
                "no messages yet",
                s.get(Role::Muted),
            )));
        }
        let title = format!(" Messages ({}), newest first ", self.messages.len());
        render_list_overlay(self.look, title, lines, self.scroll, area, buf);
    }
}
