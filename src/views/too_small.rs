//! The screen shown instead of the console when the terminal is smaller than
//! 80x24: it says the size it has and the size it needs.
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{Look, MIN_HEIGHT, MIN_WIDTH};
use crate::tui::Role;

pub struct TooSmall<'a> {
    width: u16,
    height: u16,
    look: &'a Look,
}

impl<'a> TooSmall<'a> {
    pub fn new(width: u16, height: u16, look: &'a Look) -> TooSmall<'a> {
        TooSmall {
            width,
            height,
            look,
        }
    }

    pub fn text(&self) -> String {
        format!(
            "terminal too small: {}x{}, need {MIN_WIDTH}x{MIN_HEIGHT}",
            self.width, self.height
        )
    }
}

impl Widget for &TooSmall<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let lines = 2;
        let y = area.y + area.height.saturating_sub(lines) / 2;
        let inner = Rect {
            y,
            height: area.height.saturating_sub(y - area.y),
            ..area
        };
        Paragraph::new(vec![self.text().into(), "q quits".into()])
            .style(self.look.styles.get(Role::Warn))
            .alignment(Alignment::Center)
            .wrap(Wrap { trim: true })
            .render(inner, buf);
    }
}
