//! The progress of the node or etcd action run from this console: what runs and whether it
//! still does, then the runner's lines as they arrive (the newest at the bottom).
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Block, Padding, Paragraph, Widget};

use super::Look;
use super::progress_parts::{head_line, render_log};
use crate::app::scroll::Scroll;
use crate::app::state::AppState;
use crate::tui::Role;

pub struct ActionProgressPane<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> ActionProgressPane<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> ActionProgressPane<'a> {
        ActionProgressPane { state, look }
    }
}

impl Widget for &ActionProgressPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Some(progress) = self.state.actions.progress.as_ref() else {
            Paragraph::new("No node or etcd action from this console yet (a on a pane).")
                .style(self.look.styles.get(Role::Muted))
                .render(area, buf);
            return;
        };
        let [top, log] = area.layout(&Layout::vertical([
            Constraint::Length(1),
            Constraint::Fill(1),
        ]));
        let (status, role) = match &progress.outcome {
            None => (": running".to_string(), Role::Accent),
            Some(Ok(_)) => (": done".to_string(), Role::Ok),
            Some(Err(_)) => (": failed".to_string(), Role::Error),
        };
        let what = format!("{} in {}", progress.what, progress.cluster);
        let width = usize::from(area.width.saturating_sub(2));
        Paragraph::new(head_line(self.look, &what, status, role, width))
            .block(Block::new().padding(Padding::horizontal(1)))
            .render(top, buf);
        render_log(
            self.look,
            " Progress ",
            progress.lines.iter(),
            (&Scroll::default(), false),
            log,
            buf,
        );
    }
}
