//! The top line: product name, the cluster in use, cluster and error counts,
//! and a `READ-ONLY` marker (a word, not only a colour) under --readonly.
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::Look;
use crate::app::state::AppState;
use crate::tui::Role;

pub struct Header<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> Header<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> Header<'a> {
        Header { state, look }
    }
}

impl Widget for &Header<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let sep = Span::styled(
            format!(" {} ", self.look.glyphs.separator),
            s.get(Role::Muted),
        );
        let cluster = match &self.state.current {
            Some(name) => Span::styled(name.clone(), s.get(Role::Accent)),
            None => Span::styled("none", s.get(Role::Muted)),
        };
        let left = Line::from(vec![
            Span::styled(" taloscope", s.get(Role::Header)),
            sep.clone(),
            Span::styled("cluster: ", s.get(Role::Muted)),
            cluster,
            sep,
            Span::styled(
                format!("{} clusters", self.state.clusters.len()),
                s.get(Role::Text),
            ),
        ]);
        Paragraph::new(left).render(area, buf);
        let mut right = Vec::new();
        if !self.state.errors.is_empty() {
            right.push(Span::styled(
                format!(
                    "{} {} errors ",
                    self.look.glyphs.warn,
                    self.state.errors.len()
                ),
                s.get(Role::Warn),
            ));
        }
        if self.state.readonly {
            right.push(Span::styled(" READ-ONLY ", s.get(Role::ReadOnly)));
        }
        Paragraph::new(Line::from(right))
            .alignment(Alignment::Right)
            .render(area, buf);
    }
}
