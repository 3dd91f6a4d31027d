//! This console's rollouts, one per cluster: the runner's [`RolloutEvent`]s
//! folded into the summary the progress pane draws, a bounded event log tail,
//! and what the operator asked (pause, abort) or may do (resume a journal).
use std::collections::VecDeque;

use super::action::Action;
use super::scroll::Scroll;
use crate::clock::Zone;
use crate::rollout::{RolloutEvent, RolloutOutcome, RolloutSummary, StepPhase};
use crate::upgrade::RolloutInProgress;

/// Lines of the event log kept per rollout; older ones are dropped.
pub const MAX_LOG_LINES: usize = 200;

/// One rollout as the progress pane shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutView {
    pub summary: RolloutSummary,
    pub log: VecDeque<String>,
    /// A runner in this console drives it.
    pub running: bool,
    /// Found in a journal at startup and not running: `r` resumes it.
    pub resumable: bool,
    /// `A` was pressed; the next key says whether to abort.
    pub confirm_abort: bool,
    /// Abort was sent; the runner stops before the next node.
    pub abort_requested: bool,
    /// Pause was sent and not yet acknowledged by the runner.
    pub pause_requested: bool,
    /// The list the move keys scroll (Tab switches).
    pub focus: RolloutFocus,
    pub steps_scroll: Scroll,
    pub log_scroll: Scroll,
}

/// The lists of the progress pane.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RolloutFocus {
    #[default]
    Steps,
    Events,
}

impl RolloutView {
    pub fn new(summary: RolloutSummary) -> RolloutView {
        RolloutView {
            summary,
            log: VecDeque::new(),
            running: false,
            resumable: false,
            confirm_abort: false,
            abort_requested: false,
            pause_requested: false,
            focus: RolloutFocus::Steps,
            steps_scroll: Scroll::default(),
            log_scroll: Scroll::default(),
        }
    }

    /// A rollout read back from its journal: shown, not running, resumable
    /// when it did not end.
    pub fn from_journal(summary: RolloutSummary) -> RolloutView {
        let mut view = RolloutView::new(summary);
        view.resumable =
            view.summary.outcome.is_none() && view.summary.first_unfinished().is_some();
        view.push_log(match view.summary.first_unfinished() {
            Some(i) if view.resumable => format!(
                "journal: stopped at node {} of {}; r resumes after the guards pass again",
                i + 1,
                view.summary.steps.len()
            ),
            _ => "journal: this rollout ended".to_string(),
        });
        view
    }

    pub fn push_log(&mut self, line: String) {
        if self.log.len() >= MAX_LOG_LINES {
            self.log.pop_front();
            self.log_scroll.dropped_front(1);
        }
        self.log.push_back(line);
    }

    /// Not ended: running, or stopped and resumable.
    pub fn unfinished(&self) -> bool {
        self.running || self.resumable
    }

    /// `Space` pauses: running, and not paused or pausing already.
    pub fn can_pause(&self) -> bool {
        self.running && !self.summary.paused && !self.pause_requested && !self.abort_requested
    }

    /// `r` resumes: paused here, or stopped in a journal.
    pub fn can_resume(&self) -> bool {
        (self.running && self.summary.paused) || self.resumable
    }

    /// `A` aborts: running and not aborting already.
    pub fn can_abort(&self) -> bool {
        self.running && !self.abort_requested
    }

    /// The node a pause waits for: the step still in progress while a pause
    /// was asked or taken (the runner pauses between nodes).
    pub fn pausing_after(&self) -> Option<&str> {
        if !(self.summary.paused || self.pause_requested) || !self.running {
            return None;
        }
        self.summary
            .steps
            .iter()
            .find(|s| !matches!(s.phase, StepPhase::Pending) && !s.phase.is_final())
            .map(|s| s.node.as_str())
    }

    /// The step being worked on (the first one not final).
    pub fn current_step(&self) -> Option<usize> {
        self.summary
            .steps
            .iter()
            .position(|s| !matches!(s.phase, StepPhase::Pending) && !s.phase.is_final())
            .or_else(|| self.summary.first_unfinished())
    }

    /// The step the list follows: the one being worked on, else the first.
    pub fn followed_step(&self) -> usize {
        self.current_step().unwrap_or(0)
    }

    /// Tab and the move keys on the progress pane: switch lists, or scroll
    /// the one in focus (`page` lines for PgUp/PgDn). False for other keys.
    pub fn scroll(&mut self, action: &Action, page: usize) -> bool {
        if matches!(action, Action::NextPane) {
            self.focus = match self.focus {
                RolloutFocus::Steps => RolloutFocus::Events,
                RolloutFocus::Events => RolloutFocus::Steps,
            };
            return true;
        }
        match self.focus {
            RolloutFocus::Steps => {
                let (len, follow) = (self.summary.steps.len(), self.followed_step());
                self.steps_scroll.apply(action, len, follow, page)
            }
            RolloutFocus::Events => {
                let len = self.log.len();
                self.log_scroll
                    .apply(action, len, len.saturating_sub(1), page)
            }
        }
    }

    /// How other checks see this rollout ("node 3 of 5").
    pub fn in_progress(&self) -> RolloutInProgress {
        RolloutInProgress {
            holder: self.summary.holder.clone(),
            node_index: self
                .current_step()
                .map_or(self.summary.steps.len(), |i| i + 1),
            node_count: self.summary.steps.len(),
        }
    }

    /// Folds one event of this rollout in; log lines start with their local
    /// time in `zone`, the outcome with `now`'s when known.
    pub fn apply(&mut self, event: RolloutEvent, zone: Zone, now: Option<u64>) {
        match event {
            RolloutEvent::Started(summary) => {
                let log = std::mem::take(&mut self.log);
                *self = RolloutView::new(summary);
                self.log = log;
                self.running = true;
            }
            RolloutEvent::Step {
                index, progress, ..
            } => {
                if let Some(step) = self.summary.steps.get_mut(index) {
                    *step = progress;
                }
            }
            RolloutEvent::Log { line, unix, .. } => {
                self.push_log(format!("{} {line}", zone.time_of_day(unix)))
            }
            RolloutEvent::Paused { .. } => {
                self.summary.paused = true;
                self.pause_requested = false;
            }
            RolloutEvent::Resumed { .. } => self.summary.paused = false,
            RolloutEvent::Finished { outcome, .. } => {
                let at = now.map(|t| format!("{} ", zone.time_of_day(t)));
                let at = at.unwrap_or_default();
                self.push_log(format!("{at}finished: {}", outcome_text(&outcome)));
                self.summary.outcome = Some(outcome);
                self.running = false;
                self.resumable = false;
                self.confirm_abort = false;
                self.pause_requested = false;
            }
        }
    }
}

/// The outcome in the operator's words.
pub fn outcome_text(outcome: &RolloutOutcome) -> String {
    match outcome {
        RolloutOutcome::Completed => "completed: every node done or skipped".to_string(),
        RolloutOutcome::Aborted => "aborted before the next node".to_string(),
        RolloutOutcome::Halted(why) => format!("halted: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollout::{RolloutKind, StepProgress};

    fn summary() -> RolloutSummary {
        RolloutSummary {
            cluster: "lab".into(),
            kind: RolloutKind::TalosUpgrade,
            target: "v1.12.0".into(),
            holder: "op@jump1".into(),
            steps: vec![
                StepProgress::pending("cp-1", "upgrade to v1.12.0"),
                StepProgress::pending("w-1", "upgrade to v1.12.0"),
            ],
            paused: false,
            outcome: None,
        }
    }

    #[test]
    fn folds_steps_log_and_outcome() {
        let mut view = RolloutView::new(summary());
        view.apply(RolloutEvent::Started(summary()), Zone::Utc, None);
        assert!(view.running);
        let mut p = StepProgress::pending("cp-1", "upgrade to v1.12.0");
        p.phase = StepPhase::Rebooting;
        view.apply(
            RolloutEvent::Step {
                cluster: "lab".into(),
                index: 0,
                progress: p,
            },
            Zone::Utc,
            None,
        );
        assert_eq!(view.summary.steps[0].phase, StepPhase::Rebooting);
        assert_eq!(view.in_progress().node_index, 1);
        // An index the summary does not have is ignored, not a panic.
        view.apply(
            RolloutEvent::Step {
                cluster: "lab".into(),
                index: 9,
                progress: StepProgress::pending("x", "y"),
            },
            Zone::Utc,
            None,
        );
        view.apply(
            RolloutEvent::Finished {
                cluster: "lab".into(),
                outcome: RolloutOutcome::Halted("cp-1 timed out".into()),
            },
            Zone::Fixed(3600),
            Some(1_796_052_057),
        );
        assert!(!view.running && !view.unfinished());
        assert_eq!(
            view.log.back().map(String::as_str),
            Some("16:20:57 finished: halted: cp-1 timed out")
        );
    }

    #[test]
    fn tab_and_the_move_keys_scroll_the_steps_and_the_events() {
        let mut view = RolloutView::new(summary());
        for i in 0..30 {
            view.push_log(format!("line {i}"));
        }
        assert!(view.scroll(&Action::MoveDown, 10));
        assert_eq!(view.steps_scroll.at(2, view.followed_step()), 1);
        assert!(view.scroll(&Action::NextPane, 10));
        assert_eq!(view.focus, RolloutFocus::Events);
        assert!(view.scroll(&Action::MoveFirst, 10));
        assert_eq!(view.log_scroll.at(30, 29), 0);
        assert!(view.scroll(&Action::MoveLast, 10));
        assert!(!view.log_scroll.is_set(), "G follows the newest line again");
        assert!(!view.scroll(&Action::PauseRollout, 10));
    }

    #[test]
    fn the_log_is_bounded() {
        let mut view = RolloutView::new(summary());
        for i in 0..MAX_LOG_LINES + 50 {
            view.apply(
                RolloutEvent::Log {
                    cluster: "lab".into(),
                    line: format!("line {i}"),
                    unix: 1_796_052_057,
                },
                Zone::Utc,
                None,
            );
        }
        assert_eq!(view.log.len(), MAX_LOG_LINES);
        assert_eq!(
            view.log.front().map(String::as_str),
            Some("15:20:57 line 50")
        );
    }

    #[test]
    fn a_journal_that_did_not_end_is_resumable() {
        let mut s = summary();
        s.steps[0].phase = StepPhase::Done;
        let view = RolloutView::from_journal(s.clone());
        assert!(view.resumable && !view.running);
        s.outcome = Some(RolloutOutcome::Completed);
        assert!(!RolloutView::from_journal(s).resumable);
    }
}
