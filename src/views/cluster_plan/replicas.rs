//! The replica count `s` asks for on `:capi`: a popup naming the object it scales (and why,
//! when the selected row is not it), its `spec.replicas` now and the digits typed so far.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use crate::capi_scale::ScaleTarget;
use crate::printable::line as printable;
use crate::tui::Role;
use crate::views::Look;
use crate::views::explain::popup_block;

const WIDTH: u16 = 64;

pub(super) fn draw(target: &ScaleTarget, typed: &str, area: Rect, buf: &mut Buffer, look: &Look) {
    let s = &look.styles;
    let text = |t: String| Line::from(Span::styled(t, s.get(Role::Text)));
    let mut lines = vec![
        text(printable(&target.object)),
        text(format!("spec.replicas now: {}", target.replicas)),
    ];
    if let Some(note) = &target.note {
        lines.push(Line::from(Span::styled(printable(note), s.get(Role::Warn))));
    }
    lines.push(Line::default());
    lines.push(Line::from(vec![
        Span::styled("New replicas: ", s.get(Role::Text)),
        Span::styled(typed.to_string(), s.get(Role::Input)),
    ]));
    lines.push(Line::from(vec![
        Span::styled("Enter", s.get(Role::Key)),
        Span::styled(" plan and guards (nothing runs yet)  ", s.get(Role::Muted)),
        Span::styled("Esc", s.get(Role::Key)),
        Span::styled(" cancel", s.get(Role::Muted)),
    ]));
    let inner = usize::from(WIDTH.saturating_sub(4)).max(1);
    let rows: usize = lines.iter().map(|l| l.width() / inner + 1).sum();
    let height = u16::try_from(rows).unwrap_or(u16::MAX).saturating_add(2);
    let popup = crate::views::centered(area, WIDTH, height);
    let title = format!(" Scale {} (Cluster API) ", printable(&target.cluster));
    Clear.render(popup, buf);
    Paragraph::new(lines)
        .block(popup_block(look, title))
        .style(s.get(Role::Popup))
        .wrap(Wrap { trim: true })
        .render(popup, buf);
}
