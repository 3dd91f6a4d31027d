//! The two bottom lines: the input line (`:` command, `/` filter, or the last
//! message) and the key hints, which come from the keymap for the current
//! key context.
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::Look;
use crate::app::keymap;
use crate::app::state::{AppState, InputKind};
use crate::tui::Role;

/// Draws the input line into `area`; gives where the cursor goes while typing (only when no
/// overlay has the keys).
pub fn render_input(
    state: &AppState,
    look: &Look,
    area: Rect,
    buf: &mut Buffer,
) -> Option<Position> {
    let s = &look.styles;
    let Some(input) = &state.input else {
        if let Some(message) = &state.message {
            let lines = super::message_line::message_lines(message, look, area.width.into());
            Paragraph::new(lines).render(area, buf);
        }
        return None;
    };
    let mut spans = vec![
        Span::styled(prompt(input.kind), s.get(Role::Key)),
        Span::styled(input.text.clone(), s.get(Role::Input)),
    ];
    if !input.candidates.is_empty() {
        spans.push(Span::styled(
            format!("   {}", input.candidates.join("  ")),
            s.get(Role::Muted),
        ));
    }
    Paragraph::new(Line::from(spans)).render(area, buf);
    let typed =
        prompt(input.kind).len() + unicode_width::UnicodeWidthStr::width(input.text.as_str());
    let x = area.x + (typed as u16).min(area.width.saturating_sub(1));
    state.overlay.is_none().then_some(Position::new(x, area.y))
}

/// What the input line starts with for each kind of input.
fn prompt(kind: InputKind) -> &'static str {
    match kind {
        InputKind::Command => ":",
        InputKind::Filter => "/",
        InputKind::Screen(prompt) => prompt,
    }
}

/// Draws the key hints of the current key context into `area`.
pub fn render_hints(state: &AppState, look: &Look, area: Rect, buf: &mut Buffer) {
    let s = &look.styles;
    let mut spans = Vec::new();
    for (keys, label) in keymap::footer_hints(state) {
        spans.push(Span::styled(format!(" {keys}"), s.get(Role::Key)));
        spans.push(Span::styled(format!(" {label} "), s.get(Role::Muted)));
    }
    Paragraph::new(Line::from(spans)).render(area, buf);
}
