//! The message on the input line: whole on one line, or wrapped onto two;
//! a longer one is shortened there and `:messages` shows it whole (the app
//! keeps every message in its log).
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::{Look, fit};
use crate::app::help::wrap_words;
use crate::app::message::{Level, Message};
use crate::app::state::AppState;
use crate::tui::Role;

/// Lines the message may take at most.
const MAX_ROWS: usize = 2;

/// The glyph and role a message shows with.
pub fn level_look(look: &Look, level: Level) -> (&'static str, Role) {
    let g = &look.glyphs;
    match level {
        Level::Info => (g.ok, Role::Text),
        Level::Warn => (g.warn, Role::Warn),
        Level::Error => (g.error, Role::Error),
    }
}

/// `message` in lines of `width` cells: up to two, the second shortened to
/// end in "... :messages" when even two are not enough.
pub fn message_lines(message: &Message, look: &Look, width: usize) -> Vec<Line<'static>> {
    let (glyph, role) = level_look(look, message.level);
    let style = look.styles.get(role);
    let text = format!("{glyph} {}", message.text);
    let mut lines = wrap_words(&text, width);
    if lines.len() > MAX_ROWS {
        let hint = format!("{} :messages", look.glyphs.ellipsis);
        let rest = lines[MAX_ROWS - 1..].join(" ");
        let room = width.saturating_sub(hint.width());
        lines.truncate(MAX_ROWS - 1);
        lines.push(format!("{}{hint}", fit(&rest, room, "")));
    }
    lines
        .into_iter()
        .map(|l| Line::from(Span::styled(l, style)))
        .collect()
}

/// Rows the input line takes on a screen `width` wide: two while a message
/// that long shows, else one.
pub fn input_rows(state: &AppState, look: &Look, width: u16) -> u16 {
    match (&state.input, &state.message) {
        (None, Some(message)) => message_lines(message, look, width.into()).len() as u16,
        _ => 1,
    }
}
