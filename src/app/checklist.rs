//! The health checklist screen (`H`, `:health`): its state and pure update. Which cluster and
//! run, the path the checks take (or why none), the checks as the node's stream fills them in
//! with when each began and ended, and the verdict. The console runs the server-side checks
//! (`Effect::RunHealthCheck`) with the headless command's functions and reports through
//! `AppEvent::Health`; the client-side checks are evaluated here on the live model.
use std::time::{Duration, Instant};

use super::action::{Action, Effect};
use super::message::Message;
use super::screen::{Pane, Screen};
use super::state::AppState;
use crate::discovery::Cluster;
use crate::fleet::client_checks::client_side_checks;
use crate::fleet::health_check::{CheckPath, CheckRoute, DEFAULT_WAIT, route};
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
    back: Screen,
}

impl HealthScreen {
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
    fn fold(&mut self, at: Instant, news: HealthNews) {
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

/// `H` on the cluster view, `:health`: shows the checklist of the cluster in use, starting a
/// run unless one of that cluster is under way or shown already.
pub fn open(state: &mut AppState) -> Vec<Effect> {
    let Some(cluster) = state.current.clone() else {
        state.message = Some(Message::warn(
            "no cluster in use: Enter on the fleet or :ctx NAME",
        ));
        return Vec::new();
    };
    let back = match state.screen {
        Screen::Health => Screen::Cluster(Pane::Nodes),
        other => other,
    };
    if let Some(screen) = state.health.as_mut().filter(|h| h.cluster == cluster) {
        screen.back = back;
        state.screen = Screen::Health;
        return Vec::new();
    }
    state.screen = Screen::Health;
    start(state, cluster, back)
}

/// A new run of the checks of `cluster`: the route from what the pollers know.
fn start(state: &mut AppState, cluster: String, back: Screen) -> Vec<Effect> {
    let run = state.health.as_ref().map_or(1, |h| h.run + 1);
    let expected = state
        .health
        .as_ref()
        .filter(|h| h.cluster == cluster)
        .map(|h| h.list.checks.iter().map(|c| c.name.clone()).collect())
        .unwrap_or_default();
    let live = state.fleet.cluster(&cluster);
    let route = match live {
        Some(live) if live.has_data() => route(&live.status),
        _ => Err(format!("cluster {cluster}: no answer from it yet")),
    };
    let list = live.map_or_else(HealthChecklist::default, |l| {
        HealthChecklist::new(&l.status)
    });
    let effect = match (&route, state.clusters.iter().find(|c| c.name == cluster)) {
        (Ok(CheckPath::Server(route)), Some(c)) => {
            Some(Effect::RunHealthCheck(Box::new(HealthRun {
                cluster: c.clone(),
                run,
                route: route.clone(),
            })))
        }
        _ => None,
    };
    state.health = Some(HealthScreen {
        cluster: cluster.clone(),
        run,
        route,
        list,
        times: Vec::new(),
        expected,
        started: None,
        latest: None,
        finished: false,
        back,
    });
    on_status_change(state, &cluster);
    effect.into_iter().collect()
}

/// The cluster's model changed (or the screen opened): names it learnt join the list's, and
/// its client-side checks are evaluated again on it, as one round of talosctl's `--server=false` polling; they end when all pass,
/// or failing at the headless command's default wait.
pub fn on_status_change(state: &mut AppState, cluster: &str) {
    let (Some(screen), Some(live), Some(at)) = (
        state.health.as_mut(),
        state.fleet.cluster(cluster),
        state.now,
    ) else {
        return;
    };
    if screen.cluster != cluster {
        return;
    }
    screen.list.learn_names(&live.status);
    let client_side = matches!(screen.route, Ok(CheckPath::ClientSide { .. }));
    if !client_side || screen.finished {
        return;
    }
    if screen.started.is_none() {
        screen.fold(at, HealthNews::Started);
    }
    for progress in client_side_checks(&live.status) {
        screen.fold(at, HealthNews::Progress(progress));
    }
    let all_passed = screen.list.checks.iter().all(|c| c.state == CheckMark::Ok);
    let waited = screen
        .started
        .is_some_and(|s| at.duration_since(s) >= DEFAULT_WAIT);
    if all_passed {
        screen.fold(at, HealthNews::Finished(None));
    } else if waited {
        let why = format!("not every check passed within {DEFAULT_WAIT:?}");
        screen.fold(at, HealthNews::Finished(Some(why)));
    }
}

/// The keys of the checklist screen: `r` runs the checks again, Esc goes back.
pub fn on_screen(state: &mut AppState, action: Action) -> Vec<Effect> {
    match action {
        Action::Refresh => {
            let Some(screen) = state.health.as_ref() else {
                return Vec::new();
            };
            if screen.running() {
                state.message = Some(Message::info(format!(
                    "the health checks of {} are still running",
                    screen.cluster
                )));
                return Vec::new();
            }
            let (cluster, back) = (screen.cluster.clone(), screen.back);
            start(state, cluster, back)
        }
        Action::Back => {
            state.screen = state
                .health
                .as_ref()
                .map_or(Screen::Cluster(Pane::Nodes), |h| h.back);
            Vec::new()
        }
        _ => Vec::new(),
    }
}

/// A report of a run: folded when it is the screen's run, else dropped (an older run).
pub fn on_report(state: &mut AppState, report: HealthReport) {
    if let Some(screen) = state
        .health
        .as_mut()
        .filter(|h| h.cluster == report.cluster && h.run == report.run)
    {
        screen.fold(report.at, report.news);
    }
}

#[cfg(test)]
#[path = "checklist_tests.rs"]
mod tests;
