//! The fleet: one row per cluster (contexts, reachable, nodes ready, etcd
//! quorum, Talos and Kubernetes versions, warnings, a rollout in progress or
//! the first issue, and the age of stale data), what is wrong with the
//! selected cluster and who is rolling it out, and the discovery-error line.
//! The discovery list (`:contexts`: one row per cluster with its talos context, kube context,
//! endpoints and how it was paired) is drawn alike, without the selected cluster's lines.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::Look;
use super::errors::errors_line;
use super::table::DataTable;
use crate::app::prepared;
use crate::app::screen::TableKind;
use crate::app::state::AppState;
use crate::fleet::RolloutStatus;
use crate::fleet::summary::ClusterHealth;
use crate::tui::Role;

/// "upgrade in progress by bob@jump2, node 3 of 5 (cp-3, rebooting)" in
/// `width` columns; shared with the cluster view's summary. When it does not
/// fit, the current node goes first, then the holder's name is cut in the middle
/// (its start says who, its end which run): who and how far always show.
fn rollout_line(rollout: &RolloutStatus, look: &Look, width: u16) -> Line<'static> {
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

/// Who is rolling the cluster out, if anyone, above `health`, wrapped into `area`: the
/// fleet's line of the selected cluster and the cluster view's summary.
pub(super) fn render_summary(
    rollout: Option<&RolloutStatus>,
    health: Line<'static>,
    look: &Look,
    area: Rect,
    buf: &mut Buffer,
) {
    let mut text = Text::default();
    if let Some(rollout) = rollout {
        text.push_line(rollout_line(rollout, look, area.width));
    }
    text.push_line(health);
    Paragraph::new(text)
        .wrap(Wrap { trim: true })
        .render(area, buf);
}

/// `well` after the all-well glyph with the notes (information, such as a cordon, is said,
/// not warned about), or `head` after the error glyph with every problem.
pub(super) fn health_line(
    h: &ClusterHealth,
    look: &Look,
    well: String,
    head: &str,
) -> Line<'static> {
    let s = &look.styles;
    let g = &look.glyphs;
    if !h.problems.is_empty() {
        let text = format!("{} {head}: {}", g.error, h.problems.join("; "));
        return Line::from(Span::styled(text, s.get(Role::Error)));
    }
    let mut spans = vec![Span::styled(format!("{} {well}", g.ok), s.get(Role::Ok))];
    if !h.notes.is_empty() {
        let notes = format!("; {}", h.notes.join("; "));
        spans.push(Span::styled(notes, s.get(Role::Text)));
    }
    Line::from(spans)
}

/// What is wrong with the selected cluster, all of it, on one line.
fn selected_line(state: &AppState, look: &Look, key: Option<&str>) -> Line<'static> {
    let g = &look.glyphs;
    let Some(name) = key else {
        return Line::default();
    };
    let contexts = (state.clusters.iter().find(|c| c.name == name))
        .map(|c| {
            let talos = c.talos.as_ref().map_or(g.none, |t| t.name.as_str());
            let kube = c.kube.as_ref().map_or(g.none, |k| k.name.as_str());
            match state.fleet.capi.owner(name) {
                Some(owner) => format!(" (talos {talos}, kube {kube}; CAPI: {owner})"),
                None => format!(" (talos {talos}, kube {kube})"),
            }
        })
        .unwrap_or_default();
    let label = format!("{name}{contexts}");
    let Some(live) = state.fleet.cluster(name).filter(|l| l.answered()) else {
        let text = format!("{label}: no answer yet");
        return Line::from(Span::styled(text, look.styles.get(Role::Muted)));
    };
    let h = prepared::health(state, name, live);
    let well = format!(
        "{label}: all {} nodes Ready, etcd can lose {}",
        h.nodes_total, h.quorum.tolerates
    );
    health_line(&h, look, well, &label)
}

/// Draws the list of clusters `kind` (the fleet, or the discovery list) into `area`.
pub fn render(state: &AppState, look: &Look, kind: TableKind, area: Rect, buf: &mut Buffer) {
    let table = DataTable::pane(state, kind, look, true);
    // The table has the keys, but the block is the whole screen's: not accented.
    let inner = table.frame(area, buf, false);
    let fleet = kind == TableKind::Fleet;
    let [rows, selected, errors] = inner.layout(&Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(if fleet { 2 } else { 0 }),
        Constraint::Length(1),
    ]));
    table.render_rows(rows, buf);
    if fleet {
        let key = table.data.selected_key(table.view);
        let rollout = key
            .and_then(|k| state.fleet.cluster(k))
            .and_then(|l| l.status.rollout.as_ref());
        let line = selected_line(state, look, key);
        render_summary(rollout, line, look, selected, buf);
    }
    Paragraph::new(errors_line(&state.errors, look)).render(errors, buf);
}
