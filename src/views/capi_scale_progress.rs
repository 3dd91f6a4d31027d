//! The progress of a CAPI scale run from this console: the tally of its Machines (created,
//! got a node, Ready, deleting, deleted), etcd as each poll found it (control planes) and
//! what it waits for, above the action progress's head and lines.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Padding, Paragraph, Widget};

use super::Look;
use super::progress::ActionProgressPane;
use crate::app::capi_scale::ScaleProgress;
use crate::app::queries::shown_progress;
use crate::app::state::AppState;
use crate::capi::MachineRole;
use crate::printable::line as printable;
use crate::tui::Role;

pub struct ScaleProgressPane<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> ScaleProgressPane<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> ScaleProgressPane<'a> {
        ScaleProgressPane { state, look }
    }
}

fn tally_lines(look: &Look, p: &ScaleProgress) -> Vec<Line<'static>> {
    let s = &look.styles;
    let label = |t: &str| Span::styled(format!("{t:<10}"), s.get(Role::Muted));
    let machines = format!(
        "{} -> {}: {} created, {} got a node, {} Ready, {} deleting, {} deleted",
        p.from, p.to, p.created, p.got_node, p.ready, p.deleting, p.deleted
    );
    let etcd = match (&p.etcd, p.role) {
        (_, Some(MachineRole::Worker)) => {
            Span::styled("not checked: workers do not join etcd", s.get(Role::Muted))
        }
        (None, _) => Span::styled("not read yet", s.get(Role::Muted)),
        (Some((healthy, reason)), _) => Span::styled(
            format!(
                "healthy on {} of {} polls; last: {}",
                p.healthy_polls,
                p.polls,
                printable(reason)
            ),
            s.get(if *healthy { Role::Ok } else { Role::Error }),
        ),
    };
    let waiting = p.waiting.as_deref().map_or("-".to_string(), printable);
    vec![
        Line::from(vec![
            label("Machines"),
            Span::styled(machines, s.get(Role::Text)),
        ]),
        Line::from(vec![label("etcd"), etcd]),
        Line::from(vec![
            label("Waiting"),
            Span::styled(waiting, s.get(Role::Text)),
        ]),
    ]
}

impl Widget for &ScaleProgressPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Some(scale) = shown_progress(self.state) else {
            return (&ActionProgressPane::new(self.state, self.look)).render(area, buf);
        };
        let [tally, rest] = area.layout(&Layout::vertical([
            Constraint::Length(5),
            Constraint::Fill(1),
        ]));
        let title = format!(" {} ", printable(&scale.object));
        Paragraph::new(tally_lines(self.look, scale))
            .block(
                Block::new()
                    .borders(Borders::ALL)
                    .border_set(self.look.glyphs.border)
                    .title(Span::styled(title, self.look.styles.get(Role::Title)))
                    .border_style(self.look.styles.get(Role::Border))
                    .padding(Padding::horizontal(1)),
            )
            .render(tally, buf);
        (&ActionProgressPane::new(self.state, self.look)).render(rest, buf);
    }
}
