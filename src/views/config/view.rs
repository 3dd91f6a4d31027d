//! The machine configuration pane: a heading per section (`+` folded, `-` open, with its
//! size), the open sections' YAML beneath, the cursor's row highlighted and kept in view.
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{ConfigScreen, Row};
use crate::tui::{Look, Role};
use crate::views::table::titled;

pub struct ConfigPane<'a> {
    screen: &'a ConfigScreen,
    look: &'a Look,
}

impl<'a> ConfigPane<'a> {
    pub fn new(screen: &'a ConfigScreen, look: &'a Look) -> ConfigPane<'a> {
        ConfigPane { screen, look }
    }

    fn title(&self) -> String {
        let Some(request) = &self.screen.request else {
            return " Machine config ".to_string();
        };
        let node = crate::printable::line(&request.node);
        match &self.screen.config {
            None => format!(" Machine config of {node} "),
            Some(config) => {
                let documents = config.documents.len();
                let plural = if documents == 1 { "" } else { "s" };
                format!(
                    " Machine config of {node}: {documents} document{plural}, {} secrets redacted ",
                    config.redacted
                )
            }
        }
    }

    /// The text of one row and the role it is drawn in.
    fn row(&self, row: Row) -> (String, Role) {
        let section = &self.screen.sections[row.section];
        match row.line {
            Some(line) => (format!("    {}", section.lines[line]), Role::Text),
            None => {
                let mark = if section.open { '-' } else { '+' };
                let size = section.lines.len();
                let unit = if size == 1 { "line" } else { "lines" };
                let text = format!("{mark} {}  ({size} {unit})", section.path);
                (crate::printable::line(&text), Role::Header)
            }
        }
    }

    /// The rows on screen, the cursor's among them, in `height` lines.
    fn rows(&self, height: usize) -> Vec<Line<'static>> {
        let s = &self.look.styles;
        let rows = self.screen.rows();
        let skip = (self.screen.cursor + 1).saturating_sub(height.max(1));
        rows.iter()
            .enumerate()
            .skip(skip)
            .take(height)
            .map(|(at, row)| {
                let (text, role) = self.row(*row);
                let role = if at == self.screen.cursor {
                    Role::Selection
                } else {
                    role
                };
                Line::from(Span::styled(text, s.get(role)))
            })
            .collect()
    }
}

impl Widget for &ConfigPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let inner = titled(self.look, self.title(), true, area, buf);
        let mut shown: Vec<Line> = Vec::new();
        if let Some(why) = &self.screen.error {
            let why = crate::printable::line(why);
            shown.push(Line::from(Span::styled(why, s.get(Role::Error))));
        }
        let reading = self.screen.config.is_none();
        if reading && self.screen.error.is_none() {
            let node = self
                .screen
                .request
                .as_ref()
                .map_or("", |r| r.address.as_str());
            let node = crate::printable::line(node);
            let text = format!("reading the machine configuration of {node}...");
            shown.push(Line::from(Span::styled(text, s.get(Role::Muted))));
        }
        let height = usize::from(inner.height).saturating_sub(shown.len());
        shown.extend(self.rows(height));
        let paragraph = Paragraph::new(shown);
        match reading {
            true => paragraph.wrap(Wrap { trim: true }).render(inner, buf),
            false => paragraph.render(inner, buf),
        }
    }
}
