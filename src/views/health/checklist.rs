//! The health checklist screen (`H`, `:health`), its state: which cluster and run, the path
//! the checks take (or why none), the checks as the node's stream fills them in with when each
//! began and ended, and the verdict. The console runs the server-side checks
//! (`HealthRun`, a screen task) with the headless command's functions and reports through
//! `HealthReport`s; `update` folds the reports in and evaluates the client-side checks on the
//! live model. Pure.
use std::time::{Duration, Instant};

use crate::discovery::Cluster;
use crate::fleet::health_check::{CheckPath, CheckRoute, DEFAULT_WAIT};
use crate::fleet::{CheckMark, HealthChecklist};
use crate::talos::HealthProgress;

/// What the console needs to run one health check.
#[derive(Debug, Clone)]
pub struct HealthRun {
    /// The cluster, with the context in use.
    pub cluster: Cluster,
    pub run: u64,
    pub route: CheckRoute,
}

/// One report of a running health check, stamped with when it came.
#[derive(Debug, Clone)]
pub struct HealthReport {
    pub cluster: String,
    pub run: u64,
    pub at: Instant,
    pub news: HealthNews,
}

#[derive(Debug, Clone)]
pub enum HealthNews {
    /// The call is about to be made.
    Started,
    Progress(HealthProgress),
    /// The stream ended: cleanly (`None`) or with the node's error.
    Finished(Option<String>),
}

/// Where one check of the screen stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckPhase {
    /// Known from the previous run, not reached yet in this one.
    Pending,
    /// Reported and not decided (a failing check is retried until the deadline).
    Running,
    Pass,
    Fail,
    /// After the server's failing check: its HealthCheck stopped there.
    NotRun,
}

impl CheckPhase {
    pub fn word(self) -> &'static str {
        match self {
            CheckPhase::NotRun => "not run",
            CheckPhase::Pending => "pending",
            CheckPhase::Running => "running",
            CheckPhase::Pass => "pass",
            CheckPhase::Fail => "FAIL",
        }
    }
}

/// One row of the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckLine {
    pub name: String,
    pub phase: CheckPhase,
    /// The last error of a failing or retried check, nodes named.
    pub message: String,
    /// From its first report to its pass or fail (or to the latest report while running).
    pub elapsed: Option<Duration>,
}

/// When one check was first reported and when it was decided.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct CheckTimes {
    since: Option<Instant>,
    decided: Option<Instant>,
}

/// The health checklist screen of one cluster.
#[derive(Debug, Clone)]
pub struct HealthScreen {
    pub cluster: String,
    pub run: u64,
    /// The path the checks take, or why they cannot run.
    pub route: Result<CheckPath, String>,
    pub list: HealthChecklist,
    times: Vec<CheckTimes>,
    /// The previous run's check names: this run's pending rows.
    expected: Vec<String>,
    pub started: Option<Instant>,
    pub latest: Option<Instant>,
    pub finished: bool,
    /// The row the operator moved to (Up/Down); Enter opens its whole error.
    pub selected: Option<usize>,
    /// The selected row's whole error is open below the rows.
    pub opened: bool,
    /// The wall clock when the latest report came, and the latest tick's: a check that has
    /// not reported since keeps counting its time.
    reported_wall: Option<u64>,
    wall_now: Option<u64>,
}

impl HealthScreen {
    /// A fresh run's screen, with the previous run's check names as its pending rows.
    pub fn new(
        cluster: String,
        run: u64,
        route: Result<CheckPath, String>,
        list: HealthChecklist,
        expected: Vec<String>,
    ) -> HealthScreen {
        HealthScreen {
            cluster,
            run,
            route,
            list,
            times: Vec::new(),
            expected,
            started: None,
            latest: None,
            finished: false,
            selected: None,
            opened: false,
            reported_wall: None,
            wall_now: None,
        }
    }

    /// Whether the server runs these checks (and stops at the first failing one).
    pub fn server_side(&self) -> bool {
        matches!(self.route, Ok(CheckPath::Server(_)))
    }

    /// A tick of the wall clock; whether the screen shows a time that moved.
    pub fn tick(&mut self, wall: u64) -> bool {
        self.wall_now = Some(wall);
        self.running() && self.started.is_some()
    }

    /// Notes the wall clock a report came at (with [`HealthScreen::fold`]).
    pub fn reported_at(&mut self, wall: Option<u64>) {
        if wall.is_some() {
            self.reported_wall = wall;
            self.wall_now = self.wall_now.max(wall);
        }
    }

    /// Time since the latest report while the checks run (ticks of the wall clock).
    fn waiting(&self) -> Duration {
        match (self.running(), self.reported_wall, self.wall_now) {
            (true, Some(at), Some(now)) => Duration::from_secs(now.saturating_sub(at)),
            _ => Duration::ZERO,
        }
    }

    /// The row Enter opens: the selected one, else the first failing one.
    pub fn focused(&self) -> Option<usize> {
        self.selected.or_else(|| {
            self.lines()
                .iter()
                .position(|l| l.phase == CheckPhase::Fail)
        })
    }

    /// The focused check when it has an error for Enter to open.
    pub fn focused_error(&self) -> Option<CheckLine> {
        let line = self.focused().and_then(|i| self.lines().into_iter().nth(i));
        line.filter(|l| !l.message.is_empty())
    }

    /// The checks the server's run never reached: it stopped at a failing check.
    pub fn not_run(&self) -> usize {
        self.lines()
            .iter()
            .filter(|l| l.phase == CheckPhase::NotRun)
            .count()
    }

    /// Whether the checks are still running.
    pub fn running(&self) -> bool {
        self.route.is_ok() && !self.finished
    }

    /// Every check in order: this run's, then the previous run's not reached yet.
    pub fn lines(&self) -> Vec<CheckLine> {
        let mut out: Vec<CheckLine> = self
            .list
            .checks
            .iter()
            .zip(&self.times)
            .map(|(check, times)| {
                let phase = match check.state {
                    CheckMark::Ok => CheckPhase::Pass,
                    CheckMark::Fail if self.finished => CheckPhase::Fail,
                    CheckMark::Waiting | CheckMark::Fail => CheckPhase::Running,
                };
                let until = times.decided.or(self.latest);
                let waiting = match times.decided {
                    Some(_) => Duration::ZERO,
                    None => self.waiting(),
                };
                CheckLine {
                    name: check.name.clone(),
                    phase,
                    message: check.reason.clone(),
                    elapsed: times
                        .since
                        .zip(until)
                        .map(|(a, b)| b.duration_since(a) + waiting),
                }
            })
            .collect();
        // The checks not reached yet: the previous run's, and on the server's path the
        // server's own list. Once a server run ended unhealthy they never ran.
        let server = self.server_side();
        let phase = if self.finished && !self.list.healthy && server {
            CheckPhase::NotRun
        } else {
            CheckPhase::Pending
        };
        let reported = |name: &str| self.list.checks.iter().any(|c| c.name == name);
        let mut names: Vec<&str> = (self.expected.iter().map(String::as_str))
            .filter(|name| !reported(name))
            .collect();
        for name in self.list.not_reached().filter(|_| server) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        out.extend(names.into_iter().map(|name| CheckLine {
            name: name.to_string(),
            phase,
            message: String::new(),
            elapsed: None,
        }));
        out
    }

    /// From the start to the end (or to now while running).
    pub fn elapsed(&self) -> Option<Duration> {
        self.started
            .zip(self.latest)
            .map(|(a, b)| b.duration_since(a) + self.waiting())
    }

    /// The verdict line: running, healthy, or what failed, with how long the checks may take
    /// in all (the node's deadline, or the client-side wait: both the headless command's).
    pub fn verdict(&self) -> (CheckPhase, String) {
        let of = seconds(DEFAULT_WAIT);
        let took = self
            .elapsed()
            .map(|d| format!(" in {}", seconds(d)))
            .unwrap_or_default();
        match &self.route {
            Err(why) => (CheckPhase::Fail, format!("cannot run the checks: {why}")),
            Ok(_) if !self.finished => {
                let done = self.list.passed().count();
                (
                    CheckPhase::Running,
                    format!("running: {done} passed so far{took} of the {of} timeout"),
                )
            }
            Ok(_) if self.list.healthy => (
                CheckPhase::Pass,
                format!(
                    "HEALTHY: all {} checks passed{took}",
                    self.list.checks.len()
                ),
            ),
            Ok(_) => {
                let why = self.list.failure();
                (
                    CheckPhase::Fail,
                    format!("NOT HEALTHY{took} (timeout {of}): {why}"),
                )
            }
        }
    }

    /// Folds one report of this screen's run in.
    pub fn fold(&mut self, at: Instant, news: HealthNews) {
        self.latest = Some(at);
        match news {
            HealthNews::Started => self.started = Some(at),
            HealthNews::Progress(progress) => {
                let Some(i) = self.list.apply(progress) else {
                    return;
                };
                if self.times.len() <= i {
                    self.times.resize(i + 1, CheckTimes::default());
                }
                let times = &mut self.times[i];
                times.since.get_or_insert(at);
                times.decided = (self.list.checks[i].state == CheckMark::Ok).then_some(at);
            }
            HealthNews::Finished(error) => {
                self.list.finish(error);
                self.finished = true;
                for (check, times) in self.list.checks.iter().zip(&mut self.times) {
                    if times.decided.is_none() && check.state == CheckMark::Fail {
                        times.decided = Some(at);
                    }
                }
            }
        }
    }
}

/// Seconds with one decimal (`3.2s`); from a minute on as a progress line says a span
/// (`1m05s`, `clock::short_duration`).
pub fn seconds(d: Duration) -> String {
    let tenths = d.as_millis() / 100;
    match tenths < 600 {
        true => format!("{}.{}s", tenths / 10, tenths % 10),
        false => crate::clock::short_duration(d.as_secs()),
    }
}

#[cfg(test)]
#[path = "checklist_tests.rs"]
mod tests;
