//! The progress of the node, etcd or delete action run from this console: what runs and
//! whether it still does, then the runner's lines as they arrive (the newest at the bottom),
//! wrapped so that long ones (a delete's backup paths) are read whole.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Block, Padding, Paragraph, Widget};

use super::Look;
use super::progress_parts::{head_line, render_log};
use crate::app::help::wrap_words;
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
        let elapsed = progress
            .elapsed(self.state.wall_clock)
            .map_or(String::new(), |e| format!(" ({e})"));
        let (status, role) = match &progress.outcome {
            None if progress.cancelling => {
                (format!(": cancelling after this step{elapsed}"), Role::Warn)
            }
            None => (format!(": running{elapsed}"), Role::Accent),
            Some(Ok(_)) => (format!(": done{elapsed}"), Role::Ok),
            Some(Err(e)) if e.starts_with("cancelled") => {
                (format!(": cancelled{elapsed}"), Role::Warn)
            }
            Some(Err(_)) => (format!(": failed{elapsed}"), Role::Error),
        };
        let what = progress.headline();
        let width = usize::from(area.width.saturating_sub(2));
        Paragraph::new(head_line(self.look, &what, status, role, width))
            .block(Block::new().padding(Padding::horizontal(1)))
            .render(top, buf);
        let lines = wrapped(&progress.lines, usize::from(log.width.saturating_sub(2)));
        render_log(
            self.look,
            " Progress ",
            lines.iter(),
            (&Scroll::default(), false),
            log,
            buf,
        );
    }
}

/// Each line in lines of at most `width` cells, a continuation indented by two.
fn wrapped(lines: &std::collections::VecDeque<String>, width: usize) -> Vec<String> {
    lines
        .iter()
        .flat_map(|line| {
            let mut parts = wrap_words(line, width.saturating_sub(2)).into_iter();
            let first = parts.next().unwrap_or_default();
            std::iter::once(first).chain(parts.map(|p| format!("  {p}")))
        })
        .collect()
}
