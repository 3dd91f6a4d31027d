//! The checklist's update step: opening it starts a run (the event loop runs the server's
//! checks), the reports fill its lines, a status change of the cluster feeds the client-side
//! checks and the names learnt, and its keys. Pure.
use std::time::Duration;

use super::{Checklist, HealthKey, HealthNews, HealthReport, HealthRun, HealthScreen, NAME};
use crate::app::action::Effect;
use crate::app::message::Message;
use crate::app::screens::{ScreenTask, Shared, Step};
use crate::fleet::HealthChecklist;
use crate::fleet::client_checks::client_side_checks;
use crate::fleet::health_check::{CheckPath, DEFAULT_WAIT, route};

/// What the client-side run says of its path when the operator chose it with `c`.
const CHOSEN_CLIENT_SIDE: &str = "the server's HealthCheck stopped at its first failing check \
     (pkg/cluster/check/check.go), so these run here, each on its own";

impl Checklist {
    /// `H` on the cluster view, `:health`: the checklist of the cluster in use, starting a run
    /// unless one of that cluster is under way or shown already.
    pub(super) fn open_checks(&mut self, shared: &Shared) -> Result<Step, Message> {
        let cluster = shared.cluster_in_use()?;
        if self.latest.as_ref().is_some_and(|h| h.cluster == cluster) {
            return Ok(Step::default());
        }
        Ok(self.start(shared, cluster, false))
    }

    /// A new run of the checks of `cluster`: the route from what the pollers know, or the
    /// client-side checks the operator chose with `c` (then no previous names are pending).
    fn start(&mut self, shared: &Shared, cluster: &str, client_side: bool) -> Step {
        let run = self.latest.as_ref().map_or(1, |h| h.run + 1);
        let live = shared.fleet.cluster(cluster);
        let (route, expected) = if client_side {
            let reason = CHOSEN_CLIENT_SIDE.to_string();
            (Ok(CheckPath::ClientSide { reason }), Vec::new())
        } else {
            let expected = (self.latest.as_ref())
                .filter(|h| h.cluster == cluster)
                .map(|h| h.list.checks.iter().map(|c| c.name.clone()).collect())
                .unwrap_or_default();
            let route = match live {
                Some(live) if live.has_data() => route(&live.status),
                _ => Err(format!("cluster {cluster}: no answer from it yet")),
            };
            (route, expected)
        };
        let list = live.map_or_else(HealthChecklist::default, |l| {
            HealthChecklist::new(&l.status)
        });
        let task = match (&route, shared.clusters.iter().find(|c| c.name == cluster)) {
            (Ok(CheckPath::Server(route)), Some(c)) => Some(Effect::Screen(ScreenTask::new(
                NAME,
                HealthRun {
                    cluster: c.clone(),
                    run,
                    route: route.clone(),
                },
            ))),
            _ => None,
        };
        self.latest = Some(HealthScreen::new(
            cluster.to_string(),
            run,
            route,
            list,
            expected,
        ));
        self.on_status_change(shared, cluster);
        Step::effects(task.into_iter().collect())
    }

    /// The cluster's model changed (or the screen opened): names it learnt join the list's,
    /// and its client-side checks are evaluated again on it, as one round of talosctl's
    /// `--server=false` polling; they end when all pass, or failing at the headless command's
    /// default wait. Whether the checklist shows that cluster.
    pub(super) fn on_status_change(&mut self, shared: &Shared, cluster: &str) -> bool {
        let (Some(screen), Some(live), Some(at)) = (
            self.latest.as_mut(),
            shared.fleet.cluster(cluster),
            shared.now,
        ) else {
            return false;
        };
        if screen.cluster != cluster {
            return false;
        }
        screen.list.learn_names(&live.status);
        let client_side = matches!(screen.route, Ok(CheckPath::ClientSide { .. }));
        if !client_side || screen.finished {
            return true;
        }
        if screen.started.is_none() {
            screen.fold(at, HealthNews::Started);
        }
        screen.reported_at(shared.wall_clock);
        for progress in client_side_checks(&live.status) {
            screen.fold(at, HealthNews::Progress(progress));
        }
        let waited = screen
            .started
            .map_or(Duration::ZERO, |s| at.duration_since(s));
        if let Some(end) = screen.list.client_side_end(waited, DEFAULT_WAIT) {
            screen.fold(at, HealthNews::Finished(end));
        }
        true
    }

    /// A report of a run: folded when it is the screen's run, else dropped (an older run).
    pub(super) fn on_report(&mut self, report: &HealthReport, shared: &Shared) -> bool {
        let Some(screen) = self
            .latest
            .as_mut()
            .filter(|h| h.cluster == report.cluster && h.run == report.run)
        else {
            return false;
        };
        screen.fold(report.at, report.news.clone());
        screen.reported_at(shared.wall_clock);
        true
    }

    /// `c` once the server's run stopped at a failing check: the client-side checks of the
    /// same cluster, which do not stop at a failure.
    fn run_client_side(&mut self, shared: &Shared) -> Step {
        let Some(screen) = self.latest.as_ref() else {
            return Step::default();
        };
        if screen.running() || !screen.server_side() || screen.list.healthy {
            return Step::message(Message::info(
                "c runs the client-side checks once the server's checks stopped at a failing one",
            ));
        }
        let cluster = screen.cluster.clone();
        self.start(shared, &cluster, true)
    }

    /// The checklist's keys.
    pub(super) fn on_intent(&mut self, key: HealthKey, shared: &Shared) -> Step {
        let Some(screen) = self.latest.as_mut() else {
            return if key == HealthKey::Back {
                Step::close()
            } else {
                Step::default()
            };
        };
        let last = screen.lines().len().saturating_sub(1);
        let at = screen.focused().unwrap_or(0).min(last);
        match key {
            HealthKey::Next => screen.selected = Some((at + 1).min(last)),
            HealthKey::Previous => screen.selected = Some(at.saturating_sub(1)),
            HealthKey::ToggleError => screen.opened = !screen.opened,
            HealthKey::ClientChecks => return self.run_client_side(shared),
            HealthKey::Back if screen.opened => screen.opened = false,
            HealthKey::Back => return Step::close(),
            HealthKey::Rerun if screen.running() => {
                let text = format!("the health checks of {} are still running", screen.cluster);
                return Step::message(Message::info(text));
            }
            HealthKey::Rerun => {
                let cluster = screen.cluster.clone();
                return self.start(shared, &cluster, false);
            }
        }
        Step::default()
    }
}
