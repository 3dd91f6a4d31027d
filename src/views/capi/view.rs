//! The CAPI screen drawn: the tree grouped like `clusterctl describe cluster`, each row's
//! conditions that need attention under it, the selection whose conditions Enter opens, and
//! the CAPI doctor's findings (stuck states) with the key that fixes them.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::CapiScreen;
use crate::app::screens::Shared;
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col, wide};
use crate::capi::TreeRow;
use crate::capi_doctor::{Finding, findings_of};
use crate::tui::Role;
use crate::views::Look;
use crate::views::plan_parts::fitted;
use crate::views::progress_parts::StepTable;
use crate::views::table::{render_listed, titled};

/// The most lines the doctor's findings take under the tree.
const MAX_FINDING_LINES: usize = 3;

/// The tree's columns, as `clusterctl describe cluster` has them; PHASE and NODE only when wide.
static COLUMNS: &[Column] = &[
    col("NAME", Width::Fill(1)).names(),
    col("REPLICAS", Width::Content),
    col("READY", Width::Content),
    col("UP-TO-DATE", Width::Content),
    col("AVAILABLE", Width::Content),
    col("VERSION", Width::Content),
    wide("PHASE", Width::Content),
    wide("NODE", Width::Fill(1)),
];

/// Tree guides in ASCII when the glyphs are.
fn ascii(look: &Look) -> bool {
    look.glyphs == crate::tui::Glyphs::ASCII
}

/// One object's row: its name after the tree's guide, in the warning tone while one of its
/// conditions needs attention.
fn tree_row(look: &Look, row: &TreeRow) -> TableRow {
    let tone = match row.attention().next() {
        Some(_) => Tone::Warn,
        None => Tone::Plain,
    };
    // `capi status`'s cells, the version before the phase: the phase shows only when wide.
    let mut cells = row.cells(ascii(look));
    cells.swap(5, 6);
    TableRow {
        key: row.object.clone(),
        cells: cells.into_iter().map(|t| TableCell::new(t, tone)).collect(),
    }
}

/// The lines under an object's row: each of its conditions that needs attention, with its age.
fn condition_lines(now: u64, look: &Look, row: &TreeRow, width: usize) -> Vec<Line<'static>> {
    let lines = row.attention_lines(now, ascii(look), look.glyphs.warn);
    (lines.into_iter())
        .map(|text| fitted(look, &text, Role::Muted, width))
        .collect()
}

/// The doctor's findings, one line each: what is stuck, and whether `f` fixes it.
fn finding_lines(look: &Look, findings: &[Finding], width: usize) -> Vec<Line<'static>> {
    findings
        .iter()
        .take(MAX_FINDING_LINES)
        .map(|f| {
            let fix = if f.fix.is_some() {
                "f: fix"
            } else {
                "no automatic fix"
            };
            let text = format!("{} {} ({fix})", look.glyphs.warn, f.summary);
            fitted(look, &crate::printable::line(&text), Role::Error, width)
        })
        .collect()
}

/// Draws the CAPI screen of the cluster in use into `area`.
pub(super) fn render(
    screen: &CapiScreen,
    shared: &Shared,
    look: &Look,
    area: Rect,
    buf: &mut Buffer,
) {
    let s = &look.styles;
    let cluster = shared.current.unwrap_or_default();
    let Some((owner, tree)) = shared.fleet.capi.owned_tree(cluster) else {
        let inner = titled(look, " Cluster API ".into(), true, area, buf);
        let cluster = shared.current.unwrap_or("no cluster in use");
        Paragraph::new(Line::from(Span::styled(
                format!("{cluster}: no management cluster among the kube contexts owns it (read at the background interval)"),
                s.get(Role::Muted),
            )))
            .wrap(ratatui::widgets::Wrap { trim: true })
            .render(inner, buf);
        return;
    };
    let title = format!(" Cluster API: {owner} ({}) ", tree.api_version);
    let inner = titled(look, title, true, area, buf);
    let findings = findings_of(shared.fleet, cluster);
    let [summary, body, doctor, hint] = inner.layout(&Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(findings.len().min(MAX_FINDING_LINES) as u16),
        Constraint::Length(1),
    ]));
    let endpoint = tree.endpoint_text();
    Paragraph::new(Line::from(Span::styled(
        crate::printable::line(&format!(
            "phase {}  version {}  endpoint {endpoint}",
            tree.phase, tree.version
        )),
        s.get(Role::Text),
    )))
    .render(summary, buf);
    let (rows, selected) = screen.rows_and_selection(shared);
    let width = usize::from(inner.width);
    let now = shared.wall_clock.unwrap_or(0);
    let details: Vec<_> = (rows.iter())
        .map(|r| condition_lines(now, look, r, width.saturating_sub(2)))
        .collect();
    let table_rows = rows.iter().map(|r| tree_row(look, r)).collect();
    let table = StepTable {
        columns: COLUMNS,
        rows: table_rows,
        total: rows.len(),
        selected: rows.get(selected).map(|r| r.object.clone()),
        active: true,
        empty: "No objects read yet.",
    };
    render_listed(look, table, &details, body, buf);
    Paragraph::new(finding_lines(look, &findings, width)).render(doctor, buf);
    let object = rows.get(selected).map_or("", |r| r.object.as_str());
    // The footer's `f` is offered by the same reading (`CapiScreen::offers`).
    let fix = if screen.fixable {
        "  f: fix a stuck state"
    } else {
        ""
    };
    let hint_line = format!("Enter: every condition of {object}{fix}");
    Paragraph::new(fitted(look, &hint_line, Role::Muted, width)).render(hint, buf);
}
