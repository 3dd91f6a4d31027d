//! The progress of one running operation: the one vocabulary every runner's events are told
//! in ([`ProgressEvent`]) and the state they fold into ([`OperationProgress`]): its subjects,
//! its step of how many, what it waits for, its lines each stamped with the time since the
//! start, the elapsed time against its timeout, the cancel asked, and how it ended.
use std::collections::VecDeque;
use std::time::Duration;

use super::{CancelRule, OperationKind};
use crate::approval::MutatingAction;
use crate::clock::short_duration;

/// Lines kept per run; older ones are dropped.
pub const MAX_PROGRESS_LINES: usize = 500;

/// What a running operation tells, whatever it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgressEvent {
    /// A line for the operator, said as it is.
    Line(String),
    /// A subject (a node, VM, Machine or phase) reached `state`.
    Subject { name: String, state: String },
    /// Step `index` (from 0) of `total` reached `state` (an empty `label` keeps its words).
    Step {
        index: usize,
        total: usize,
        label: String,
        state: StepState,
    },
    /// One more of a count the operation keeps (a scale's Machines created, Ready...).
    Count(String),
    /// A check read on each poll (etcd during a control-plane scale): passed or not, and why.
    Check {
        name: String,
        passed: bool,
        reason: String,
    },
    /// What the operation waits for now.
    Waiting(String),
    /// The run paused between its steps (true) or went on (false).
    Paused(bool),
    /// A question about `about` the run waits on the operator to answer (`id` names the
    /// answer).
    Ask {
        id: u64,
        about: String,
        question: String,
    },
    /// A guarded action the run offers on one of its subjects (a failed VM's terminate): the
    /// progress screen asks the dispatcher for it with one key.
    Offer(Offer),
    /// How it ended: what it did, or why it did not finish.
    Finished(Result<String, String>),
}

/// A guarded action offered on a subject, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub subject: String,
    pub reason: String,
    pub action: MutatingAction,
}

/// A subject's latest state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub name: String,
    pub state: String,
}

/// Where a step stands, with its detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepState {
    Pending,
    Running(String),
    Done(String),
    Failed(String),
    /// Nothing to do (a node already on the target, or left out).
    Skipped(String),
}

impl StepState {
    pub fn word(&self) -> &'static str {
        match self {
            StepState::Pending => "pending",
            StepState::Running(_) => "running",
            StepState::Done(_) => "done",
            StepState::Failed(_) => "FAILED",
            StepState::Skipped(_) => "skipped",
        }
    }

    pub fn detail(&self) -> &str {
        match self {
            StepState::Pending => "",
            StepState::Running(d)
            | StepState::Done(d)
            | StepState::Failed(d)
            | StepState::Skipped(d) => d,
        }
    }

    fn ended(&self) -> bool {
        matches!(
            self,
            StepState::Done(_) | StepState::Failed(_) | StepState::Skipped(_)
        )
    }
}

/// One step of the list: its words, where it stands, and when (seconds since the Unix epoch)
/// it began and ended as this console saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepRow {
    pub label: String,
    pub state: StepState,
    pub started: Option<u64>,
    pub ended: Option<u64>,
}

impl StepRow {
    pub fn pending(label: &str) -> StepRow {
        StepRow {
            label: label.to_string(),
            state: StepState::Pending,
            started: None,
            ended: None,
        }
    }
}

/// A question the run waits on, and what it is about (a VM and its address).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub id: u64,
    pub about: String,
    pub text: String,
}

/// Counts an operation keeps, in the order it names them: `Machines 2 -> 3: 1 created, ...`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tally {
    /// What is counted and the span it goes over ("Machines", "2 -> 3").
    pub label: String,
    pub span: String,
    pub counts: Vec<(String, u32)>,
}

/// A check read on each poll: how often it passed, and its last verdict; or why it is not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub name: String,
    pub polls: u32,
    pub passed: u32,
    pub last: Option<(bool, String)>,
    /// Why this run does not read it ("workers do not join etcd").
    pub not_read: Option<String>,
}

impl Check {
    pub fn new(name: &str) -> Check {
        Check {
            name: name.to_string(),
            polls: 0,
            passed: 0,
            last: None,
            not_read: None,
        }
    }
}

/// The operation running (or last run) from this console, as its runner's events built it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationProgress {
    pub kind: OperationKind,
    pub cluster: String,
    /// The operation in the operator's words ("reboot node cp-2").
    pub what: String,
    /// What runs where, as the head says it ("reboot node cp-2 in prod").
    pub headline: String,
    /// What the subjects are ("Node", "Machine", "Phase"), the heading of their column.
    pub subject_kind: String,
    pub subjects: Vec<Subject>,
    /// The steps known so far (a create's phases all from the start), in order.
    pub steps: Vec<StepRow>,
    /// What the steps are ("steps", "phases") and the title of their list.
    pub steps_word: String,
    pub steps_title: String,
    pub asking: Option<Question>,
    /// Paused between its steps (a rollout's Space).
    pub paused: bool,
    pub tally: Option<Tally>,
    pub checks: Vec<Check>,
    pub waiting: Option<String>,
    /// Guarded actions offered on its subjects, one per subject, newest last.
    pub offers: Vec<Offer>,
    /// The lines, oldest first (bounded), each stamped `[+1m05s]` when the clock was known.
    pub lines: VecDeque<String>,
    /// When it started and ended (seconds since the Unix epoch, the console's clock).
    pub started: Option<u64>,
    pub ended: Option<u64>,
    /// The most it may take, when its runner bounds it (a node action's node timeout).
    pub timeout: Option<Duration>,
    /// The most each of its steps may take (a rollout's node timeout).
    pub step_timeout: Option<Duration>,
    /// Left by a run that did not end (read from its journal): the approval a resume asks for.
    pub resumable: Option<crate::approval::MutatingAction>,
    /// How a cancel stops it.
    pub cancel: CancelRule,
    /// The operator asked to cancel: the runner stops after its current step.
    pub cancelling: bool,
    /// `Ok(how it ended)` or `Err(why it did not finish)`; `None` while it runs.
    pub outcome: Option<Result<String, String>>,
}

impl OperationProgress {
    /// A run of `what` on `cluster` starting at `now`; its first line says so.
    pub fn start(
        kind: OperationKind,
        cluster: &str,
        what: &str,
        headline: String,
        cancel: CancelRule,
        now: Option<u64>,
    ) -> OperationProgress {
        let mut progress = OperationProgress {
            kind,
            cluster: cluster.to_string(),
            what: what.to_string(),
            headline,
            subject_kind: "Subjects".to_string(),
            subjects: Vec::new(),
            steps: Vec::new(),
            steps_word: "steps".to_string(),
            steps_title: "Steps".to_string(),
            asking: None,
            paused: false,
            tally: None,
            checks: Vec::new(),
            waiting: None,
            offers: Vec::new(),
            lines: VecDeque::new(),
            started: now,
            ended: None,
            timeout: None,
            step_timeout: None,
            resumable: None,
            cancel,
            cancelling: false,
            outcome: None,
        };
        progress.say(now, format!("starting: {}", progress.headline));
        progress
    }

    pub fn running(&self) -> bool {
        self.outcome.is_none()
    }

    /// Whether it is an in-place upgrade (Talos or Kubernetes), which pauses and resumes.
    pub fn is_rollout(&self) -> bool {
        matches!(
            self.kind,
            OperationKind::TalosUpgrade | OperationKind::KubernetesUpgrade
        )
    }

    /// This in-place upgrade, run by `holder`, when it has not ended (running, or left in a
    /// journal), as the plans' guards see it ("node 3 of 5").
    pub fn rollout_in_progress(&self, holder: &str) -> Option<crate::upgrade::RolloutInProgress> {
        let open = self.is_rollout() && (self.running() || self.resumable.is_some());
        open.then(|| crate::upgrade::RolloutInProgress {
            holder: holder.to_string(),
            node_index: (self.steps_done() + 1).min(self.steps.len()),
            node_count: self.steps.len(),
        })
    }

    pub fn cancellable(&self) -> bool {
        self.cancel == CancelRule::AfterStep
    }

    /// Folds one event in at `now` (the console's clock, when known).
    pub fn fold(&mut self, now: Option<u64>, event: ProgressEvent) {
        match event {
            ProgressEvent::Line(line) => self.say(now, line),
            ProgressEvent::Subject { name, state } => {
                match self.subjects.iter_mut().find(|s| s.name == name) {
                    Some(subject) => subject.state = state,
                    None => self.subjects.push(Subject { name, state }),
                }
            }
            ProgressEvent::Step {
                index,
                total,
                label,
                state,
            } => self.step(now, (index, total), label, state),
            ProgressEvent::Count(name) => {
                let tally = self.tally.get_or_insert_with(Tally::default);
                match tally.counts.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, count)) => *count += 1,
                    None => tally.counts.push((name, 1)),
                }
            }
            ProgressEvent::Check {
                name,
                passed,
                reason,
            } => self.check(now, name, passed, reason),
            ProgressEvent::Waiting(reason) => self.waiting = Some(reason),
            ProgressEvent::Paused(paused) => self.paused = paused,
            ProgressEvent::Ask {
                id,
                about,
                question,
            } => {
                self.asking = Some(Question {
                    id,
                    about,
                    text: question,
                })
            }
            ProgressEvent::Offer(offer) => {
                self.offers.retain(|o| o.subject != offer.subject);
                self.offers.push(offer);
            }
            ProgressEvent::Finished(result) => self.finish(now, result),
        }
    }

    /// Step `index` of `total` reached `state`.
    fn step(
        &mut self,
        now: Option<u64>,
        (index, total): (usize, usize),
        label: String,
        state: StepState,
    ) {
        while self.steps.len() < total.max(index + 1) {
            self.steps.push(StepRow::pending(""));
        }
        let row = &mut self.steps[index];
        if !label.is_empty() {
            row.label = label;
        }
        if !matches!(state, StepState::Pending) {
            row.started = row.started.or(now);
        }
        if state.ended() {
            row.ended = now;
        }
        row.state = state;
    }

    /// The step under way, else the first still to run, else the first: the step list follows
    /// it.
    pub fn current_step(&self) -> usize {
        let under_way = |r: &StepRow| matches!(r.state, StepState::Running(_));
        let pending = |r: &StepRow| matches!(r.state, StepState::Pending);
        let steps = &self.steps;
        steps
            .iter()
            .position(under_way)
            .or_else(|| steps.iter().position(pending))
            .unwrap_or(0)
    }

    /// Steps done (or skipped) of those known.
    pub fn steps_done(&self) -> usize {
        self.steps
            .iter()
            .filter(|r| matches!(r.state, StepState::Done(_) | StepState::Skipped(_)))
            .count()
    }

    /// How long step `row` took, or has taken so far while the run goes on.
    pub fn step_elapsed(&self, row: &StepRow, now: Option<u64>) -> Option<String> {
        let clock = now.filter(|_| self.running());
        let end = row.ended.or(clock)?;
        Some(short_duration(end.saturating_sub(row.started?)))
    }

    /// A check's poll counted; its line said only when its reason changed.
    fn check(&mut self, now: Option<u64>, name: String, passed: bool, reason: String) {
        let index = match self.checks.iter().position(|c| c.name == name) {
            Some(i) => i,
            None => {
                self.checks.push(Check::new(&name));
                self.checks.len() - 1
            }
        };
        let check = &mut self.checks[index];
        check.polls += 1;
        check.passed += u32::from(passed);
        let same = check.last.as_ref().is_some_and(|(_, r)| *r == reason);
        check.last = Some((passed, reason.clone()));
        if !same {
            self.say(now, format!("{name}: {reason}"));
        }
    }

    fn finish(&mut self, now: Option<u64>, result: Result<String, String>) {
        let line = match &result {
            Ok(done) => format!("done: {done}"),
            Err(why) if why.starts_with("cancelled") => why.clone(),
            Err(why) => format!("failed: {why}"),
        };
        self.say(now, line);
        // A step still under way ended with the run.
        let ok = result.is_ok();
        for row in self.steps.iter_mut() {
            if let StepState::Running(detail) = &row.state {
                let detail = detail.clone();
                row.state = if ok {
                    StepState::Done(detail)
                } else {
                    StepState::Failed(detail)
                };
                row.ended = now;
            }
        }
        self.ended = now;
        self.waiting = None;
        self.asking = None;
        self.paused = false;
        self.outcome = Some(result);
    }

    /// The operator asked to cancel: said once, as what the runner will do.
    pub fn ask_cancel(&mut self, now: Option<u64>) {
        if !self.cancelling {
            self.cancelling = true;
            self.say(
                now,
                "cancel asked: it stops after the current step, never in the middle of one".into(),
            );
        }
    }

    /// The run a journal left starts again from its journal at `now`: running, no longer
    /// resumable, its clock from `now`.
    pub fn resume(&mut self, now: Option<u64>) {
        self.resumable = None;
        self.outcome = None;
        self.started = now;
        self.ended = None;
        self.say(now, "resuming from the journal".into());
    }

    /// The first tick's clock for a run started before the console knew the time.
    pub fn clock_known(&mut self, now: u64) {
        if self.running() && self.started.is_none() {
            self.started = Some(now);
        }
    }

    /// Adds a line, stamped with the time since the start when `now` is known:
    /// `[+1m05s] cp-2: reboot requested`.
    pub fn say(&mut self, now: Option<u64>, line: String) {
        let line = match (self.started, now) {
            (Some(start), Some(now)) => {
                format!("[+{}] {line}", short_duration(now.saturating_sub(start)))
            }
            _ => line,
        };
        if self.lines.len() >= MAX_PROGRESS_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(crate::printable::line(&line));
    }

    /// "elapsed 1m05s, times out after 15m00s" (or without its bound), while it runs and
    /// once it ended; the bound of each step is the step list's to say.
    pub fn elapsed(&self, now: Option<u64>) -> Option<String> {
        let elapsed = short_duration(self.ended.or(now)?.saturating_sub(self.started?));
        Some(match self.timeout {
            Some(bound) => format!(
                "elapsed {elapsed}, times out after {}",
                short_duration(bound.as_secs())
            ),
            None => format!("elapsed {elapsed}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started() -> OperationProgress {
        let mut p = OperationProgress::start(
            OperationKind::NodeReboot,
            "prod",
            "reboot node cp-2",
            "reboot node cp-2 in prod".into(),
            CancelRule::AfterStep,
            Some(100),
        );
        p.timeout = Some(Duration::from_secs(900));
        p
    }

    #[test]
    fn every_line_starts_with_its_time_since_the_start() {
        let mut p = started();
        p.fold(
            Some(165),
            ProgressEvent::Line("cp-2: reboot requested".into()),
        );
        let lines: Vec<&str> = p.lines.iter().map(String::as_str).collect();
        assert_eq!(
            lines,
            [
                "[+0s] starting: reboot node cp-2 in prod",
                "[+1m05s] cp-2: reboot requested"
            ]
        );
        assert_eq!(
            p.elapsed(Some(165)).unwrap(),
            "elapsed 1m05s, times out after 15m00s"
        );
    }

    #[test]
    fn subjects_steps_and_counts_fold_in_place() {
        let mut p = started();
        let subject = |state: &str| ProgressEvent::Subject {
            name: "m-1".into(),
            state: state.into(),
        };
        p.fold(Some(101), subject("created"));
        p.fold(Some(102), subject("Ready"));
        assert_eq!(p.subjects.len(), 1);
        assert_eq!(p.subjects[0].state, "Ready");
        p.fold(Some(103), ProgressEvent::Count("created".into()));
        p.fold(Some(104), ProgressEvent::Count("created".into()));
        assert_eq!(p.tally.as_ref().unwrap().counts, [("created".into(), 2)]);
        let step = |index, state| ProgressEvent::Step {
            index,
            total: 3,
            label: format!("step {index}"),
            state,
        };
        p.fold(Some(110), step(0, StepState::Running(String::new())));
        p.fold(Some(122), step(0, StepState::Done("defragmented".into())));
        p.fold(Some(122), step(1, StepState::Running(String::new())));
        assert_eq!(p.steps.len(), 3);
        assert_eq!(p.steps_done(), 1);
        assert_eq!(p.step_elapsed(&p.steps[0], Some(200)).unwrap(), "12s");
        assert_eq!(p.step_elapsed(&p.steps[1], Some(130)).unwrap(), "8s");
        assert_eq!(p.steps[2].state, StepState::Pending);
        // The step under way when the run failed failed with it.
        p.fold(Some(131), ProgressEvent::Finished(Err("timed out".into())));
        assert_eq!(p.steps[1].state, StepState::Failed(String::new()));
        assert_eq!(p.steps[2].state, StepState::Pending);
    }

    #[test]
    fn a_question_waits_until_the_end() {
        let mut p = started();
        let ask = ProgressEvent::Ask {
            id: 1,
            about: "lab-1 (127.0.0.1)".into(),
            question: "is ab:cd its fingerprint?".into(),
        };
        p.fold(Some(101), ask);
        assert_eq!(p.asking.as_ref().map(|q| q.id), Some(1));
        p.fold(Some(102), ProgressEvent::Paused(true));
        assert!(p.paused);
        p.fold(Some(103), ProgressEvent::Finished(Err("stopped".into())));
        assert_eq!((p.asking.clone(), p.paused), (None, false));
    }

    #[test]
    fn a_check_is_counted_on_each_poll_and_told_when_it_changes() {
        let mut p = started();
        let etcd = |passed, reason: &str| ProgressEvent::Check {
            name: "etcd".into(),
            passed,
            reason: reason.into(),
        };
        let before = p.lines.len();
        p.fold(None, etcd(true, "3 members healthy"));
        p.fold(None, etcd(true, "3 members healthy"));
        p.fold(None, etcd(false, "cp-4 unhealthy"));
        assert_eq!((p.checks[0].polls, p.checks[0].passed), (3, 2));
        assert_eq!(p.lines.len(), before + 2);
    }

    #[test]
    fn the_end_stops_the_clock_and_says_how_it_ended() {
        let mut p = started();
        p.fold(Some(110), ProgressEvent::Waiting("apid".into()));
        p.ask_cancel(Some(111));
        p.ask_cancel(Some(112));
        let cancelled = "cancelled while waiting for apid; no node was left cordoned";
        p.fold(Some(120), ProgressEvent::Finished(Err(cancelled.into())));
        assert!(!p.running());
        assert_eq!(p.waiting, None);
        assert_eq!(p.lines.len(), 3);
        assert_eq!(p.lines.back().unwrap(), &format!("[+20s] {cancelled}"));
        assert_eq!(
            p.elapsed(Some(999)).unwrap(),
            "elapsed 20s, times out after 15m00s"
        );
    }
}
