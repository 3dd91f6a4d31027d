//! The etcd pane: the quorum line ("3 members, 2 healthy, quorum 2, can
//! lose 0"), one row per member (leader `*`, learner, health as a word, DB
//! size and in use, raft term and index, errors) and the alarms.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::Look;
use super::table::{DataTable, pane_block};
use crate::app::prepared;
use crate::app::screen::TableKind;
use crate::app::state::AppState;
use crate::fleet::summary::etcd_line;
use crate::tui::Role;

pub struct EtcdPane<'a> {
    state: &'a AppState,
    look: &'a Look,
    active: bool,
}

impl<'a> EtcdPane<'a> {
    pub fn new(state: &'a AppState, look: &'a Look, active: bool) -> EtcdPane<'a> {
        EtcdPane {
            state,
            look,
            active,
        }
    }

    fn quorum(&self) -> Line<'static> {
        let s = &self.look.styles;
        let g = &self.look.glyphs;
        let Some(live) = self.state.current_live().filter(|l| l.etcd_at.is_some()) else {
            return Line::from(Span::styled("etcd: no answer yet", s.get(Role::Muted)));
        };
        let q = live.status.etcd.quorum;
        let (glyph, role) = if q.members == 0 || !q.has_quorum() {
            (g.error, Role::Error)
        } else if q.healthy < q.members || (q.members > 1 && q.tolerates == 0) {
            (g.warn, Role::Warn)
        } else {
            (g.ok, Role::Ok)
        };
        Line::from(Span::styled(
            format!("{glyph} {}", etcd_line(&live.status.etcd)),
            s.get(role),
        ))
    }

    /// Member errors (their column shows only on a wide pane).
    fn errors(&self) -> Option<Line<'static>> {
        let s = &self.look.styles;
        let g = &self.look.glyphs;
        let live = self.state.current_live()?;
        let errors: Vec<String> = live
            .status
            .etcd
            .members
            .iter()
            .flat_map(|m| m.errors.iter().map(move |e| format!("{}: {e}", m.hostname)))
            .collect();
        if errors.is_empty() {
            return None;
        }
        Some(Line::from(Span::styled(
            format!("{} errors: {}", g.error, errors.join("; ")),
            s.get(Role::Error),
        )))
    }

    fn alarms(&self) -> Line<'static> {
        let s = &self.look.styles;
        let g = &self.look.glyphs;
        let alarms = self
            .state
            .current_live()
            .map(|l| l.status.etcd.alarms.clone())
            .unwrap_or_default();
        if alarms.is_empty() {
            return Line::from(Span::styled("alarms: none", s.get(Role::Muted)));
        }
        let text: Vec<String> = alarms
            .iter()
            .map(|a| {
                format!(
                    "{} on {}",
                    a.alarm,
                    a.hostname.as_deref().unwrap_or(&a.member_id)
                )
            })
            .collect();
        Line::from(Span::styled(
            format!("{} alarms: {}", g.error, text.join(", ")),
            s.get(Role::Error),
        ))
    }
}

impl Widget for &EtcdPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let data = prepared::table(self.state, TableKind::Etcd);
        let table = DataTable {
            data: &data,
            view: &self.state.tables.etcd,
            look: self.look,
            title: "etcd",
            active: self.active,
            empty: "No etcd member known yet.",
        };
        let block = pane_block(self.look, table.title_spans(), self.active);
        let inner = block.inner(area);
        block.render(area, buf);
        let errors = self.errors();
        let [quorum, rows, errors_area, alarms] = inner.layout(&Layout::vertical([
            Constraint::Length(1),
            Constraint::Fill(1),
            Constraint::Length(u16::from(errors.is_some()) * 2),
            Constraint::Length(1),
        ]));
        Paragraph::new(self.quorum()).render(quorum, buf);
        table.render_rows(rows, buf);
        if let Some(line) = errors {
            Paragraph::new(line)
                .wrap(ratatui::widgets::Wrap { trim: true })
                .render(errors_area, buf);
        }
        Paragraph::new(self.alarms()).render(alarms, buf);
    }
}
