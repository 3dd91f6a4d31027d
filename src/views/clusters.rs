//! The cluster list: one row per cluster (name, talos context, kube context,
//! endpoints, how it was paired) and a line counting discovery errors with
//! the key that shows them.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Block, Borders, Cell, Padding, Paragraph, Row, StatefulWidget, Table, TableState, Widget, Wrap,
};

use super::{Look, fit};
use crate::app::state::AppState;
use crate::discovery::{Cluster, PairedBy};
use crate::tui::Role;

pub struct ClusterList<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> ClusterList<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> ClusterList<'a> {
        ClusterList { state, look }
    }
}

/// How the cluster was put together, in words.
pub fn paired_by_label(cluster: &Cluster) -> &'static str {
    match (cluster.paired_by, &cluster.talos, &cluster.kube) {
        (Some(PairedBy::Config), _, _) => "config",
        (Some(PairedBy::Name), _, _) => "name",
        (Some(PairedBy::Address), _, _) => "address",
        (None, Some(_), None) => "talos only",
        (None, None, Some(_)) => "kube only",
        (None, _, _) => "unpaired",
    }
}

/// Talos endpoints, or the Kubernetes API server for a kube-only cluster.
pub fn endpoints_label(cluster: &Cluster) -> String {
    match (&cluster.talos, &cluster.kube) {
        (Some(t), _) if !t.endpoints.is_empty() => t.endpoints.join(", "),
        (_, Some(k)) => k.server.clone().unwrap_or_default(),
        _ => String::new(),
    }
}

impl Widget for &ClusterList<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let g = &self.look.glyphs;
        let visible = self.state.visible_clusters();
        let mut title = vec![Span::styled(
            format!(" Clusters ({}) ", visible.len()),
            s.get(Role::Title),
        )];
        if !self.state.filter.is_empty() {
            title.push(Span::styled(
                format!("filter: {} ", self.state.filter),
                s.get(Role::Accent),
            ));
        }
        let block = Block::new()
            .borders(Borders::ALL)
            .border_set(g.border)
            .border_style(s.get(Role::Border))
            .padding(Padding::horizontal(1))
            .title(Line::from(title));
        let inner = block.inner(area);
        block.render(area, buf);
        let [table_area, errors_area] = inner.layout(&Layout::vertical([
            Constraint::Fill(1),
            Constraint::Length(1),
        ]));
        self.render_errors_line(errors_area, buf);

        if visible.is_empty() {
            let text = if self.state.clusters.is_empty() {
                "No clusters found in kubeconfig or talosconfig. `taloscope info` shows where taloscope looked.".to_string()
            } else {
                format!(
                    "No cluster matches filter {:?}. Esc clears it.",
                    self.state.filter
                )
            };
            Paragraph::new(text)
                .style(s.get(Role::Muted))
                .wrap(Wrap { trim: true })
                .render(table_area, buf);
            return;
        }

        let marker_width = unicode_width::UnicodeWidthStr::width(g.selected) as u16 + 1;
        let widths = [
            Constraint::Fill(3),
            Constraint::Fill(3),
            Constraint::Fill(3),
            Constraint::Fill(4),
            Constraint::Length(10),
        ];
        // Cell text is cut with an ellipsis, so compute the column widths the
        // table will use.
        let cols = Layout::horizontal(widths).spacing(1).split(Rect {
            width: table_area.width.saturating_sub(marker_width),
            ..table_area
        });
        let cut = |text: &str, col: usize| -> String {
            let w = cols.get(col).map(|r| r.width as usize).unwrap_or(0);
            fit(text, w, g.ellipsis)
        };
        let none = g.none;
        let rows = visible.iter().map(|c| {
            let talos = c.talos.as_ref().map(|t| t.name.as_str()).unwrap_or(none);
            let kube = c.kube.as_ref().map(|k| k.name.as_str()).unwrap_or(none);
            let endpoints = endpoints_label(c);
            let paired = paired_by_label(c);
            let paired_style = if c.paired_by.is_some() {
                s.get(Role::Ok)
            } else {
                s.get(Role::Warn)
            };
            let name_style = if self.state.current.as_deref() == Some(c.name.as_str()) {
                s.get(Role::Accent)
            } else {
                s.get(Role::Text)
            };
            Row::new(vec![
                Cell::new(cut(&c.name, 0)).style(name_style),
                Cell::new(cut(talos, 1)),
                Cell::new(cut(kube, 2)),
                Cell::new(cut(
                    if endpoints.is_empty() {
                        none
                    } else {
                        &endpoints
                    },
                    3,
                )),
                Cell::new(Span::styled(paired, paired_style)),
            ])
            .style(s.get(Role::Text))
        });
        let header = Row::new([
            "NAME",
            "TALOS CONTEXT",
            "KUBE CONTEXT",
            "ENDPOINTS",
            "PAIRED BY",
        ])
        .style(s.get(Role::Header));
        let table = Table::new(rows, widths)
            .header(header)
            .column_spacing(1)
            .row_highlight_style(s.get(Role::Selection))
            .highlight_symbol(format!("{} ", g.selected))
            .highlight_spacing(ratatui::widgets::HighlightSpacing::Always);
        let mut table_state = TableState::default().with_selected(Some(self.state.selected));
        StatefulWidget::render(table, table_area, buf, &mut table_state);
    }
}

impl ClusterList<'_> {
    fn render_errors_line(&self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let g = &self.look.glyphs;
        let line = match self.state.errors.len() {
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
        };
        Paragraph::new(line).render(area, buf);
    }
}
