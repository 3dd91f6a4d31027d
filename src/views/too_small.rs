//! The screen shown instead of the console when the terminal is smaller than
//! 80x24: it says the size it has and the size it needs, and that q quits (or
//! the quit question, when one is open).
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{Look, MIN_HEIGHT, MIN_WIDTH};
use crate::tui::Role;

pub struct TooSmall<'a> {
    width: u16,
    height: u16,
    question: Option<&'a str>,
    look: &'a Look,
}

impl<'a> TooSmall<'a> {
    pub fn new(width: u16, height: u16, question: Option<&'a str>, look: &'a Look) -> TooSmall<'a> {
        TooSmall {
            width,
            height,
            question,
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
        let last = self.question.unwrap_or("q quits; other keys wait");
        let lines = 2;
        let y = area.y + area.height.saturating_sub(lines) / 2;
        let inner = Rect {
            y,
            height: area.height.saturating_sub(y - area.y),
            ..area
        };
        Paragraph::new(vec![self.text().into(), last.to_string().into()])
            .style(self.look.styles.get(Role::Warn))
            .alignment(Alignment::Center)
            .wrap(Wrap { trim: true })
            .render(inner, buf);
    }
}
