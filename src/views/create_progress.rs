//! The create run's progress: what runs and how it stands, each phase (VMs, booted,
//! configured, bootstrapped, etcd, API, nodes Ready, contexts written) with its state, detail
//! and elapsed time, the fingerprint question when one waits, and the runner's notes (VM ids,
//! fingerprints, files written; never a secret: the runner reports none).
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Padding, Paragraph, Widget, Wrap};

use super::Look;
use super::progress_parts::StepTable;
use super::progress_parts::{elapsed_between, gauge, head_line, render_log, render_step_pane};
use crate::app::create::{CreateProgress, PhaseRow};
use crate::app::scroll::Scroll;
use crate::app::state::AppState;
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col};
use crate::cluster_lifecycle::PhaseState;
use crate::tui::Role;

static PHASE_COLUMNS: &[Column] = &[
    col("PHASE", Width::Content),
    col("STATE", Width::Content),
    col("ELAPSED", Width::Content),
    col("DETAIL", Width::Fill(1)),
];

pub struct CreateProgressPane<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> CreateProgressPane<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> CreateProgressPane<'a> {
        CreateProgressPane { state, look }
    }

    fn row(&self, p: &CreateProgress, row: &PhaseRow) -> TableRow {
        let (state, tone, detail) = match &row.state {
            None => ("pending", Tone::Muted, ""),
            Some(PhaseState::Waiting(d)) => ("waiting", Tone::Warn, d.as_str()),
            Some(PhaseState::Done(d)) => ("done", Tone::Ok, d.as_str()),
            Some(PhaseState::Failed(d)) => ("FAILED", Tone::Error, d.as_str()),
        };
        let clock = self.state.wall_clock.filter(|_| p.running);
        let elapsed = elapsed_between(row.started, row.ended, clock);
        TableRow {
            key: row.phase.title().to_string(),
            cells: vec![
                TableCell::plain(row.phase.title()),
                TableCell::new(state, tone),
                TableCell::maybe(elapsed.as_deref()),
                TableCell::plain(crate::printable::line(detail)),
            ],
        }
    }

    fn status(p: &CreateProgress) -> (String, Role) {
        match &p.outcome {
            _ if p.asking.is_some() => ("waiting for you".into(), Role::Warn),
            None if p.running => ("running".into(), Role::Accent),
            None => ("not running".into(), Role::Muted),
            Some(Ok(())) => ("done".into(), Role::Ok),
            Some(Err(_)) => ("STOPPED".into(), Role::Error),
        }
    }

    /// The question when a fingerprint waits, else how it ended.
    fn banner(&self, p: &CreateProgress) -> Option<Line<'static>> {
        let s = &self.look.styles;
        if let Some(ask) = &p.asking {
            return Some(Line::from(vec![
                Span::styled(
                    format!(
                        "{} ({}) maintenance certificate fingerprint {}: is it this VM's? ",
                        ask.vm, ask.address, ask.fingerprint
                    ),
                    s.get(Role::Warn),
                ),
                Span::styled("y confirms, n refuses", s.get(Role::Key)),
            ]));
        }
        let text = match p.outcome.as_ref()? {
            Ok(()) => format!(
                "{} {} is up: its talos and kube contexts are written; the fleet shows it",
                self.look.glyphs.ok, p.cluster
            ),
            Err(e) => format!(
                "{} stopped: {}; n and Enter on the same request resume it from the journal",
                self.look.glyphs.error,
                crate::printable::line(e)
            ),
        };
        let role = if matches!(p.outcome, Some(Ok(()))) {
            Role::Ok
        } else {
            Role::Error
        };
        Some(Line::from(Span::styled(text, s.get(role))))
    }
}

impl Widget for &CreateProgressPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let Some(p) = self.state.create.progress.as_ref() else {
            Paragraph::new("No create from this console. n on the fleet opens the wizard.")
                .style(s.get(Role::Muted))
                .render(area, buf);
            return;
        };
        let width = usize::from(area.width.saturating_sub(2));
        let (status, role) = CreateProgressPane::status(p);
        let resumed = if p.resumed { " (resumed)" } else { "" };
        let what = format!("{}{resumed}: ", p.what);
        let done = p
            .phases
            .iter()
            .filter(|r| matches!(r.state, Some(PhaseState::Done(_))))
            .count();
        let total = p.phases.len();
        let mut top = vec![
            head_line(self.look, &what, status, role, width),
            gauge(
                self.look,
                done,
                total,
                format!(" {done} of {total} phases"),
                width,
            ),
        ];
        let banner = self.banner(p);
        let banner_rows = banner
            .as_ref()
            .map_or(0, |l| l.width().div_ceil(width.max(1)).clamp(1, 3));
        top.extend(banner);
        let [top_area, phases_area, notes_area] = area.layout(&Layout::vertical([
            Constraint::Length(2 + banner_rows as u16),
            Constraint::Length(total as u16 + 3),
            Constraint::Min(3),
        ]));
        Paragraph::new(top)
            .block(Block::new().padding(Padding::horizontal(1)))
            .wrap(Wrap { trim: true })
            .render(top_area, buf);
        let table = StepTable {
            columns: PHASE_COLUMNS,
            rows: p.phases.iter().map(|r| self.row(p, r)).collect(),
            total,
            selected: None,
            active: false,
            empty: "No phase yet.",
        };
        render_step_pane(
            self.look,
            format!(" Create of {} ", p.cluster),
            true,
            Ok(table),
            phases_area,
            buf,
        );
        render_log(
            self.look,
            " Notes ",
            &p.notes,
            (&Scroll::default(), false),
            notes_area,
            buf,
        );
    }
}
