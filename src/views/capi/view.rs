//! The CAPI screen drawn: the tree grouped like `clusterctl describe cluster`, each row's
//! conditions that need attention under it, the selection whose conditions Enter opens, and
//! the CAPI doctor's findings (stuck states) with the key that fixes them.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

use super::CapiScreen;
use crate::app::capi_doctor::{findings_of, fix_choices};
use crate::app::screens::Shared;
use crate::capi::{TreeRow, condition_age, condition_text};
use crate::capi_doctor::Finding;
use crate::fleet::summary::age_text;
use crate::tui::Role;
use crate::views::table::titled;
use crate::views::{Look, fit, fit_apart, shared_prefixes};

/// The most lines the doctor's findings take under the tree.
const MAX_FINDING_LINES: usize = 3;

/// A column after NAME: its header and the row's cell.
type Column = (&'static str, fn(&TreeRow) -> &str);

/// The columns after NAME; NODE, PHASE and VERSION go first when narrow.
const COLUMNS: [Column; 7] = [
    ("REPLICAS", |r| &r.replicas),
    ("READY", |r| &r.ready),
    ("UP-TO-DATE", |r| &r.up_to_date),
    ("AVAILABLE", |r| &r.available),
    ("VERSION", |r| &r.version),
    ("PHASE", |r| &r.phase),
    ("NODE", |r| &r.node),
];

/// One line on screen: a row of the tree, or one of its conditions.
enum Shown<'r> {
    Row(usize, &'r TreeRow),
    Condition(&'r TreeRow, usize),
}

/// Tree guides in ASCII when the glyphs are.
fn ascii(look: &Look) -> bool {
    look.glyphs == crate::tui::Glyphs::ASCII
}

/// The columns that fit `width` beside NAME (at least `name_min` wide), in order.
fn columns_that_fit(rows: &[TreeRow], width: usize, name_min: usize) -> Vec<(usize, usize)> {
    let need = |i: usize| -> usize {
        let (head, cell) = COLUMNS[i];
        rows.iter()
            .map(|r| cell(r).width())
            .max()
            .unwrap_or(0)
            .max(head.width())
    };
    let mut kept: Vec<usize> = (0..COLUMNS.len()).collect();
    let total = |kept: &[usize]| kept.iter().map(|&i| need(i) + 2).sum::<usize>();
    // Dropped first: NODE, then PHASE, then VERSION.
    for drop in [6, 5, 4] {
        if total(&kept) + name_min <= width {
            break;
        }
        kept.retain(|&i| i != drop);
    }
    kept.into_iter().map(|i| (i, need(i))).collect()
}

/// One object's line; `shared` is how much of its name it shares with the most similar
/// other object's, which a cut drops first (three Machines told apart at 80 columns).
fn row_line(
    look: &Look,
    row: &TreeRow,
    columns: &[(usize, usize)],
    (name_width, shared): (usize, usize),
    selected: bool,
) -> Line<'static> {
    let g = &look.glyphs;
    // The tree's guide and the object's kind always show; its name is cut after them.
    let guide = row.guide(ascii(look));
    let kind = row.object.split_once('/').map_or("", |(kind, _)| kind);
    let kept = if kind.is_empty() { 0 } else { kind.len() + 1 };
    let room = name_width.saturating_sub(guide.width());
    let object = if kept > 0 && kept + 4 <= room {
        let name = fit_apart(
            &row.object[kept..],
            room - kept,
            g.ellipsis,
            shared.saturating_sub(kept),
        );
        format!("{kind}/{name}")
    } else {
        fit_apart(&row.object, room, g.ellipsis, shared)
    };
    let name = format!("{guide}{object}");
    let mut text = format!("{name:<name_width$}");
    for &(i, w) in columns {
        text.push_str(&format!("  {:<w$}", COLUMNS[i].1(row)));
    }
    let warn = row.attention().next().is_some();
    let style = match (selected, warn) {
        (true, _) => look.styles.get(Role::Selection),
        (false, true) => look.styles.get(Role::Warn),
        (false, false) => look.styles.get(Role::Text),
    };
    Line::from(Span::styled(crate::printable::line(&text), style))
}

fn condition_line(
    now: u64,
    look: &Look,
    row: &TreeRow,
    index: usize,
    width: usize,
) -> Line<'static> {
    let Some(c) = row.attention().nth(index) else {
        return Line::default();
    };
    let age = condition_age(c, now)
        .filter(|_| now > 0)
        .map(|a| format!(" ({} ago)", age_text(a)))
        .unwrap_or_default();
    let text = format!(
        "{}   {} {}{age}",
        row.continuation(ascii(look)),
        look.glyphs.warn,
        condition_text(c)
    );
    Line::from(Span::styled(
        fit(&text, width, look.glyphs.ellipsis),
        look.styles.get(Role::Muted),
    ))
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
            Line::from(Span::styled(
                fit(&crate::printable::line(&text), width, look.glyphs.ellipsis),
                look.styles.get(Role::Error),
            ))
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
    let [summary, header, body, doctor, hint] = inner.layout(&Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(findings.len().min(MAX_FINDING_LINES) as u16),
        Constraint::Length(1),
    ]));
    let endpoint = if tree.endpoint.is_empty() {
        "(none yet)"
    } else {
        tree.endpoint.as_str()
    };
    Paragraph::new(Line::from(Span::styled(
        crate::printable::line(&format!(
            "phase {}  version {}  endpoint {endpoint}",
            tree.phase, tree.version
        )),
        s.get(Role::Text),
    )))
    .render(summary, buf);
    let (rows, selected) = screen.rows_and_selection(shared);
    let objects: Vec<&str> = rows.iter().map(|r| r.object.as_str()).collect();
    let prefixes = shared_prefixes(&objects);
    let width = usize::from(inner.width);
    let name_need = rows
        .iter()
        .map(|r| r.guide(ascii(look)).width() + r.object.width())
        .max()
        .unwrap_or(4);
    let columns = columns_that_fit(&rows, width, name_need.min(24));
    let rest: usize = columns.iter().map(|(_, w)| w + 2).sum();
    let name_width = name_need.min(width.saturating_sub(rest)).max(4);
    let mut head = format!("{:<name_width$}", "NAME");
    for &(i, w) in &columns {
        head.push_str(&format!("  {:<w$}", COLUMNS[i].0));
    }
    Paragraph::new(Line::from(Span::styled(head, s.get(Role::Header)))).render(header, buf);
    let shown: Vec<Shown> = rows
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            std::iter::once(Shown::Row(i, r))
                .chain((0..r.attention().count()).map(move |c| Shown::Condition(r, c)))
        })
        .collect();
    let at = shown
        .iter()
        .position(|l| matches!(l, Shown::Row(i, _) if *i == selected))
        .unwrap_or(0);
    let height = usize::from(body.height);
    let offset = (at + 1).saturating_sub(height);
    let lines: Vec<Line> = shown
        .iter()
        .skip(offset)
        .take(height)
        .map(|l| match l {
            Shown::Row(i, r) => row_line(
                look,
                r,
                &columns,
                (name_width, prefixes[*i]),
                *i == selected,
            ),
            Shown::Condition(r, c) => {
                condition_line(shared.wall_clock.unwrap_or(0), look, r, *c, width)
            }
        })
        .collect();
    Paragraph::new(lines).render(body, buf);
    Paragraph::new(finding_lines(look, &findings, width)).render(doctor, buf);
    let object = rows.get(selected).map_or("", |r| r.object.as_str());
    let fix = if fix_choices(&findings).is_empty() {
        ""
    } else {
        "  f: fix a stuck state"
    };
    Paragraph::new(Line::from(Span::styled(
        fit(
            &format!("Enter: every condition of {object}{fix}"),
            width,
            look.glyphs.ellipsis,
        ),
        s.get(Role::Muted),
    )))
    .render(hint, buf);
}
