//! The actions menu (`a`): a popup over the pane listing what can be done to the selected
//! node or etcd member, the chosen one marked; Enter opens its plan, nothing runs yet.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use super::explain::popup_block;
use super::{Look, centered, fit};
use crate::app::actions::ActionMenu;
use crate::tui::Role;

const WIDTH: u16 = 56;

pub struct ActionMenuPopup<'a> {
    menu: &'a ActionMenu,
    look: &'a Look,
}

impl<'a> ActionMenuPopup<'a> {
    pub fn new(menu: &'a ActionMenu, look: &'a Look) -> ActionMenuPopup<'a> {
        ActionMenuPopup { menu, look }
    }
}

impl Widget for &ActionMenuPopup<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let height = u16::try_from(self.menu.items.len())
            .unwrap_or(u16::MAX)
            .saturating_add(4);
        let popup = centered(area, WIDTH, height);
        let room = usize::from(popup.width.saturating_sub(4));
        let subject = crate::printable::line(&self.menu.subject);
        let mut lines: Vec<Line> = self
            .menu
            .items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let style = if i == self.menu.selected {
                    s.get(Role::Selection)
                } else {
                    s.get(Role::Text)
                };
                let text = format!("{} {}", i + 1, item.label(&subject));
                Line::from(Span::styled(
                    fit(&text, room, self.look.glyphs.ellipsis),
                    style,
                ))
            })
            .collect();
        lines.push(Line::default());
        lines.push(Line::from(vec![
            Span::styled("Enter", s.get(Role::Key)),
            Span::styled(" shows the plan and guards", s.get(Role::Muted)),
        ]));
        let title = format!(" Actions: {} in {} ", subject, self.menu.cluster);
        let block = popup_block(self.look, title);
        Clear.render(popup, buf);
        Paragraph::new(lines)
            .block(block)
            .style(s.get(Role::Popup))
            .render(popup, buf);
    }
}
