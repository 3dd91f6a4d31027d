//! The cluster view: a summary saying who is rolling the cluster out, if
//! anyone, and what is wrong, then the nodes, etcd and versions panes: as tabs
//! on a normal terminal, all three at once when it is wide (nodes across the
//! top, etcd and versions side by side). The nodes pane is its table alone:
//! name, role, address, the source that listed the node, machine stage, Ready
//! (a word), versions, usage, cordon, drift and the issue.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::Look;
use super::fleet::{health_line, render_summary};
use super::table::DataTable;
use super::{etcd, versions};
use crate::app::prepared;
use crate::app::screen::{Pane, TableKind};
use crate::app::state::AppState;
use crate::tui::Role;

/// The tabs line: every pane by its key and its table's title, the one shown selected.
fn tabs(look: &Look, shown: Pane, wide: bool) -> Line<'static> {
    let s = &look.styles;
    let mut spans = vec![Span::styled(
        if wide { " panes: " } else { " pane: " },
        s.get(Role::Muted),
    )];
    for (i, pane) in Pane::ALL.into_iter().enumerate() {
        let title = pane.table().spec().title.to_lowercase();
        let label = format!(" {} {title} ", i + 1);
        spans.push(match (pane == shown, wide) {
            (true, _) => Span::styled(format!("[{}]", label.trim()), s.get(Role::Selection)),
            (false, true) => Span::styled(label, s.get(Role::Muted)),
            (false, false) => Span::styled(label, s.get(Role::Text)),
        });
        spans.push(Span::raw(" "));
    }
    Line::from(spans)
}

/// One line: the cluster, and what is wrong with it or that all is well.
fn summary(state: &AppState, look: &Look) -> Line<'static> {
    let name = state.current.clone().unwrap_or_default();
    let Some(live) = state.current_live().filter(|l| l.answered()) else {
        let text = format!("{name}: waiting for the first answer");
        return Line::from(Span::styled(text, look.styles.get(Role::Muted)));
    };
    let h = prepared::health(state, &name, live);
    let head = format!(
        "{name}: {}/{} nodes Ready, etcd {}/{} healthy",
        h.nodes_ready, h.nodes_total, h.quorum.healthy, h.quorum.members
    );
    health_line(&h, look, head.clone(), &head)
}

/// Draws pane `pane` into `area`, with the keys when `active`.
fn render_pane(
    state: &AppState,
    look: &Look,
    pane: Pane,
    active: bool,
    area: Rect,
    buf: &mut Buffer,
) {
    match pane {
        Pane::Nodes => {
            DataTable::pane(state, TableKind::Nodes, look, active).render_block(area, buf);
        }
        Pane::Etcd => etcd::render(state, look, active, area, buf),
        Pane::Versions => versions::render(state, look, active, area, buf),
    }
}

/// Draws the cluster in use on `shown` into `area`.
pub fn render(state: &AppState, look: &Look, shown: Pane, area: Rect, buf: &mut Buffer) {
    let wide = area.width >= crate::app::tables::SIDE_BY_SIDE;
    let [tabs_area, summary_area, body] = area.layout(&Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(2),
        Constraint::Fill(1),
    ]));
    Paragraph::new(tabs(look, shown, wide)).render(tabs_area, buf);
    let rollout = state.current_live().and_then(|l| l.status.rollout.as_ref());
    render_summary(rollout, summary(state, look), look, summary_area, buf);
    if !wide {
        return render_pane(state, look, shown, true, body, buf);
    }
    let [top, bottom] = body.layout(&Layout::vertical([
        Constraint::Fill(1),
        Constraint::Fill(1),
    ]));
    let [left, right] = bottom.layout(&Layout::horizontal([
        Constraint::Fill(1),
        Constraint::Fill(1),
    ]));
    for (pane, area) in Pane::ALL.into_iter().zip([top, left, right]) {
        render_pane(state, look, pane, pane == shown, area, buf);
    }
}
