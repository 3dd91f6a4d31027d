//! The one progress screen of an operation run from this console: what it counts and checks
//! (a scale's Machines and etcd) and what it waits for, what runs and whether it still does
//! (elapsed against its timeout), the step under way of how many, each subject's state (node,
//! member, Machine, phase), then its lines, each starting with its time, wrapped to be read whole.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Padding, Paragraph, Widget};

use super::Look;
use super::progress_parts::{gauge, head_line, render_log};
use crate::app::help::wrap_words;
use crate::app::scroll::Scroll;
use crate::app::state::AppState;
use crate::operation::progress::{Check, OperationProgress, Tally};
use crate::printable::line as printable;
use crate::tui::Role;

/// Subject rows shown at most; the lines say the rest.
const MAX_SUBJECT_ROWS: usize = 5;

pub struct ProgressView<'a> {
    state: &'a AppState,
    look: &'a Look,
}

impl<'a> ProgressView<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> ProgressView<'a> {
        ProgressView { state, look }
    }

    /// `: running (elapsed 1m05s, times out after 15m00s)`, or how it ended.
    fn status(&self, p: &OperationProgress) -> (String, Role) {
        let elapsed = p
            .elapsed(self.state.wall_clock)
            .map_or(String::new(), |e| format!(" ({e})"));
        match &p.outcome {
            None if p.cancelling => (format!(": cancelling after this step{elapsed}"), Role::Warn),
            None => (format!(": running{elapsed}"), Role::Accent),
            Some(Ok(_)) => (format!(": done{elapsed}"), Role::Ok),
            Some(Err(e)) if e.starts_with("cancelled") => {
                (format!(": cancelled{elapsed}"), Role::Warn)
            }
            Some(Err(_)) => (format!(": failed{elapsed}"), Role::Error),
        }
    }

    /// The counts, each check's verdict and what it waits for, one labelled line each.
    fn facts(&self, tally: &Tally, checks: &[Check], waiting: Option<&str>) -> Vec<Line<'static>> {
        let s = &self.look.styles;
        let label = |t: &str| Span::styled(format!("{t:<10}"), s.get(Role::Muted));
        let counts: Vec<String> = tally
            .counts
            .iter()
            .map(|(name, n)| format!("{n} {name}"))
            .collect();
        let mut lines = vec![Line::from(vec![
            label(&tally.label),
            Span::styled(
                format!("{}: {}", tally.span, counts.join(", ")),
                s.get(Role::Text),
            ),
        ])];
        for check in checks {
            let verdict = match (&check.not_read, &check.last) {
                (Some(why), _) => Span::styled(format!("not checked: {why}"), s.get(Role::Muted)),
                (None, None) => Span::styled("not read yet", s.get(Role::Muted)),
                (None, Some((passed, reason))) => Span::styled(
                    format!(
                        "healthy on {} of {} polls; last: {}",
                        check.passed,
                        check.polls,
                        printable(reason)
                    ),
                    s.get(if *passed { Role::Ok } else { Role::Error }),
                ),
            };
            lines.push(Line::from(vec![label(&check.name), verdict]));
        }
        lines.push(Line::from(vec![
            label("Waiting"),
            Span::styled(
                waiting.map_or("-".to_string(), printable),
                s.get(Role::Text),
            ),
        ]));
        lines
    }

    /// `NAME  state`, the names padded to one column.
    fn subject_lines(p: &OperationProgress) -> Vec<String> {
        let width = p.subjects.iter().map(|s| s.name.len()).max().unwrap_or(0);
        p.subjects
            .iter()
            .map(|s| printable(&format!("{:<width$}  {}", s.name, s.state)))
            .collect()
    }
}

impl Widget for &ProgressView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let look = self.look;
        let Some(p) = self.state.actions.progress.as_ref() else {
            Paragraph::new("No node or etcd action from this console yet (a on a pane).")
                .style(look.styles.get(Role::Muted))
                .render(area, buf);
            return;
        };
        let facts = p
            .tally
            .as_ref()
            .map(|t| self.facts(t, &p.checks, p.waiting.as_deref()));
        let facts_rows = facts.as_ref().map_or(0, |f| f.len() as u16 + 2);
        let step = p.step_line(self.state.wall_clock);
        let subjects = ProgressView::subject_lines(p);
        let subject_rows = match subjects.len().min(MAX_SUBJECT_ROWS) {
            0 => 0,
            n => n as u16 + 2,
        };
        let [facts_area, head_area, subjects_area, log_area] = area.layout(&Layout::vertical([
            Constraint::Length(facts_rows),
            Constraint::Length(1 + u16::from(step.is_some())),
            Constraint::Length(subject_rows),
            Constraint::Fill(1),
        ]));
        if let (Some(facts), Some(tally)) = (facts, &p.tally) {
            let title = format!(" {} ", printable(&tally.label));
            Paragraph::new(facts)
                .block(
                    Block::new()
                        .borders(Borders::ALL)
                        .border_set(look.glyphs.border)
                        .title(Span::styled(title, look.styles.get(Role::Title)))
                        .border_style(look.styles.get(Role::Border))
                        .padding(Padding::horizontal(1)),
                )
                .render(facts_area, buf);
        }
        let width = usize::from(area.width.saturating_sub(2));
        let (status, role) = self.status(p);
        let mut head = vec![head_line(look, &p.headline, status, role, width)];
        if let (Some(label), Some(at)) = (step, &p.step) {
            head.push(gauge(look, at.index, at.total, format!(" {label}"), width));
        }
        Paragraph::new(head)
            .block(Block::new().padding(Padding::horizontal(1)))
            .render(head_area, buf);
        if subject_rows > 0 {
            let title = format!(" {} ", p.subject_kind);
            let shown = (&Scroll::default(), false);
            render_log(look, &title, subjects.iter(), shown, subjects_area, buf);
        }
        let lines = wrapped(&p.lines, usize::from(log_area.width.saturating_sub(2)));
        let shown = (&Scroll::default(), false);
        render_log(look, " Progress ", lines.iter(), shown, log_area, buf);
    }
}

/// Each line in lines of at most `width` cells, a continuation indented by two.
fn wrapped(lines: &std::collections::VecDeque<String>, width: usize) -> Vec<String> {
    lines
        .iter()
        .flat_map(|line| {
            let mut parts = wrap_words(line, width.saturating_sub(2)).into_iter();
            let first = parts.next().unwrap_or_default();
            std::iter::once(first).chain(parts.map(|p| format!("  {p}")))
        })
        .collect()
}
