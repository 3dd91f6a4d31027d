use std::time::{Duration, Instant};

use super::*;
use crate::app::action::{Action, AppEvent, Effect};
use crate::app::screen::{Pane, Screen};
use crate::app::test_fixtures::cluster_screen;
use crate::app::update;
use crate::app::update_checklist::on_status_change;
use crate::fleet::health_check::DEFAULT_WAIT;
use crate::fleet::{ClusterStatus, NodeRole, NodeStatus};
use crate::talos::CheckState;

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
    Action::Event(AppEvent::Health(Box::new(HealthReport {
        cluster: "lab".into(),
        run,
        at,
        news,
    })))
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
    let effects = update(&mut s, Action::OpenHealth);
    assert_eq!(s.screen, Screen::Health);
    let [Effect::RunHealthCheck(run)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    let Some(Ok(CheckPath::Server(_))) = s.health.as_ref().map(|h| &h.route) else {
        panic!("server-side");
    };
    assert_eq!(run.route.name, "cp-2");
    assert_eq!(run.route.address, "127.10.0.2");
    assert_eq!(run.route.role, "os:reader");
    assert_eq!(run.cluster.name, "lab");
    // Opening it again shows the same run; Esc goes back where it came from.
    update(&mut s, Action::Back);
    assert_eq!(s.screen, Screen::Cluster(Pane::Nodes));
    assert!(update(&mut s, Action::OpenHealth).is_empty());
}

#[test]
fn a_role_health_check_refuses_gets_client_side_checks_on_the_live_model() {
    let mut s = cluster_screen(status("os:etcd:backup"), Pane::Nodes);
    let t0 = Instant::now();
    s.now = Some(t0);
    assert!(
        update(&mut s, Action::OpenHealth).is_empty(),
        "no call is made"
    );
    let screen = s.health.as_ref().expect("screen");
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
    let screen = s.health.as_ref().expect("screen");
    assert!(screen.finished && !screen.list.healthy);
    let (phase, text) = screen.verdict();
    assert_eq!(phase, CheckPhase::Fail);
    assert!(
        text.contains("etcd to be healthy: no etcd member answered"),
        "{text}"
    );
}

#[test]
fn the_checklist_fills_in_with_elapsed_times_and_a_verdict() {
    let mut s = cluster_screen(status("os:admin"), Pane::Etcd);
    update(&mut s, Action::OpenHealth);
    let t0 = Instant::now();
    let at = |ms| t0 + Duration::from_millis(ms);
    update(&mut s, report(1, at(0), HealthNews::Started));
    update(
        &mut s,
        report(1, at(100), check("etcd", CheckState::Waiting)),
    );
    update(
        &mut s,
        report(1, at(1300), check("etcd", CheckState::Passed)),
    );
    update(
        &mut s,
        report(1, at(1400), check("apid", CheckState::Waiting)),
    );
    // A report of another run is not this one's.
    update(
        &mut s,
        report(7, at(1450), check("other", CheckState::Passed)),
    );
    let screen = s.health.as_ref().unwrap();
    let lines = screen.lines();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].phase, CheckPhase::Pass);
    assert_eq!(lines[0].elapsed, Some(Duration::from_millis(1200)));
    assert_eq!(lines[1].phase, CheckPhase::Running);
    assert!(screen.running());
    // `r` waits for the run to end.
    assert!(update(&mut s, Action::Refresh).is_empty());
    update(
        &mut s,
        report(
            1,
            at(2000),
            check("apid", CheckState::Failing("127.10.0.1: refused".into())),
        ),
    );
    assert_eq!(
        s.health.as_ref().unwrap().lines()[1].phase,
        CheckPhase::Running
    );
    update(
        &mut s,
        report(1, at(3000), HealthNews::Finished(Some("deadline".into()))),
    );
    let screen = s.health.as_ref().unwrap();
    let lines = screen.lines();
    assert_eq!(lines[1].phase, CheckPhase::Fail);
    assert_eq!(lines[1].message, "127.10.0.1 (cp-1): refused");
    assert_eq!(lines[1].elapsed, Some(Duration::from_millis(1600)));
    let (phase, text) = screen.verdict();
    assert_eq!(phase, CheckPhase::Fail);
    assert_eq!(
        text,
        "NOT HEALTHY in 3.0s: apid: 127.10.0.1 (cp-1): refused"
    );
    // Re-run: a new run whose checks start as the last run's, pending.
    let effects = update(&mut s, Action::Refresh);
    assert!(matches!(effects.as_slice(), [Effect::RunHealthCheck(r)] if r.run == 2));
    let lines = s.health.as_ref().unwrap().lines();
    assert_eq!(
        lines.iter().map(|l| l.phase).collect::<Vec<_>>(),
        [CheckPhase::Pending, CheckPhase::Pending]
    );
    update(&mut s, Action::Back);
    assert_eq!(s.screen, Screen::Cluster(Pane::Etcd));
}

#[test]
fn health_command_opens_the_checklist() {
    let mut s = cluster_screen(status("os:admin"), Pane::Nodes);
    update(&mut s, Action::OpenCommandLine);
    for c in "health".chars() {
        update(&mut s, Action::Insert(c));
    }
    let effects = update(&mut s, Action::Submit);
    assert_eq!(s.screen, Screen::Health);
    assert!(matches!(effects.as_slice(), [Effect::RunHealthCheck(_)]));
}

#[test]
fn seconds_are_short() {
    assert_eq!(seconds(Duration::from_millis(3250)), "3.2s");
    assert_eq!(seconds(Duration::from_secs(65)), "1m05s");
}
