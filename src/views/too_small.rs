//! The screen shown instead of the console when the terminal is smaller than
//! 80x24: it says the size it has and the size it needs, and that q quits (or
//! the quit question, when one is open).
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{Look, MIN_HEIGHT, MIN_WIDTH};
use crate::tui::Role;

/// Draws the too-small screen over all of `area`: the terminal's size and the size needed,
/// then `question` (the quit question) or that q quits.
pub fn render(question: Option<&str>, look: &Look, area: Rect, buf: &mut Buffer) {
    let (width, height) = (area.width, area.height);
    let text = format!("terminal too small: {width}x{height}, need {MIN_WIDTH}x{MIN_HEIGHT}");
    let last = question.unwrap_or("q quits; other keys wait");
    let lines = 2;
    let y = area.y + area.height.saturating_sub(lines) / 2;
    let inner = Rect {
        y,
        height: area.height.saturating_sub(y - area.y),
        ..area
    };
    Paragraph::new(vec![text.into(), last.to_string().into()])
        .style(look.styles.get(Role::Warn))
        .alignment(Alignment::Center)
        .wrap(Wrap { trim: true })
        .render(inner, buf);
}
