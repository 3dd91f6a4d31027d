//! The health checklist pane: which node runs the checks and why that path, the nodes they
//! ask, the verdict with the timeout, what the server's check does on a failure, then one row
//! per check (pending, running, pass, FAIL, not run) with its elapsed time and its last error,
//! nodes named; the selected check's whole error below when opened. Scrolls to keep the
//! running (or selected) check in view.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::checklist::{CheckLine, CheckPhase, HealthScreen, seconds};
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col};
use crate::fleet::health_check::CheckPath;
use crate::tui::{Look, Role};
use crate::views::plan_parts::fitted;
use crate::views::progress_parts::StepTable;
use crate::views::table::{render_listed, titled, tone_style};

static COLUMNS: &[Column] = &[
    col("", Width::Content),
    col("PHASE", Width::Content),
    col("CHECK", Width::Content),
    col("TIME", Width::Content),
    col("LAST ERROR", Width::Fill(3)),
];

pub struct HealthPane<'a> {
    pub latest: Option<&'a HealthScreen>,
    pub look: &'a Look,
}

impl HealthPane<'_> {
    fn phase_look(&self, phase: CheckPhase) -> (&'static str, Tone) {
        let g = &self.look.glyphs;
        match phase {
            CheckPhase::Pending | CheckPhase::NotRun => (g.none, Tone::Muted),
            CheckPhase::Running => (g.warn, Tone::Warn),
            CheckPhase::Pass => (g.ok, Tone::Ok),
            CheckPhase::Fail => (g.error, Tone::Error),
        }
    }

    /// `server-side HealthCheck on cp-1 (127.10.0.1): os:reader may call it`, or the
    /// client-side path and why (wrapped: it is the one thing that says why).
    fn route_line(&self, screen: &HealthScreen) -> Line<'static> {
        let s = &self.look.styles;
        let text = match &screen.route {
            Ok(CheckPath::Server(route)) => format!(
                "server-side HealthCheck on {} ({}): {} may call it",
                route.name, route.address, route.role
            ),
            Ok(path) => path.why(),
            Err(_) => "no node asked".to_string(),
        };
        Line::from(Span::styled(
            crate::printable::line(&text),
            s.get(Role::Text),
        ))
    }

    fn nodes_line(&self, screen: &HealthScreen, width: usize) -> Line<'static> {
        let text = if screen.list.nodes.is_empty() {
            "checks ask: (not reported yet)".to_string()
        } else {
            format!("checks ask: {}", screen.list.nodes.join(", "))
        };
        fitted(self.look, &text, Role::Muted, width)
    }

    fn verdict_line(&self, screen: &HealthScreen) -> Line<'static> {
        let (phase, text) = screen.verdict();
        let (glyph, tone) = self.phase_look(phase);
        Line::from(Span::styled(
            format!("{glyph} {}", crate::printable::line(&text)),
            tone_style(self.look, tone),
        ))
    }

    /// What the server's check does when one fails, and what is left to run.
    fn server_line(&self, screen: &HealthScreen) -> Option<Line<'static>> {
        if !screen.server_side() {
            return None;
        }
        let s = &self.look.styles;
        let not_run = screen.not_run();
        let (text, role) = if not_run > 0 {
            (
                format!(
                    "the server's HealthCheck stops at its first failing check: {not_run} \
                     after it not run; c runs the client-side checks"
                ),
                Role::Warn,
            )
        } else {
            (
                "the server runs the checks in order and stops at the first that fails".to_string(),
                Role::Muted,
            )
        };
        Some(Line::from(Span::styled(text, s.get(role))))
    }

    /// One check's row: its phase, name and elapsed time in the phase's tone, its last error.
    fn check_row(&self, index: usize, line: &CheckLine) -> TableRow {
        let (glyph, tone) = self.phase_look(line.phase);
        let elapsed = line.elapsed.map(seconds).unwrap_or_default();
        let message = crate::printable::line(&line.message);
        TableRow {
            key: index.to_string(),
            cells: vec![
                TableCell::new(glyph, tone),
                TableCell::new(line.phase.word(), tone),
                TableCell::new(&line.name, tone),
                TableCell::new(elapsed, tone),
                TableCell::new(message, Tone::Muted),
            ],
        }
    }
}

impl Widget for &HealthPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let title = match self.latest {
            Some(h) => format!(" health checks: {}, run {} ", h.cluster, h.run),
            None => " health checks ".to_string(),
        };
        let inner = titled(self.look, title, true, area, buf);
        let Some(screen) = self.latest else {
            Paragraph::new(Span::styled("No health check run yet.", s.get(Role::Muted)))
                .render(inner, buf);
            return;
        };
        let width = usize::from(inner.width);
        // The route, verdict and server lines wrap onto a second row when they are wider.
        let rows_of = |line: &Line| if line.width() > width { 2 } else { 1 };
        let verdict_line = self.verdict_line(screen);
        let route_line = self.route_line(screen);
        let server_line = self.server_line(screen);
        let server_rows = server_line.as_ref().map_or(0, rows_of);
        let lines = screen.lines();
        let opened = screen.focused_error().filter(|_| screen.opened);
        let error_rows = match opened {
            Some(_) => (inner.height / 2).max(3),
            None => 0,
        };
        let [route, nodes, verdict, server, rows, error] = inner.layout(&Layout::vertical([
            Constraint::Length(rows_of(&route_line)),
            Constraint::Length(1),
            Constraint::Length(rows_of(&verdict_line)),
            Constraint::Length(server_rows),
            Constraint::Fill(1),
            Constraint::Length(error_rows),
        ]));
        Paragraph::new(self.nodes_line(screen, width)).render(nodes, buf);
        let wrapped = [(route_line, route), (verdict_line, verdict)];
        for (line, area) in wrapped.into_iter().chain(server_line.map(|l| (l, server))) {
            Paragraph::new(line)
                .wrap(Wrap { trim: true })
                .render(area, buf);
        }
        if let Some(line) = &opened {
            self.render_error(line, error, buf);
        }
        // Keep the selected check, else the last one reached (and one after it) in view.
        let reached = lines
            .iter()
            .rposition(|l| !matches!(l.phase, CheckPhase::Pending | CheckPhase::NotRun))
            .map_or(0, |i| i + 2);
        let keep = screen.selected.map_or(reached, |i| i + 1).min(lines.len());
        let table_rows = (lines.iter().enumerate())
            .map(|(i, l)| self.check_row(i, l))
            .collect();
        let table = StepTable {
            columns: COLUMNS,
            rows: table_rows,
            total: lines.len(),
            selected: Some(keep.saturating_sub(1).to_string()),
            active: screen.selected.is_some(),
            empty: "No check listed yet.",
        };
        render_listed(self.look, table, &[], rows, buf);
    }
}

impl HealthPane<'_> {
    /// The opened check's whole error, wrapped, in a box of its own.
    fn render_error(&self, line: &CheckLine, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let title = format!(
            " {}: {} (Esc closes) ",
            line.phase.word(),
            crate::printable::line(&line.name)
        );
        let inner = titled(self.look, title, false, area, buf);
        Paragraph::new(Span::styled(
            crate::printable::line(&line.message),
            s.get(Role::Text),
        ))
        .wrap(Wrap { trim: true })
        .render(inner, buf);
    }
}
