//! The health checklist screen (`H`, `:health`), its state: which cluster and run, the path
//! the checks take (or why none), the checks as the node's stream fills them in with when each
//! began and ended, and the verdict. The console runs the server-side checks
//! (`Effect::RunHealthCheck`) with the headless command's functions and reports through
//! `AppEvent::Health`; `update_checklist` folds the reports in and evaluates the client-side
//! checks on the live model. Pure.
use std::time::{Duration, Instant};

use super::screen::Screen;
use crate::discovery::Cluster;
use crate::fleet::health_check::{CheckPath, CheckRoute};
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
}

impl CheckPhase {
    pub fn word(self) -> &'static str {
        match self {
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
    /// The screen Esc returns to.
    pub back: Screen,
}

impl HealthScreen {
    /// A fresh run's screen, with the previous run's check names as its pending rows.
    pub fn new(
        cluster: String,
        run: u64,
        route: Result<CheckPath, String>,
        list: HealthChecklist,
        expected: Vec<String>,
        back: Screen,
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
            back,
        }
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
                CheckLine {
                    name: check.name.clone(),
                    phase,
                    message: check.reason.clone(),
                    elapsed: times.since.zip(until).map(|(a, b)| b.duration_since(a)),
                }
            })
            .collect();
        let pending: Vec<CheckLine> = self
            .expected
            .iter()
            .filter(|name| !self.list.checks.iter().any(|c| &c.name == *name))
            .map(|name| CheckLine {
                name: name.clone(),
                phase: CheckPhase::Pending,
                message: String::new(),
                elapsed: None,
            })
            .collect();
        out.extend(pending);
        out
    }

    /// From the start to the end (or the latest report while running).
    pub fn elapsed(&self) -> Option<Duration> {
        self.started
            .zip(self.latest)
            .map(|(a, b)| b.duration_since(a))
    }

    /// The verdict line: running, healthy, or what failed.
    pub fn verdict(&self) -> (CheckPhase, String) {
        let took = self
            .elapsed()
            .map(|d| format!(" in {}", seconds(d)))
            .unwrap_or_default();
        match &self.route {
            Err(why) => (CheckPhase::Fail, format!("cannot run the checks: {why}")),
            Ok(_) if !self.finished => {
                let done = self
                    .list
                    .checks
                    .iter()
                    .filter(|c| c.state == CheckMark::Ok)
                    .count();
                (
                    CheckPhase::Running,
                    format!("running: {done} passed so far{took}"),
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
                let why = match self.list.first_failure() {
                    Some(c) => format!("{}: {}", c.name, c.reason),
                    None => self
                        .list
                        .error
                        .clone()
                        .unwrap_or_else(|| "not every check ran".into()),
                };
                (CheckPhase::Fail, format!("NOT HEALTHY{took}: {why}"))
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

/// Seconds with one decimal (`3.2s`), whole minutes beyond a minute (`1m05s`).
pub fn seconds(d: Duration) -> String {
    let tenths = d.as_millis() / 100;
    if tenths < 600 {
        format!("{}.{}s", tenths / 10, tenths % 10)
    } else {
        let s = tenths / 10;
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

#[cfg(test)]
#[path = "checklist_tests.rs"]
mod tests;
