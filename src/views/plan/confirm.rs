//! The typed confirmation popup for a mutating action: says what will happen
//! to which cluster, asks for the name the dispatcher confirms with in full (the
//! cluster's, or the node's for an action on one node), and shows Cancel as the
//! default until the typed name matches.
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

use crate::app::state::ConfirmState;
use crate::tui::Role;
use crate::views::{Look, centered};

const WIDTH: u16 = 64;
const HEIGHT: u16 = 10;

pub struct ConfirmPopup<'a> {
    confirm: &'a ConfirmState,
    look: &'a Look,
}

impl<'a> ConfirmPopup<'a> {
    pub fn new(confirm: &'a ConfirmState, look: &'a Look) -> ConfirmPopup<'a> {
        ConfirmPopup { confirm, look }
    }

    fn matches(&self) -> bool {
        self.confirm.typed == self.confirm.pending.action().confirm_name()
    }

    /// The cursor sits after the typed text (line 5 of the popup: border,
    /// three text lines, blank, input).
    pub fn cursor(&self, area: Rect) -> Option<Position> {
        let popup = centered(area, WIDTH, HEIGHT);
        let typed = unicode_width::UnicodeWidthStr::width(self.confirm.typed.as_str()) as u16;
        let x = (popup.x + 3 + typed).min(popup.right().saturating_sub(2));
        let y = popup.y + 5;
        (y < popup.bottom()).then_some(Position { x, y })
    }
}

impl Widget for &ConfirmPopup<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let g = &self.look.glyphs;
        let action = self.confirm.pending.action();
        let cluster = action.cluster();
        let verdict = if self.matches() {
            Line::from(vec![
                Span::styled(format!("{} name matches: ", g.ok), s.get(Role::Ok)),
                Span::styled("Enter", s.get(Role::Key)),
                Span::styled(" goes ahead, ", s.get(Role::Text)),
                Span::styled("Esc", s.get(Role::Key)),
                Span::styled(" cancels", s.get(Role::Text)),
            ])
        } else {
            Line::from(vec![
                Span::styled("[ Cancel ]", s.get(Role::Selection)),
                Span::styled(" is the default: ", s.get(Role::Muted)),
                Span::styled("Enter", s.get(Role::Key)),
                Span::styled(" or ", s.get(Role::Muted)),
                Span::styled("Esc", s.get(Role::Key)),
                Span::styled(" cancels", s.get(Role::Muted)),
            ])
        };
        let lines = vec![
            Line::from(vec![
                Span::styled(format!("{} ", g.warn), s.get(Role::Warn)),
                Span::styled(action.describe(), s.get(Role::Warn)),
                Span::styled(" in cluster ", s.get(Role::Text)),
                Span::styled(cluster.to_string(), s.get(Role::Accent)),
            ]),
            Line::from(Span::styled(
                format!(
                    "Type the {} name in full to go ahead:",
                    action.confirm_noun()
                ),
                s.get(Role::Text),
            )),
            Line::default(),
            Line::default(),
            Line::from(vec![
                Span::styled("> ", s.get(Role::Key)),
                Span::styled(self.confirm.typed.clone(), s.get(Role::Input)),
            ]),
            Line::default(),
            verdict,
        ];
        let popup = centered(area, WIDTH, HEIGHT);
        let block = Block::new()
            .borders(Borders::ALL)
            .border_set(g.border)
            .border_style(s.get(Role::Warn))
            .title(Span::styled(" Confirm ", s.get(Role::Title)));
        Clear.render(popup, buf);
        Paragraph::new(lines)
            .block(block)
            .style(s.get(Role::Popup))
            .wrap(Wrap { trim: false })
            .render(popup, buf);
    }
}
