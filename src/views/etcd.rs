//! The etcd pane: the quorum line ("3 members, 2 healthy, quorum 2, can
//! lose 0"), one row per member (leader `*`, learner, health as a word, DB
//! size and in use, raft term and index, errors) and the alarms.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::Look;
use super::table::DataTable;
use crate::app::screen::TableKind;
use crate::app::state::AppState;
use crate::fleet::EtcdReport;
use crate::fleet::summary::etcd_line;
use crate::tui::Role;

fn quorum(state: &AppState, look: &Look) -> Line<'static> {
    let s = &look.styles;
    let g = &look.glyphs;
    let Some(live) = state.current_live().filter(|l| l.etcd_at.is_some()) else {
        return Line::from(Span::styled("etcd: no answer yet", s.get(Role::Muted)));
    };
    let q = live.status.etcd.quorum;
    let (glyph, role) = if !q.has_quorum() {
        (g.error, Role::Error)
    } else if q.at_risk() {
        (g.warn, Role::Warn)
    } else {
        (g.ok, Role::Ok)
    };
    let text = format!("{glyph} {}", etcd_line(&live.status.etcd));
    Line::from(Span::styled(text, s.get(role)))
}

/// Member errors (their column shows only on a wide pane).
fn errors(etcd: &EtcdReport, look: &Look) -> Option<Line<'static>> {
    let errors: Vec<String> = (etcd.members.iter())
        .flat_map(|m| m.errors.iter().map(move |e| format!("{}: {e}", m.hostname)))
        .collect();
    if errors.is_empty() {
        return None;
    }
    let text = format!("{} errors: {}", look.glyphs.error, errors.join("; "));
    Some(Line::from(Span::styled(text, look.styles.get(Role::Error))))
}

fn alarms(etcd: Option<&EtcdReport>, look: &Look) -> Line<'static> {
    let s = &look.styles;
    let alarms = etcd.map_or(&[][..], |e| &e.alarms);
    if alarms.is_empty() {
        return Line::from(Span::styled("alarms: none", s.get(Role::Muted)));
    }
    let text: Vec<String> = (alarms.iter())
        .map(|a| {
            let on = a.hostname.as_deref().unwrap_or(&a.member_id);
            format!("{} on {on}", a.alarm)
        })
        .collect();
    let text = format!("{} alarms: {}", look.glyphs.error, text.join(", "));
    Line::from(Span::styled(text, s.get(Role::Error)))
}

/// Draws the etcd pane into `area`, with the keys when `active`.
pub fn render(state: &AppState, look: &Look, active: bool, area: Rect, buf: &mut Buffer) {
    let table = DataTable::pane(state, TableKind::Etcd, look, active);
    let inner = table.frame(area, buf, active);
    let etcd = state.current_live().map(|l| &l.status.etcd);
    let errors = etcd.and_then(|e| errors(e, look));
    let [quorum_area, rows, errors_area, alarms_area] = inner.layout(&Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(u16::from(errors.is_some()) * 2),
        Constraint::Length(1),
    ]));
    Paragraph::new(quorum(state, look)).render(quorum_area, buf);
    table.render_rows(rows, buf);
    if let Some(line) = errors {
        Paragraph::new(line)
            .wrap(Wrap { trim: true })
            .render(errors_area, buf);
    }
    Paragraph::new(alarms(etcd, look)).render(alarms_area, buf);
}
