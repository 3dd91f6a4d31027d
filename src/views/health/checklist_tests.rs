use std::time::{Duration, Instant};

use super::*;
use crate::app::action::{Action, AppEvent, Effect};
use crate::app::screen::{Pane, Screen};
use crate::app::screens::{FleetChange, ScreenNews};
use crate::app::state::AppState;
use crate::app::test_fixtures::{cluster_screen, press};
use crate::app::update;
use crate::fleet::health_check::{DEFAULT_WAIT, SERVER_CHECKS};
use crate::fleet::{ClusterStatus, NodeRole, NodeStatus};
use crate::talos::CheckState;
use crate::views::health::{Checklist, NAME};
use crossterm::event::KeyCode;

fn status(role: &str) -> ClusterStatus {
    let node = |name: &str, address: &str, role, error: Option<&str>| NodeStatus {
        name: name.into(),
        address: address.into(),
        role,
        error: error.map(String::from),
        ..Default::default()
    };
    ClusterStatus {
        name: "lab".into(),
        reachable: true,
        role: role.into(),
        nodes: vec![
            node(
                "cp-1",
                "127.10.0.1",
                NodeRole::Controlplane,
                Some("no answer"),
            ),
            node("cp-2", "127.10.0.2", NodeRole::Controlplane, None),
            node("w-1", "127.10.0.3", NodeRole::Worker, None),
        ],
        ..Default::default()
    }
}

fn report(run: u64, at: Instant, news: HealthNews) -> Action {
    let report = HealthReport {
        cluster: "lab".into(),
        run,
        at,
        news,
    };
    Action::Event(AppEvent::Screen(ScreenNews::new(NAME, report)))
}

/// The checklist's latest run.
fn health(s: &AppState) -> Option<&HealthScreen> {
    s.screens
        .find::<Checklist>()
        .and_then(|c| c.latest.as_ref())
}

/// The model of `cluster` changed, as a poller report tells every screen.
fn on_status_change(s: &mut AppState, cluster: &str) {
    let change = FleetChange {
        cluster,
        certificates: false,
        capi: false,
    };
    crate::app::shell::on_fleet_change(s, &change);
}

fn check(name: &str, state: CheckState) -> HealthNews {
    HealthNews::Progress(HealthProgress::Check {
        name: name.into(),
        state,
    })
}

#[test]
fn h_asks_the_first_answering_control_plane_and_says_why() {
    let mut s = cluster_screen(status("os:reader"), Pane::Nodes);
    let effects = update(&mut s, Action::Open(NAME));
    assert_eq!(s.screen, Screen::Module(NAME));
    let [Effect::Screen(task)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    let run = task.get::<HealthRun>().expect("a health run");
    let Some(Ok(CheckPath::Server(_))) = health(&s).map(|h| &h.route) else {
        panic!("server-side");
    };
    assert_eq!(run.route.name, "cp-2");
    assert_eq!(run.route.address, "127.10.0.2");
    assert_eq!(run.route.role, "os:reader");
    assert_eq!(run.cluster.name, "lab");
    // Opening it again shows the same run; Esc goes back where it came from.
    press(&mut s, KeyCode::Esc);
    assert_eq!(s.screen, Screen::Cluster(Pane::Nodes));
    assert!(update(&mut s, Action::Open(NAME)).is_empty());
}

#[test]
fn a_role_health_check_refuses_gets_client_side_checks_on_the_live_model() {
    let mut s = cluster_screen(status("os:etcd:backup"), Pane::Nodes);
    let t0 = Instant::now();
    s.now = Some(t0);
    assert!(
        update(&mut s, Action::Open(NAME)).is_empty(),
        "no call is made"
    );
    let screen = health(&s).expect("screen");
    let Ok(path) = &screen.route else {
        panic!("{:?}", screen.route)
    };
    assert_eq!(
        path.why(),
        "client-side checks (talosctl health --server=false): role os:etcd:backup may not call \
         HealthCheck"
    );
    // No etcd member and no Kubernetes in the model: failing, retried, not decided yet.
    assert!(screen.running());
    assert_eq!(screen.lines()[0].phase, CheckPhase::Running);
    assert_eq!(screen.lines()[0].message, "no etcd member answered");

    // The model changes: the checks are evaluated again, and fail at the default wait.
    s.now = Some(t0 + DEFAULT_WAIT);
    on_status_change(&mut s, "lab");
    let screen = health(&s).expect("screen");
    assert!(screen.finished && !screen.list.healthy);
    let (phase, text) = screen.verdict();
    assert_eq!(phase, CheckPhase::Fail);
    assert!(
        text.contains("etcd to be healthy: no etcd member answered"),
        "{text}"
    );
}

const ETCD: &str = SERVER_CHECKS[0];
const MEMBERS: &str = SERVER_CHECKS[1];

#[test]
fn the_checklist_fills_in_with_elapsed_times_and_a_verdict() {
    let mut s = cluster_screen(status("os:admin"), Pane::Etcd);
    update(&mut s, Action::Open(NAME));
    let t0 = Instant::now();
    let at = |ms| t0 + Duration::from_millis(ms);
    update(&mut s, report(1, at(0), HealthNews::Started));
    update(&mut s, report(1, at(100), check(ETCD, CheckState::Waiting)));
    update(&mut s, report(1, at(1300), check(ETCD, CheckState::Passed)));
    update(
        &mut s,
        report(1, at(1400), check(MEMBERS, CheckState::Waiting)),
    );
    // A report of another run is not this one's.
    update(
        &mut s,
        report(7, at(1450), check("other", CheckState::Passed)),
    );
    let screen = health(&s).unwrap();
    let lines = screen.lines();
    // The server's checks not reached yet follow, pending.
    assert_eq!(lines.len(), SERVER_CHECKS.len());
    assert_eq!(lines[0].phase, CheckPhase::Pass);
    assert_eq!(lines[0].elapsed, Some(Duration::from_millis(1200)));
    assert_eq!(lines[1].phase, CheckPhase::Running);
    assert_eq!(lines[2].name, SERVER_CHECKS[2]);
    assert_eq!(lines[2].phase, CheckPhase::Pending);
    assert!(screen.running());
    let (_, text) = screen.verdict();
    assert_eq!(
        text,
        "running: 1 passed so far in 1.4s of the 1m00s timeout"
    );
    // `r` waits for the run to end.
    assert!(press(&mut s, KeyCode::Char('r')).is_empty());
    update(
        &mut s,
        report(
            1,
            at(2000),
            check(MEMBERS, CheckState::Failing("127.10.0.1: refused".into())),
        ),
    );
    assert_eq!(health(&s).unwrap().lines()[1].phase, CheckPhase::Running);
    update(
        &mut s,
        report(1, at(3000), HealthNews::Finished(Some("deadline".into()))),
    );
    let screen = health(&s).unwrap();
    let lines = screen.lines();
    assert_eq!(lines[1].phase, CheckPhase::Fail);
    assert_eq!(lines[1].message, "127.10.0.1 (cp-1): refused");
    assert_eq!(lines[1].elapsed, Some(Duration::from_millis(1600)));
    // The server stopped at the failing check: the rest never ran.
    assert!(lines[2..].iter().all(|l| l.phase == CheckPhase::NotRun));
    assert_eq!(screen.not_run(), SERVER_CHECKS.len() - 2);
    let (phase, text) = screen.verdict();
    assert_eq!(phase, CheckPhase::Fail);
    assert_eq!(
        text,
        format!("NOT HEALTHY in 3.0s (timeout 1m00s): {MEMBERS}: 127.10.0.1 (cp-1): refused")
    );
    // Re-run: a new run whose checks start as the last run's, pending.
    let effects = press(&mut s, KeyCode::Char('r'));
    assert!(
        matches!(effects.as_slice(), [Effect::Screen(t)] if t.get::<HealthRun>().is_some_and(|r| r.run == 2))
    );
    let lines = health(&s).unwrap().lines();
    assert_eq!(lines.len(), SERVER_CHECKS.len());
    assert!(lines.iter().all(|l| l.phase == CheckPhase::Pending));
    press(&mut s, KeyCode::Esc);
    assert_eq!(s.screen, Screen::Cluster(Pane::Etcd));
}

#[test]
fn a_check_that_has_not_reported_since_keeps_counting_on_the_wall_clock() {
    let mut s = cluster_screen(status("os:admin"), Pane::Nodes);
    update(&mut s, Action::Open(NAME));
    let t0 = Instant::now();
    s.wall_clock = Some(1_000);
    update(&mut s, report(1, t0, HealthNews::Started));
    update(&mut s, report(1, t0, check(MEMBERS, CheckState::Waiting)));
    let elapsed = |s: &AppState| health(s).unwrap().lines()[0].elapsed;
    assert_eq!(elapsed(&s), Some(Duration::ZERO));
    // Ticks with no report: the running check's time and the run's move, and the screen
    // redraws.
    let redraw = crate::app::apply(&mut s, Action::Event(AppEvent::Tick(1_012))).redraw;
    assert!(redraw);
    assert_eq!(elapsed(&s), Some(Duration::from_secs(12)));
    let screen = health(&s).unwrap();
    assert_eq!(screen.elapsed(), Some(Duration::from_secs(12)));
    // Once the run ended, the times stand still.
    update(
        &mut s,
        report(
            1,
            t0 + Duration::from_secs(13),
            HealthNews::Finished(Some("x".into())),
        ),
    );
    let redraw = crate::app::apply(&mut s, Action::Event(AppEvent::Tick(1_100))).redraw;
    assert!(!redraw);
    assert_eq!(elapsed(&s), Some(Duration::from_secs(13)));
}

#[test]
fn enter_opens_the_failing_checks_whole_error_and_c_runs_the_client_side_checks() {
    let mut s = cluster_screen(status("os:admin"), Pane::Nodes);
    s.now = Some(Instant::now());
    update(&mut s, Action::Open(NAME));
    let t0 = Instant::now();
    update(&mut s, report(1, t0, HealthNews::Started));
    // `c` is for after the server's run stopped.
    press(&mut s, KeyCode::Char('c'));
    assert!(health(&s).unwrap().server_side());
    update(&mut s, report(1, t0, check(ETCD, CheckState::Passed)));
    let long = format!("127.10.0.1: {}", "connection refused; ".repeat(12));
    update(
        &mut s,
        report(1, t0, check(MEMBERS, CheckState::Failing(long))),
    );
    update(
        &mut s,
        report(1, t0, HealthNews::Finished(Some("deadline".into()))),
    );
    let screen = health(&s).unwrap();
    assert_eq!(screen.focused(), Some(1), "the failing check");
    press(&mut s, KeyCode::Enter);
    assert!(health(&s).unwrap().opened);
    // Esc closes the error first, then goes back.
    press(&mut s, KeyCode::Esc);
    assert!(!health(&s).unwrap().opened);
    assert_eq!(s.screen, Screen::Module(NAME));
    press(&mut s, KeyCode::Up);
    assert_eq!(health(&s).unwrap().focused(), Some(0));
    press(&mut s, KeyCode::Down);
    press(&mut s, KeyCode::Down);
    assert_eq!(health(&s).unwrap().focused(), Some(2));

    press(&mut s, KeyCode::Char('c'));
    let screen = health(&s).unwrap();
    assert!(!screen.server_side());
    assert_eq!(screen.run, 2);
    let Ok(path) = &screen.route else {
        panic!("{:?}", screen.route)
    };
    assert!(
        path.why().contains("stopped at its first failing check"),
        "{}",
        path.why()
    );
    // Every client-side check was evaluated on the model, none left pending.
    let lines = screen.lines();
    assert_eq!(lines.len(), 6);
    assert!(lines.iter().all(|l| l.phase != CheckPhase::Pending));
}

#[test]
fn health_command_opens_the_checklist() {
    let mut s = cluster_screen(status("os:admin"), Pane::Nodes);
    update(&mut s, Action::OpenCommandLine);
    for c in "health".chars() {
        update(&mut s, Action::Insert(c));
    }
    let effects = update(&mut s, Action::Submit);
    assert_eq!(s.screen, Screen::Module(NAME));
    assert!(matches!(effects.as_slice(), [Effect::Screen(_)]));
}

#[test]
fn seconds_are_short() {
    assert_eq!(seconds(Duration::from_millis(3250)), "3.2s");
    assert_eq!(seconds(Duration::from_secs(65)), "1m05s");
}

#[test]
fn a_name_the_model_learns_after_the_checks_started_names_the_failing_address() {
    // cp-2 has not told its hostname yet when H is pressed: the model knows it by address.
    let mut unnamed = status("os:admin");
    unnamed.nodes[1].name = "127.10.0.2".into();
    let mut s = cluster_screen(unnamed, Pane::Nodes);
    update(&mut s, Action::Open(NAME));
    let t0 = Instant::now();
    update(&mut s, report(1, t0, HealthNews::Started));
    let refused = "127.10.0.2:50000: connect: connection refused";
    update(
        &mut s,
        report(1, t0, check(ETCD, CheckState::Failing(refused.into()))),
    );
    assert_eq!(health(&s).unwrap().list.checks[0].reason, refused);

    // Its answer arrives as the pollers' news, the way the console gets it.
    let named = NodeStatus {
        name: "cp-2".into(),
        address: "127.10.0.2".into(),
        role: NodeRole::Controlplane,
        ..Default::default()
    };
    let news = Action::Event(AppEvent::Fleet(crate::fleet::FleetEvent::Node {
        cluster: "lab".into(),
        node: named,
        at: t0,
    }));
    assert!(crate::app::update::apply(&mut s, news).redraw);
    assert_eq!(
        health(&s).unwrap().list.checks[0].reason,
        "cp-2 (127.10.0.2:50000): connect: connection refused"
    );
}
