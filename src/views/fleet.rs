//! The fleet: one row per cluster (contexts, reachable, nodes ready, etcd
//! quorum, Talos and Kubernetes versions, warnings, a rollout in progress or
//! the first issue, and the age of stale data), what is wrong with the
//! selected cluster and who is rolling it out, and the discovery-error line.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Paragraph, Widget};

use super::Look;
use super::clusters::errors_line;
use super::table::{DataTable, pane_block};
use crate::app::prepared;
use crate::app::screen::TableKind;
use crate::app::state::AppState;
use crate::fleet::RolloutStatus;
use crate::tui::Role;

/// "upgrade in progress by bob@jump2, node 3 of 5 (cp-3, rebooting)" in
/// `width` columns; shared with the cluster view's summary. When it does not
/// fit, the current node goes first, then the holder's name is cut in the middle
/// (its start says who, its end which run): who and how far always show.
pub(super) fn rollout_line(rollout: &RolloutStatus, look: &Look, width: u16) -> Line<'static> {
    use unicode_width::UnicodeWidthStr;
    let g = &look.glyphs;
    let width = width as usize;
    let said = format!("{} {}", g.warn, rollout.describe());
    let text = match rollout.current_shown() {
        Some(current) if said.width() + current.width() + 3 <= width => {
            format!("{said} ({current})")
        }
        _ if said.width() <= width => said,
        _ => {
            let holder = rollout.holder_shown();
            let others = said.width() - holder.width();
            let cut = super::fit_apart(&holder, width.saturating_sub(others), g.ellipsis, 0);
            super::fit(
                &format!("{} {}", g.warn, rollout.describe_by(&cut)),
                width,
                g.ellipsis,
            )
        }
    };
    Line::from(Span::styled(text, look.styles.get(Role::Warn)))
}

pub struct FleetView<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> FleetView<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> FleetView<'a> {
        FleetView { state, look }
    }

    /// What is wrong with the selected cluster, all of it, on one line.
    fn selected_line(&self, key: Option<&str>) -> Line<'static> {
        let s = &self.look.styles;
        let g = &self.look.glyphs;
        let Some(name) = key else {
            return Line::default();
        };
        let contexts = self
            .state
            .clusters
            .iter()
            .find(|c| c.name == name)
            .map(|c| {
                let talos = c.talos.as_ref().map_or(g.none, |t| t.name.as_str());
                let kube = c.kube.as_ref().map_or(g.none, |k| k.name.as_str());
                match self.state.fleet.capi.owner(name) {
                    Some(owner) => format!(" (talos {talos}, kube {kube}; CAPI: {owner})"),
                    None => format!(" (talos {talos}, kube {kube})"),
                }
            })
            .unwrap_or_default();
        let label = format!("{name}{contexts}");
        let live = self.state.fleet.cluster(name);
        let Some(live) = live.filter(|l| l.has_data() || l.status.error.is_some()) else {
            return Line::from(Span::styled(
                format!("{label}: no answer yet"),
                s.get(Role::Muted),
            ));
        };
        let h = prepared::health(self.state, name, live);
        if h.problems.is_empty() {
            let mut spans = vec![Span::styled(
                format!(
                    "{} {label}: all {} nodes Ready, etcd can lose {}",
                    g.ok, h.nodes_total, h.quorum.tolerates
                ),
                s.get(Role::Ok),
            )];
            // Information (a cordon) is said, not warned about.
            if !h.notes.is_empty() {
                spans.push(Span::styled(
                    format!("; {}", h.notes.join("; ")),
                    s.get(Role::Text),
                ));
            }
            return Line::from(spans);
        }
        Line::from(Span::styled(
            format!("{} {label}: {}", g.error, h.problems.join("; ")),
            s.get(Role::Error),
        ))
    }
}

impl Widget for &FleetView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let data = prepared::table(self.state, TableKind::Fleet);
        let table = DataTable {
            data: &data,
            view: &self.state.tables.fleet,
            look: self.look,
            title: "Clusters",
            active: true,
            empty: "No clusters found in kubeconfig or talosconfig. `taloscope info` shows where taloscope looked.",
        };
        let block = pane_block(self.look, table.title_spans(), false);
        let inner = block.inner(area);
        block.render(area, buf);
        let [rows, selected, errors] = inner.layout(&Layout::vertical([
            Constraint::Fill(1),
            Constraint::Length(2),
            Constraint::Length(1),
        ]));
        table.render_rows(rows, buf);
        let key = data.selected_key(&self.state.tables.fleet);
        let rollout = key
            .and_then(|k| self.state.fleet.cluster(k))
            .and_then(|l| l.status.rollout.as_ref());
        let mut text = Text::default();
        if let Some(rollout) = rollout {
            text.push_line(rollout_line(rollout, self.look, selected.width));
        }
        text.push_line(self.selected_line(key));
        Paragraph::new(text)
            .wrap(ratatui::widgets::Wrap { trim: true })
            .render(selected, buf);
        Paragraph::new(errors_line(self.state, self.look)).render(errors, buf);
    }
}
