//! The cluster view: a summary saying who is rolling the cluster out, if
//! anyone, and what is wrong, then the nodes, etcd and versions panes: as tabs
//! on a normal terminal, all three at once when it is wide (nodes across the
//! top, etcd and versions side by side).
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Paragraph, Widget};

use super::Look;
use super::{etcd, nodes, versions};
use crate::app::prepared;
use crate::app::screen::Pane;
use crate::app::state::AppState;
use crate::tui::Role;

pub struct ClusterView<'a> {
    state: &'a AppState,
    look: &'a Look,
    pane: Pane,
}

impl<'a> ClusterView<'a> {
    pub fn new(state: &'a AppState, look: &'a Look, pane: Pane) -> ClusterView<'a> {
        ClusterView { state, look, pane }
    }

    fn tabs(&self, wide: bool) -> Vec<Span<'static>> {
        let s = &self.look.styles;
        let mut spans = Vec::new();
        for (i, pane) in Pane::ALL.into_iter().enumerate() {
            let label = format!(" {} {} ", i + 1, pane.title());
            spans.push(if pane == self.pane {
                Span::styled(format!("[{}]", label.trim()), s.get(Role::Selection))
            } else if wide {
                Span::styled(label, s.get(Role::Muted))
            } else {
                Span::styled(label, s.get(Role::Text))
            });
            spans.push(Span::raw(" "));
        }
        spans
    }

    /// One line: the cluster, and what is wrong with it or that all is well.
    fn summary(&self) -> Line<'static> {
        let s = &self.look.styles;
        let g = &self.look.glyphs;
        let name = self.state.current.clone().unwrap_or_default();
        let live = self.state.current_live();
        let Some(live) = live.filter(|l| l.has_data() || l.status.error.is_some()) else {
            return Line::from(Span::styled(
                format!("{name}: waiting for the first answer"),
                s.get(Role::Muted),
            ));
        };
        let h = prepared::health(self.state, &name, live);
        let head = format!(
            "{name}: {}/{} nodes Ready, etcd {}/{} healthy",
            h.nodes_ready, h.nodes_total, h.quorum.healthy, h.quorum.members
        );
        if h.problems.is_empty() {
            let mut spans = vec![Span::styled(format!("{} {head}", g.ok), s.get(Role::Ok))];
            // Information (a cordon) is said, not warned about.
            if !h.notes.is_empty() {
                spans.push(Span::styled(
                    format!("; {}", h.notes.join("; ")),
                    s.get(Role::Text),
                ));
            }
            Line::from(spans)
        } else {
            Line::from(vec![
                Span::styled(format!("{} {head}: ", g.error), s.get(Role::Error)),
                Span::styled(h.problems.join("; "), s.get(Role::Error)),
            ])
        }
    }
}

impl Widget for &ClusterView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let wide = area.width >= crate::app::tables::SIDE_BY_SIDE;
        let [tabs, summary, body] = area.layout(&Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(2),
            Constraint::Fill(1),
        ]));
        let mut line = vec![Span::styled(
            if wide { " panes: " } else { " pane: " },
            self.look.styles.get(Role::Muted),
        )];
        line.extend(self.tabs(wide));
        Paragraph::new(Line::from(line)).render(tabs, buf);
        let mut text = Text::default();
        if let Some(rollout) = self
            .state
            .current_live()
            .and_then(|l| l.status.rollout.as_ref())
        {
            text.push_line(super::fleet::rollout_line(
                rollout,
                self.look,
                summary.width,
            ));
        }
        text.push_line(self.summary());
        Paragraph::new(text)
            .wrap(ratatui::widgets::Wrap { trim: true })
            .render(summary, buf);
        let (state, look) = (self.state, self.look);
        if !wide {
            match self.pane {
                Pane::Nodes => (&nodes::NodesPane::new(state, look, true)).render(body, buf),
                Pane::Etcd => (&etcd::EtcdPane::new(state, look, true)).render(body, buf),
                Pane::Versions => {
                    (&versions::VersionsPane::new(state, look, true)).render(body, buf)
                }
            }
            return;
        }
        let [top, bottom] = body.layout(&Layout::vertical([
            Constraint::Fill(1),
            Constraint::Fill(1),
        ]));
        let [left, right] = bottom.layout(&Layout::horizontal([
            Constraint::Fill(1),
            Constraint::Fill(1),
        ]));
        let active = |p: Pane| self.pane == p;
        (&nodes::NodesPane::new(state, look, active(Pane::Nodes))).render(top, buf);
        (&etcd::EtcdPane::new(state, look, active(Pane::Etcd))).render(left, buf);
        (&versions::VersionsPane::new(state, look, active(Pane::Versions))).render(right, buf);
    }
}
