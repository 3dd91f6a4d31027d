//! The discovery errors overlay (`e`): every bad file or context with the
//! reason, so the operator can fix the config without reading logs.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

use super::Look;
use crate::discovery::DiscoveryError;
use crate::tui::Role;

/// "2 discovery errors: press e to see them", or that there are none: the line under the
/// fleet and the discovery list.
pub fn errors_line(errors: &[DiscoveryError], look: &Look) -> Line<'static> {
    let s = &look.styles;
    let g = &look.glyphs;
    match errors.len() {
        0 => Line::from(Span::styled(
            format!("{} no discovery errors", g.ok),
            s.get(Role::Muted),
        )),
        n => Line::from(vec![
            Span::styled(
                format!(
                    "{} {n} discovery error{}",
                    g.warn,
                    if n == 1 { "" } else { "s" }
                ),
                s.get(Role::Warn),
            ),
            Span::styled(": press ", s.get(Role::Muted)),
            Span::styled("e", s.get(Role::Key)),
            Span::styled(" to see them", s.get(Role::Muted)),
        ]),
    }
}

/// Draws the list over `area`, scrolled by `scroll`.
pub fn render(errors: &[DiscoveryError], look: &Look, scroll: u16, area: Rect, buf: &mut Buffer) {
    let s = &look.styles;
    let g = &look.glyphs;
    let mut lines = Vec::new();
    if errors.is_empty() {
        lines.push(errors_line(errors, look));
    }
    for e in errors {
        let mut head = vec![
            Span::styled(format!("{} ", g.error), s.get(Role::Error)),
            Span::styled(e.file.display().to_string(), s.get(Role::Accent)),
        ];
        if let Some(ctx) = &e.context {
            head.push(Span::styled(format!("  context {ctx}"), s.get(Role::Text)));
        }
        lines.push(Line::from(head));
        lines.push(Line::from(Span::styled(
            format!("  {}", e.message),
            s.get(Role::Text),
        )));
    }
    let title = format!(" Discovery errors ({}) ", errors.len());
    render_list_overlay(look, title, lines, scroll, area, buf);
}

/// A popup over all of `area` titled `title`, holding `lines` wrapped and
/// scrolled by `scroll`: the errors and the messages overlays.
pub(super) fn render_list_overlay(
    look: &Look,
    title: String,
    lines: Vec<Line<'static>>,
    scroll: u16,
    area: Rect,
    buf: &mut Buffer,
) {
    let s = &look.styles;
    let block = Block::new()
        .borders(Borders::ALL)
        .border_set(look.glyphs.border)
        .border_style(s.get(Role::Border))
        .title(Span::styled(title, s.get(Role::Title)))
        .title_bottom(Span::styled(" j/k scroll, Esc closes ", s.get(Role::Muted)));
    Clear.render(area, buf);
    Paragraph::new(lines)
        .block(block)
        .style(s.get(Role::Popup))
        .wrap(Wrap { trim: false })
        .scroll((scroll, 0))
        .render(area, buf);
}
