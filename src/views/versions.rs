//! The versions pane: Talos, kubelet and control-plane versions per node,
//! the skew warnings, and the upgrade targets valid from here, all from the
//! one built-in support matrix in `crate::versions`.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::Look;
use super::table::DataTable;
use crate::app::prepared;
use crate::app::screen::TableKind;
use crate::app::state::AppState;
use crate::tui::Role;
use crate::versions::{Severity, Version, supported_kubernetes_range};

/// `v1.11.4, v1.11.5, v1.12.1`, or "none".
fn list(versions: &[Version]) -> String {
    if versions.is_empty() {
        return "none".to_string();
    }
    versions
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Skew warnings, then the targets and the matrix rows behind them.
fn findings(state: &AppState, look: &Look) -> Vec<Line<'static>> {
    let s = &look.styles;
    let g = &look.glyphs;
    let Some(live) = state.current_live().filter(|l| l.has_data()) else {
        return Vec::new();
    };
    let findings = prepared::version_findings(state, live);
    let mut lines = Vec::new();
    let warnings = &findings.warnings;
    let mut rules: Vec<_> = warnings.iter().map(|w| w.rule).collect();
    rules.sort();
    rules.dedup();
    if warnings.is_empty() {
        lines.push(Line::from(Span::styled(
            format!("{} no version skew", g.ok),
            s.get(Role::Ok),
        )));
    }
    for w in warnings {
        let (glyph, role) = match w.severity {
            Severity::Warn => (g.warn, Role::Warn),
            Severity::Error => (g.error, Role::Error),
        };
        lines.push(Line::from(Span::styled(
            format!("{glyph} {}", w.message),
            s.get(role),
        )));
    }
    let label = |text: &str| Span::styled(text.to_string(), s.get(Role::Muted));
    lines.push(Line::from(vec![
        label("Talos upgrade targets: "),
        Span::styled(list(&findings.talos_targets), s.get(Role::Text)),
    ]));
    let kube_targets = match &findings.kubernetes_targets {
        Some(targets) => list(targets),
        None => g.none.to_string(),
    };
    lines.push(Line::from(vec![
        label("Kubernetes upgrade targets: "),
        Span::styled(kube_targets, s.get(Role::Text)),
    ]));
    for minor in findings.talos_minors.iter().copied() {
        let text = match supported_kubernetes_range(minor) {
            Some(range) => format!("Talos {minor} runs Kubernetes {range}"),
            None => format!("Talos {minor} is not in the built-in support matrix"),
        };
        lines.push(Line::from(label(&text)));
    }
    // Why each warning matters, last: it fills what room is left.
    for rule in rules {
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            format!("Why: {}", rule.title()),
            s.get(Role::Title),
        )));
        lines.push(Line::from(Span::styled(rule.explain(), s.get(Role::Muted))));
    }
    lines
}

/// Draws the versions pane into `area`, with the keys when `active`.
pub fn render(state: &AppState, look: &Look, active: bool, area: Rect, buf: &mut Buffer) {
    let table = DataTable::pane(state, TableKind::Versions, look, active);
    let inner = table.frame(area, buf, active);
    let findings = findings(state, look);
    let want = u16::try_from(findings.len()).unwrap_or(u16::MAX);
    let rows_needed = u16::try_from(table.data.rows.len()).unwrap_or(u16::MAX) + 1;
    // The table gets its rows first; findings get the rest (at least 3).
    let table_height = rows_needed.min(inner.height.saturating_sub(want.min(3)));
    let [rows, _, notes] = inner.layout(&Layout::vertical([
        Constraint::Length(table_height),
        Constraint::Length(1),
        Constraint::Fill(1),
    ]));
    table.render_rows(rows, buf);
    Paragraph::new(findings)
        .wrap(Wrap { trim: true })
        .render(notes, buf);
}
