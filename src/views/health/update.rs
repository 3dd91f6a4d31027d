//! The health checklist's part of the update step: `:health` / `H` opens it and asks the event
//! loop to run the checks, the reports fill its lines, and a status change marks them stale. Pure.
use super::action::{Action, Effect};
use super::checklist::{HealthNews, HealthReport, HealthRun, HealthScreen};
use super::message::Message;
use super::screen::{Pane, Screen};
use super::state::AppState;
use crate::fleet::client_checks::client_side_checks;
use crate::fleet::health_check::{CheckPath, DEFAULT_WAIT, route};
use crate::fleet::{CheckMark, HealthChecklist};

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
    state.health = Some(HealthScreen::new(
        cluster.clone(),
        run,
        route,
        list,
        expected,
        back,
    ));
    on_status_change(state, &cluster);
    effect.into_iter().collect()
}

/// The cluster's model changed (or the screen opened): names it learnt join the list's, and
/// its client-side checks are evaluated again on it, as one round of talosctl's `--server=false`
/// polling; they end when all pass, or failing at the headless command's default wait. Whether
/// the checklist is on screen to show it.
pub fn on_status_change(state: &mut AppState, cluster: &str) -> bool {
    let on_screen = state.screen == Screen::Health;
    let (Some(screen), Some(live), Some(at)) = (
        state.health.as_mut(),
        state.fleet.cluster(cluster),
        state.now,
    ) else {
        return false;
    };
    if screen.cluster != cluster {
        return false;
    }
    screen.list.learn_names(&live.status);
    let client_side = matches!(screen.route, Ok(CheckPath::ClientSide { .. }));
    if !client_side || screen.finished {
        return on_screen;
    }
    if screen.started.is_none() {
        screen.fold(at, HealthNews::Started);
    }
    screen.reported_at(state.wall_clock);
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
    on_screen
}

/// What the client-side run says of its path when the operator chose it with `c`.
const CHOSEN_CLIENT_SIDE: &str = "the server's HealthCheck stopped at its first failing check \
     (pkg/cluster/check/check.go), so these run here, each on its own";

/// A tick of the wall clock: the running checks' times move; whether the screen shows them.
pub fn on_tick(state: &mut AppState, wall: u64) -> bool {
    let on_screen = state.screen == Screen::Health;
    state.health.as_mut().is_some_and(|h| h.tick(wall)) && on_screen
}

/// `c` once the server's run stopped at a failing check: the client-side checks of the same
/// cluster, which do not stop at a failure.
fn run_client_side(state: &mut AppState) -> Vec<Effect> {
    let Some(screen) = state.health.as_ref() else {
        return Vec::new();
    };
    if screen.running() || !screen.server_side() || screen.list.healthy {
        state.message = Some(Message::info(
            "c runs the client-side checks once the server's checks stopped at a failing one",
        ));
        return Vec::new();
    }
    let (cluster, run, back) = (screen.cluster.clone(), screen.run + 1, screen.back);
    let list = state
        .fleet
        .cluster(&cluster)
        .map_or_else(HealthChecklist::default, |l| {
            HealthChecklist::new(&l.status)
        });
    let route = Ok(CheckPath::ClientSide {
        reason: CHOSEN_CLIENT_SIDE.to_string(),
    });
    state.health = Some(HealthScreen::new(
        cluster.clone(),
        run,
        route,
        list,
        Vec::new(),
        back,
    ));
    on_status_change(state, &cluster);
    Vec::new()
}

/// Up/Down: the selected row; Enter: its whole error, open or closed.
fn on_rows(screen: &mut HealthScreen, action: &Action) {
    let last = screen.lines().len().saturating_sub(1);
    let at = screen.focused().unwrap_or(0).min(last);
    match action {
        Action::MoveDown => screen.selected = Some((at + 1).min(last)),
        Action::MoveUp => screen.selected = Some(at.saturating_sub(1)),
        Action::OpenSelected => screen.opened = !screen.opened,
        _ => {}
    }
}

/// The keys of the checklist screen: `r` runs the checks again, `c` the client-side ones,
/// Up/Down and Enter open a check's whole error, Esc closes it or goes back.
pub fn on_screen(state: &mut AppState, action: Action) -> Vec<Effect> {
    match action {
        Action::MoveDown | Action::MoveUp | Action::OpenSelected => {
            if let Some(screen) = state.health.as_mut() {
                on_rows(screen, &action);
            }
            Vec::new()
        }
        Action::RunClientChecks => run_client_side(state),
        Action::Back if state.health.as_ref().is_some_and(|h| h.opened) => {
            if let Some(screen) = state.health.as_mut() {
                screen.opened = false;
            }
            Vec::new()
        }
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
        screen.reported_at(state.wall_clock);
    }
}
