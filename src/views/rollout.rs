//! The progress pane of this console's rollout on the cluster in use: what
//! runs and its state, an overall gauge, each node's phase, detail and
//! elapsed time, the outcome, and the tail of the event log.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Padding, Paragraph, Widget, Wrap};

use super::Look;
pub use super::progress_parts::elapsed;
use super::progress_parts::{
    StepTable, elapsed_between, gauge, head_line, render_log, render_step_pane,
};
use crate::app::rollout::{RolloutFocus, RolloutView, outcome_text};
use crate::app::state::AppState;
use crate::app::tables::{Column, TableCell, TableRow, Tone, Width, col};
use crate::rollout::{RolloutKind, RolloutOutcome, RolloutSummary, StepPhase, StepProgress};
use crate::tui::Role;

static STEP_COLUMNS: &[Column] = &[
    col("NODE", Width::Fill(1)),
    col("STEP", Width::Content),
    col("STATE", Width::Content),
    col("DETAIL", Width::Fill(1)),
    col("ELAPSED", Width::Content),
];

pub struct RolloutPane<'a> {
    state: &'a AppState,
    look: &'a Look,
}

fn phase_tone(phase: StepPhase) -> Tone {
    match phase {
        StepPhase::Done => Tone::Ok,
        StepPhase::Failed => Tone::Error,
        StepPhase::Skipped | StepPhase::Pending => Tone::Muted,
        StepPhase::Pulling
        | StepPhase::Installing
        | StepPhase::Rebooting
        | StepPhase::WaitingForReady => Tone::Warn,
    }
}

impl<'a> RolloutPane<'a> {
    pub fn new(state: &'a AppState, look: &'a Look) -> RolloutPane<'a> {
        RolloutPane { state, look }
    }

    /// Start to finish; a step still going counts to the clock, unless the
    /// rollout already ended (its clock stopped with it).
    fn step_elapsed(&self, view: &RolloutView, step: &StepProgress) -> Option<String> {
        let clock = self
            .state
            .wall_clock
            .filter(|_| view.summary.outcome.is_none());
        elapsed_between(step.started_unix, step.finished_unix, clock)
    }

    fn rows(&self, view: &RolloutView) -> Vec<TableRow> {
        view.summary
            .steps
            .iter()
            .enumerate()
            .map(|(i, step)| {
                let detail = match &step.error {
                    Some(e) => TableCell::new(e, Tone::Error),
                    None => TableCell::maybe(Some(step.detail.as_str())),
                };
                TableRow {
                    key: i.to_string(),
                    cells: vec![
                        TableCell::plain(&step.node),
                        TableCell::plain(&step.label),
                        TableCell::new(step.phase.as_str(), phase_tone(step.phase)),
                        detail,
                        TableCell::maybe(self.step_elapsed(view, step).as_deref()),
                    ],
                }
            })
            .collect()
    }

    /// `running`, `PAUSED`, `pausing after this node`, or how it ended.
    fn status(&self, view: &RolloutView) -> (String, Role) {
        match &view.summary.outcome {
            Some(RolloutOutcome::Completed) => ("completed".into(), Role::Ok),
            Some(RolloutOutcome::Aborted) => ("aborted".into(), Role::Warn),
            Some(RolloutOutcome::Halted(_)) => ("HALTED".into(), Role::Error),
            None if view.resumable => ("stopped; r resumes".into(), Role::Warn),
            None if view.abort_requested => ("aborting after this node".into(), Role::Warn),
            // The runner pauses between nodes: PAUSED only once none is in progress.
            None => match view.pausing_after() {
                Some(node) => (format!("pausing after {node}"), Role::Warn),
                None if view.summary.paused => ("PAUSED; r resumes".into(), Role::Warn),
                None if view.pause_requested => ("pausing".into(), Role::Warn),
                None => ("running".into(), Role::Accent),
            },
        }
    }

    /// `[=====>....] 2 of 5 nodes` (17 steps of a Kubernetes upgrade),
    /// ASCII in every mode.
    fn gauge(&self, view: &RolloutView, width: usize) -> Line<'static> {
        let total = view.summary.steps.len();
        let done = view.summary.finished_steps();
        let steps = steps_word(&view.summary);
        let label = format!(" {done} of {total} {steps} done or skipped");
        gauge(self.look, done, total, label, width)
    }

    fn outcome(&self, view: &RolloutView) -> Option<Line<'static>> {
        let s = &self.look.styles;
        let g = &self.look.glyphs;
        let outcome = view.summary.outcome.as_ref()?;
        let (glyph, role) = match outcome {
            RolloutOutcome::Completed => (g.ok, Role::Ok),
            RolloutOutcome::Aborted => (g.warn, Role::Warn),
            RolloutOutcome::Halted(_) => (g.error, Role::Error),
        };
        Some(Line::from(Span::styled(
            format!("{glyph} {}", outcome_text(outcome)),
            s.get(role),
        )))
    }
}

impl Widget for &RolloutPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let cluster = self.state.current.clone().unwrap_or_default();
        let Some(view) = self.state.rollouts.get(&cluster) else {
            Paragraph::new(format!(
                "No rollout of {cluster} from this console. u plans one."
            ))
            .style(s.get(Role::Muted))
            .render(area, buf);
            return;
        };
        let (status, role) = self.status(view);
        let holder = if view.summary.holder.is_empty() {
            String::new()
        } else {
            format!(" by {}", view.summary.holder)
        };
        let width = usize::from(area.width.saturating_sub(2));
        let what = format!(
            "{} of {cluster} to {}{holder}: ",
            capitalised(view.summary.kind.describe()),
            view.summary.target
        );
        let head = head_line(self.look, &what, status, role, width);
        let mut top = vec![head, self.gauge(view, width)];
        // A halt's reason (verbatim from the server) gets up to three lines.
        let mut top_rows = 2;
        if let Some(outcome) = self.outcome(view) {
            top_rows += outcome.width().div_ceil(width.max(1)).clamp(1, 3);
            top.push(outcome);
        }
        // Both lists scroll: the steps take what they need, short of a
        // third of the room (five rows at least) kept for the events.
        let rest = area.height.saturating_sub(top_rows as u16);
        let log_rows = (rest / 3).max(5);
        let steps = (view.summary.steps.len() as u16 + 3).min(rest.saturating_sub(log_rows));
        let [top_area, steps_area, log_area] = area.layout(&Layout::vertical([
            Constraint::Length(top_rows as u16),
            Constraint::Length(steps),
            Constraint::Fill(1),
        ]));
        Paragraph::new(top)
            .block(Block::new().padding(Padding::horizontal(1)))
            .wrap(Wrap { trim: true })
            .render(top_area, buf);

        let len = view.summary.steps.len();
        let on_steps = view.focus == RolloutFocus::Steps;
        let selected = view.steps_scroll.at(len, view.followed_step());
        let table = StepTable {
            columns: STEP_COLUMNS,
            rows: self.rows(view),
            total: len,
            selected: Some(selected.to_string()),
            active: on_steps && (view.summary.outcome.is_none() || view.steps_scroll.is_set()),
            empty: "The runner has not reported its steps yet.",
        };
        let title = format!(" {} ", capitalised(steps_word(&view.summary)));
        render_step_pane(self.look, title, on_steps, Ok(table), steps_area, buf);
        render_log(
            self.look,
            " Events ",
            &view.log,
            (&view.log_scroll, !on_steps),
            log_area,
            buf,
        );
    }
}

/// What the steps of a rollout are: an in-place Talos upgrade's are nodes; the CAPI way's are
/// the objects whose Machines the providers replace (`Kind/name`: no node's name has a `/`),
/// so "2 of 2 nodes" would miscount a cluster of five.
fn steps_word(summary: &RolloutSummary) -> &'static str {
    let objects = summary.steps.iter().any(|s| s.node.contains('/'));
    match summary.kind {
        RolloutKind::TalosUpgrade if !objects => "nodes",
        _ => "steps",
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
