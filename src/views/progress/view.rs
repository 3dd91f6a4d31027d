//! The progress screen's view of the operation run from this console: what it counts and checks
//! (a scale's Machines and etcd) and what it waits for, what runs and whether it still does
//! (elapsed against its timeout), its steps done of how many, the question it waits on, the
//! action it offers (a failed VM's terminate), how it ended, each step's state and elapsed
//! time, each subject's state (node, member, Machine), then its lines, each starting with its
//! time, wrapped to be read whole.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Padding, Paragraph, Widget, Wrap};

use super::ProgressScroll;
use crate::app::help::wrap_words;
use crate::app::scroll::Scroll;
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col};
use crate::operation::progress::{Check, OperationProgress, StepState, Tally};
use crate::printable::line as printable;
use crate::tui::{Look, Role};
use crate::views::fit;
use crate::views::progress_parts::{StepTable, render_scrolled, render_step_pane};
use crate::views::table::titled;

/// Subject rows shown at most; the lines say the rest.
const MAX_SUBJECT_ROWS: usize = 5;

static STEP_COLUMNS: &[Column] = &[
    col("STEP", Width::Content),
    col("STATE", Width::Content),
    col("ELAPSED", Width::Content),
    col("DETAIL", Width::Fill(1)),
];

pub struct ProgressView<'a> {
    pub progress: Option<&'a OperationProgress>,
    /// The console's clock (seconds since the Unix epoch), when known.
    pub clock: Option<u64>,
    pub look: &'a Look,
    /// Where the operator scrolled its steps and lines; none follows what runs.
    pub scroll: ProgressScroll,
}

impl ProgressView<'_> {
    /// `: running (elapsed 1m05s, times out after 15m00s)`, or how it ended.
    fn status(&self, p: &OperationProgress) -> (String, Role) {
        let elapsed = p
            .elapsed(self.clock)
            .map_or(String::new(), |e| format!(" ({e})"));
        match &p.outcome {
            None if p.cancelling => (format!(": cancelling after this step{elapsed}"), Role::Warn),
            None if p.paused => (format!(": PAUSED; r resumes{elapsed}"), Role::Warn),
            None => (format!(": running{elapsed}"), Role::Accent),
            Some(_) if p.resumable.is_some() => (": interrupted; r resumes".into(), Role::Warn),
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

    fn step_rows(&self, p: &OperationProgress) -> Vec<TableRow> {
        p.steps
            .iter()
            .enumerate()
            .map(|(i, row)| {
                let tone = match row.state {
                    StepState::Pending | StepState::Skipped(_) => Tone::Muted,
                    StepState::Running(_) => Tone::Warn,
                    StepState::Done(_) => Tone::Ok,
                    StepState::Failed(_) => Tone::Error,
                };
                TableRow {
                    key: i.to_string(),
                    cells: vec![
                        TableCell::plain(printable(&row.label)),
                        TableCell::new(row.state.word(), tone),
                        TableCell::maybe(p.step_elapsed(row, self.clock).as_deref()),
                        TableCell::plain(printable(row.state.detail())),
                    ],
                }
            })
            .collect()
    }

    /// The head: what runs and its status, the steps done, the question it waits on (with
    /// its keys), how it ended.
    fn head(&self, p: &OperationProgress, width: usize) -> Vec<Line<'static>> {
        let look = self.look;
        let s = &look.styles;
        let (status, role) = self.status(p);
        // What runs, its words cut to leave the status whole.
        let what = fit(
            &p.headline,
            width.saturating_sub(status.len()),
            look.glyphs.ellipsis,
        );
        let mut head = vec![Line::from(vec![
            Span::styled(what, s.get(Role::Text)),
            Span::styled(status, s.get(role)),
        ])];
        if !p.steps.is_empty() {
            let (done, total) = (p.steps_done(), p.steps.len());
            let each = p.step_timeout.map_or(String::new(), |bound| {
                let bound = crate::clock::short_duration(bound.as_secs());
                format!("; each times out after {bound}")
            });
            let label = format!(" {done} of {total} {}{each}", p.steps_word);
            // `[=====>....] 2 of 5 nodes`, ASCII in every mode.
            let bar = width.saturating_sub(label.len() + 2).clamp(4, 50);
            let filled = (bar * done).checked_div(total).unwrap_or(0).min(bar);
            head.push(Line::from(vec![
                Span::styled("[", s.get(Role::Muted)),
                Span::styled("=".repeat(filled), s.get(Role::Ok)),
                Span::styled(".".repeat(bar - filled), s.get(Role::Muted)),
                Span::styled("]", s.get(Role::Muted)),
                Span::styled(label, s.get(Role::Text)),
            ]));
        }
        if let Some(ask) = &p.asking {
            head.push(Line::from(vec![
                Span::styled(
                    format!("{} {} ", printable(&ask.about), printable(&ask.text)),
                    s.get(Role::Warn),
                ),
                Span::styled("y confirms, n refuses", s.get(Role::Key)),
            ]));
        }
        for offer in &p.offers {
            head.push(Line::from(vec![
                Span::styled(printable(&offer.subject), s.get(Role::Error)),
                Span::styled(
                    format!(" (x: {})", offer.action.describe()),
                    s.get(Role::Key),
                ),
                Span::styled(
                    format!(": {}", printable(&offer.reason)),
                    s.get(Role::Error),
                ),
            ]));
        }
        if let Some(outcome) = &p.outcome {
            let (glyph, text, role) = match outcome {
                Ok(done) => (look.glyphs.ok, done, Role::Ok),
                Err(why) => (look.glyphs.error, why, Role::Error),
            };
            head.push(Line::from(Span::styled(
                format!("{glyph} {}", printable(text)),
                s.get(role),
            )));
        }
        head
    }
}

impl Widget for &ProgressView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let look = self.look;
        let Some(p) = self.progress else {
            Paragraph::new("No operation from this console yet (a on a pane).")
                .style(look.styles.get(Role::Muted))
                .render(area, buf);
            return;
        };
        let width = usize::from(area.width.saturating_sub(2));
        let facts = p
            .tally
            .as_ref()
            .map(|t| self.facts(t, &p.checks, p.waiting.as_deref()));
        let facts_rows = facts.as_ref().map_or(0, |f| f.len() as u16 + 2);
        let head = self.head(p, width);
        let head_rows: usize = head
            .iter()
            .map(|l| l.width().div_ceil(width.max(1)).clamp(1, 3))
            .sum();
        let subjects = ProgressView::subject_lines(p);
        let subject_rows = match subjects.len().min(MAX_SUBJECT_ROWS) {
            0 => 0,
            n => n as u16 + 2,
        };
        // The steps take what they need, short of a third of the rest (five rows at least)
        // kept for the lines: both lists scroll.
        let rest = area
            .height
            .saturating_sub(facts_rows + head_rows as u16 + subject_rows);
        let lines_room = (rest / 3).max(5);
        let step_rows = match p.steps.len() {
            0 => 0,
            n => (n as u16 + 3).min(rest.saturating_sub(lines_room)),
        };
        let [facts_area, head_area, steps_area, subjects_area, log_area] =
            area.layout(&Layout::vertical([
                Constraint::Length(facts_rows),
                Constraint::Length(head_rows as u16),
                Constraint::Length(step_rows),
                Constraint::Length(subject_rows),
                Constraint::Min(3),
            ]));
        if let (Some(facts), Some(tally)) = (facts, &p.tally) {
            let title = format!(" {} ", printable(&tally.label));
            Paragraph::new(facts).render(titled(look, title, false, facts_area, buf), buf);
        }
        Paragraph::new(head)
            .block(Block::new().padding(Padding::horizontal(1)))
            .wrap(Wrap { trim: true })
            .render(head_area, buf);
        let on_steps = !self.scroll.on_lines;
        if step_rows > 0 {
            let len = p.steps.len();
            let selected = self.scroll.steps.at(len, p.current_step());
            let table = StepTable {
                columns: STEP_COLUMNS,
                rows: self.step_rows(p),
                total: len,
                selected: Some(selected.to_string()),
                // The followed step stays in view; the selection shows once scrolled.
                active: on_steps && self.scroll.steps.is_set(),
                empty: "No step yet.",
            };
            let title = format!(" {} ", printable(&p.steps_title));
            render_step_pane(look, title, on_steps, Ok(table), steps_area, buf);
        }
        if subject_rows > 0 {
            let title = format!(" {} ", p.subject_kind);
            let shown = (&Scroll::default(), false);
            render_log(look, &title, &subjects, shown, subjects_area, buf);
        }
        // The pane's frame and its padding take two cells on each side.
        let lines = wrapped(&p.lines, usize::from(log_area.width.saturating_sub(4)));
        let shown = (&self.scroll.lines, !on_steps);
        render_log(look, " Progress ", &lines, shown, log_area, buf);
    }
}

/// A framed pane titled `title` holding `log` around the operator's place in
/// it (`scroll`; the newest lines while it follows), each line cut to the
/// width; the place is marked when `active` (the pane has the move keys).
fn render_log(
    look: &Look,
    title: &str,
    log: &[String],
    (scroll, active): (&Scroll, bool),
    area: Rect,
    buf: &mut Buffer,
) {
    let s = &look.styles;
    let inner = titled(look, title.to_string(), active, area, buf);
    let lines: Vec<Line> = log
        .iter()
        .map(|l| {
            Line::from(Span::styled(
                fit(l, usize::from(inner.width), look.glyphs.ellipsis),
                s.get(Role::Text),
            ))
        })
        .collect();
    let selected = scroll.at(lines.len(), lines.len().saturating_sub(1));
    let marked = (active && scroll.is_set()).then_some(selected);
    render_scrolled(look, lines, selected, marked, inner, buf);
}

/// Each line in lines of at most `width` cells, a continuation indented by two.
fn wrapped(lines: &std::collections::VecDeque<String>, width: usize) -> Vec<String> {
    lines
        .iter()
        .flat_map(|line| {
            let words = line.split_whitespace().collect::<Vec<_>>().join(" ");
            let first = wrap_words(&words, width)
                .into_iter()
                .next()
                .unwrap_or_default();
            let rest = words[first.len()..].trim_start();
            let continued = match rest {
                "" => Vec::new(),
                rest => wrap_words(rest, width.saturating_sub(2)),
            };
            std::iter::once(first).chain(continued.into_iter().map(|p| format!("  {p}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::wrapped;

    #[test]
    fn a_long_line_keeps_every_character_with_its_first_row_full_width() {
        let path = "/tmp/state/clusters/lab.secrets.yaml.taloscope-backup-20261206T181338Z";
        let line = format!("[+1s] removed secrets bundle (backup {path})");
        let rows = wrapped(&[line.clone()].into(), 30);
        assert!(rows.iter().all(|r| r.len() <= 30), "{rows:?}");
        assert_eq!(rows[0], "[+1s] removed secrets bundle");
        assert!(rows[1..].iter().all(|r| r.starts_with("  ")), "{rows:?}");
        let joined: String = rows.concat().split_whitespace().collect();
        let expected: String = line.split_whitespace().collect();
        assert_eq!(joined, expected);
    }
}
