//! Unit tests of the fleet, cluster and node screens: selection by identity,
//! redraw answers for reports, pause, and the poller requests that screen
//! changes produce.
use std::time::{Duration, Instant};

use super::*;
use crate::app::action::AppEvent;
use crate::app::test_fixtures::{console_of, discovered};
use crate::app::update::{apply, update};
use crate::fleet::{FleetEvent, NodeRole, NodeStatus};

fn state() -> AppState {
    console_of(vec![discovered("alpha"), discovered("beta")])
}

fn node(name: &str, address: &str, error: Option<&str>) -> NodeStatus {
    NodeStatus {
        name: name.into(),
        address: address.into(),
        role: NodeRole::Worker,
        talos_version: Some("v1.11.3".into()),
        ready: error.is_none(),
        error: error.map(String::from),
        ..Default::default()
    }
}

fn report(cluster: &str, n: NodeStatus, at: Instant) -> Action {
    Action::Event(AppEvent::Fleet(FleetEvent::Node {
        cluster: cluster.into(),
        node: n,
        at,
    }))
}

fn open_alpha(s: &mut AppState) -> Vec<Effect> {
    update(s, Action::OpenSelected)
}

#[test]
fn enter_opens_the_cluster_and_focuses_the_poller() {
    let mut s = state();
    let effects = open_alpha(&mut s);
    assert_eq!(s.screen, Screen::Cluster(Pane::Nodes));
    assert_eq!(s.current.as_deref(), Some("alpha"));
    assert!(matches!(
        &effects[..],
        [Effect::Poller(PollerRequest::Focus(Some(c)))] if c == "alpha"
    ));
    let back = update(&mut s, Action::Back);
    assert_eq!(s.screen, Screen::Fleet);
    assert!(matches!(
        &back[..],
        [Effect::Poller(PollerRequest::Focus(None))]
    ));
}

#[test]
fn node_detail_watches_the_node_and_h_l_step() {
    let t0 = Instant::now();
    let mut s = state();
    for (n, a) in [("w-1", "127.10.0.4"), ("w-2", "127.10.0.5")] {
        update(&mut s, report("alpha", node(n, a, None), t0));
    }
    open_alpha(&mut s);
    let effects = update(&mut s, Action::OpenSelected);
    assert_eq!(s.screen, Screen::NodeDetail);
    assert!(matches!(
        &effects[..],
        [Effect::Poller(PollerRequest::WatchNode { node, .. })] if node == "127.10.0.4"
    ));
    let effects = update(&mut s, Action::NextNode);
    assert!(matches!(
        &effects[..],
        [Effect::Poller(PollerRequest::WatchNode { node, .. })] if node == "127.10.0.5"
    ));
    let effects = update(&mut s, Action::Back);
    assert_eq!(s.screen, Screen::Cluster(Pane::Nodes));
    assert!(matches!(
        &effects[..],
        [Effect::Poller(PollerRequest::UnwatchNode)]
    ));
}

#[test]
fn selection_keeps_to_its_row_when_a_refresh_reorders() {
    let t0 = Instant::now();
    let mut s = state();
    open_alpha(&mut s);
    update(&mut s, report("alpha", node("a", "127.10.0.1", None), t0));
    update(&mut s, report("alpha", node("b", "127.10.0.2", None), t0));
    // Sort by READY (column 5; SOURCE and STAGE are not shown at 80; the pane starts
    // problems first, by ISSUE), select "b".
    assert_eq!(s.tables.nodes.sort, crate::app::rows::NODE_DEFAULT_SORT);
    for _ in 0..4 {
        update(&mut s, Action::SortNext);
    }
    assert_eq!(s.tables.nodes.sort, 5);
    update(&mut s, Action::MoveDown);
    assert_eq!(s.tables.nodes.selected.as_deref(), Some("127.10.0.2"));
    // "a" goes DOWN and sorts after "b" now; the selection stays on "b".
    update(
        &mut s,
        report("alpha", node("a", "127.10.0.1", Some("refused")), t0),
    );
    let data = tables::table(&s, TableKind::Nodes);
    assert_eq!(data.rows[0].key, "127.10.0.1");
    assert_eq!(data.selected_key(&s.tables.nodes), Some("127.10.0.2"));
}

#[test]
fn sort_cycles_through_the_columns_on_screen_only() {
    let mut s = state();
    let cycle = |s: &mut AppState| {
        let mut seen = Vec::new();
        for _ in 0..super::super::rows::FLEET_COLUMNS.len() {
            update(s, Action::SortNext);
            seen.push(s.tables.fleet.sort);
        }
        seen
    };
    // 80 columns: CONTEXTS (1) and UPDATED (9) are not shown.
    assert_eq!(cycle(&mut s), vec![8, 0, 2, 3, 4, 5, 6, 7, 8, 0]);
    update(&mut s, Action::Resize(200, 50));
    assert_eq!(cycle(&mut s), vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 0]);
}

#[test]
fn reports_redraw_only_when_something_on_screen_changed() {
    let t0 = Instant::now();
    let mut s = state();
    open_alpha(&mut s);
    let first = apply(&mut s, report("alpha", node("a", "127.10.0.1", None), t0));
    assert!(first.redraw);
    let same = apply(
        &mut s,
        report(
            "alpha",
            node("a", "127.10.0.1", None),
            t0 + Duration::from_secs(5),
        ),
    );
    assert!(!same.redraw, "an unchanged report must not redraw");
    let elsewhere = apply(&mut s, report("beta", node("x", "127.10.1.1", None), t0));
    assert!(!elsewhere.redraw, "another cluster is not on screen");
    let start = apply(
        &mut s,
        Action::Event(AppEvent::Fleet(FleetEvent::PollStarted {
            cluster: "alpha".into(),
            at: t0,
        })),
    );
    assert!(!start.redraw);
    let finish = apply(
        &mut s,
        Action::Event(AppEvent::Fleet(FleetEvent::PollFinished {
            cluster: "alpha".into(),
            at: t0,
        })),
    );
    assert!(
        !finish.redraw,
        "nothing stale: the end of a round shows nothing"
    );
    assert_eq!(s.now, Some(t0 + Duration::from_secs(5)));
}

#[test]
fn pause_holds_reports_and_resume_applies_them() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, Action::TogglePause);
    assert!(s.paused);
    let held = apply(&mut s, report("alpha", node("a", "127.10.0.1", None), t0));
    assert!(!held.redraw);
    assert!(s.fleet.cluster("alpha").is_none());
    assert_eq!(s.held.len(), 1);
    update(&mut s, Action::TogglePause);
    assert!(!s.paused && s.held.is_empty());
    assert_eq!(
        s.fleet.cluster("alpha").map(|c| c.status.nodes.len()),
        Some(1)
    );
}

#[test]
fn refresh_asks_for_the_cluster_on_screen_or_all() {
    let mut s = state();
    assert!(matches!(
        &update(&mut s, Action::Refresh)[..],
        [Effect::Poller(PollerRequest::RefreshAll)]
    ));
    open_alpha(&mut s);
    assert!(matches!(
        &update(&mut s, Action::Refresh)[..],
        [Effect::Poller(PollerRequest::Refresh(c))] if c == "alpha"
    ));
}

#[test]
fn filter_applies_to_the_table_on_screen() {
    let t0 = Instant::now();
    let mut s = state();
    open_alpha(&mut s);
    update(
        &mut s,
        report("alpha", node("cp-1", "127.10.0.1", None), t0),
    );
    update(&mut s, report("alpha", node("w-1", "127.10.0.4", None), t0));
    update(&mut s, Action::OpenFilter);
    for c in "W-".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    assert_eq!(tables::table(&s, TableKind::Nodes).rows.len(), 1);
    assert!(
        s.filter.is_empty(),
        "the discovery list's filter is untouched"
    );
    update(&mut s, Action::Back);
    assert_eq!(tables::table(&s, TableKind::Nodes).rows.len(), 2);
    assert_eq!(
        s.screen,
        Screen::Cluster(Pane::Nodes),
        "Esc cleared the filter first"
    );
}

#[test]
fn pane_commands_work_from_the_fleet() {
    let mut s = state();
    update(&mut s, Action::OpenCommandLine);
    for c in "etcd".chars() {
        update(&mut s, Action::Insert(c));
    }
    let effects = update(&mut s, Action::Submit);
    assert_eq!(s.screen, Screen::Cluster(Pane::Etcd));
    assert_eq!(s.current.as_deref(), Some("alpha"));
    assert!(matches!(
        &effects[..],
        [Effect::Poller(PollerRequest::Focus(Some(_)))]
    ));
}
