//! The two bottom lines: the input line (`:` command, `/` filter, or the last
//! message) and the key hints, which come from the keymap for the current
//! key context.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::Look;
use crate::app::keymap;
use crate::app::state::{AppState, InputKind};
use crate::tui::Role;

pub struct InputLineView<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> InputLineView<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> InputLineView<'a> {
        InputLineView { state, look }
    }

    /// Where the cursor goes while typing (only when no overlay has the keys).
    pub fn cursor_x(&self, area: Rect) -> Option<u16> {
        if self.state.overlay.is_some() {
            return None;
        }
        let line = self.state.input.as_ref()?;
        let w = (prompt(line.kind).len()
            + unicode_width::UnicodeWidthStr::width(line.text.as_str())) as u16;
        Some(area.x + w.min(area.width.saturating_sub(1)))
    }
}

impl Widget for &InputLineView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let line = match (&self.state.input, &self.state.message) {
            (Some(input), _) => {
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
                Line::from(spans)
            }
            (None, Some(msg)) => {
                let lines = super::message_line::message_lines(msg, self.look, area.width.into());
                Paragraph::new(lines).render(area, buf);
                return;
            }
            (None, None) => Line::default(),
        };
        Paragraph::new(line).render(area, buf);
    }
}

/// What the input line starts with for each kind of input.
fn prompt(kind: InputKind) -> &'static str {
    match kind {
        InputKind::Command => ":",
        InputKind::Filter => "/",
        InputKind::Acknowledge => "acknowledge> ",
        InputKind::NamePattern => "names> ",
        InputKind::Screen(prompt) => prompt,
    }
}

pub struct Footer<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> Footer<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> Footer<'a> {
        Footer { state, look }
    }
}

impl Widget for &Footer<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let mut spans = Vec::new();
        for (keys, label) in keymap::footer_hints(self.state) {
            spans.push(Span::styled(format!(" {keys}"), s.get(Role::Key)));
            spans.push(Span::styled(format!(" {label} "), s.get(Role::Muted)));
        }
        Paragraph::new(Line::from(spans)).render(area, buf);
    }
}
