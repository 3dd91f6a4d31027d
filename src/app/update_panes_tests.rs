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
        [Effect::Poller(PollerCommand::Focus(Some(c)))] if c == "alpha"
    ));
    let back = update(&mut s, Action::Back);
    assert_eq!(s.screen, Screen::Fleet);
    assert!(matches!(
        &back[..],
        [Effect::Poller(PollerCommand::Focus(None))]
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
        [Effect::Poller(PollerCommand::WatchNode { node, .. })] if node == "127.10.0.4"
    ));
    let effects = update(&mut s, Action::StepNode(Move::Down));
    assert!(matches!(
        &effects[..],
        [Effect::Poller(PollerCommand::WatchNode { node, .. })] if node == "127.10.0.5"
    ));
    let effects = update(&mut s, Action::Back);
    assert_eq!(s.screen, Screen::Cluster(Pane::Nodes));
    assert!(matches!(
        &effects[..],
        [Effect::Poller(PollerCommand::UnwatchNode)]
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
    let sort = s.tables.get(TableKind::Nodes).sort;
    assert_eq!(crate::app::rows::NODE_COLUMNS[sort].title, "ISSUE");
    for _ in 0..4 {
        update(&mut s, Action::SortNext);
    }
    assert_eq!(s.tables.get(TableKind::Nodes).sort, 5);
    update(&mut s, Action::Move(Move::Down));
    assert_eq!(
        s.tables.get(TableKind::Nodes).selected.as_deref(),
        Some("127.10.0.2")
    );
    // "a" goes DOWN and sorts after "b" now; the selection stays on "b".
    update(
        &mut s,
        report("alpha", node("a", "127.10.0.1", Some("refused")), t0),
    );
    let data = tables::table(&s, TableKind::Nodes);
    assert_eq!(data.rows[0].key, "127.10.0.1");
    assert_eq!(
        data.selected_key(s.tables.get(TableKind::Nodes)),
        Some("127.10.0.2")
    );
}

#[test]
fn sort_cycles_through_the_columns_on_screen_only() {
    let mut s = state();
    let cycle = |s: &mut AppState| {
        let mut seen = Vec::new();
        for _ in 0..super::super::rows::FLEET_COLUMNS.len() {
            update(s, Action::SortNext);
            seen.push(s.tables.get(TableKind::Fleet).sort);
        }
        seen
    };
    // 80 columns: CONTEXTS (1), HOT SPOTS (9) and UPDATED (10) are not shown.
    assert_eq!(cycle(&mut s), vec![8, 0, 2, 3, 4, 5, 6, 7, 8, 0, 2]);
    update(&mut s, Action::Resize(200, 50));
    assert_eq!(cycle(&mut s), vec![3, 4, 5, 6, 7, 8, 9, 10, 0, 1, 2]);
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
        [Effect::Poller(PollerCommand::RefreshAll)]
    ));
    open_alpha(&mut s);
    assert!(matches!(
        &update(&mut s, Action::Refresh)[..],
        [Effect::Poller(PollerCommand::Refresh(c))] if c == "alpha"
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
        s.tables.get(TableKind::Clusters).filter.is_empty(),
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
        [Effect::Poller(PollerCommand::Focus(Some(_)))]
    ));
}

fn usage_event(cluster: &str, node: &str, address: &str, disk: f64) -> Action {
    Action::Event(AppEvent::Fleet(FleetEvent::NodeUsage {
        cluster: cluster.into(),
        usage: crate::node_resources::NodeUsage {
            node: node.into(),
            address: address.into(),
            cpu_percent: Some(3.0),
            memory_percent: Some(20.0),
            disk_percent: Some(disk),
            level: crate::node_resources::Gauge::Volume.level(disk),
            error: None,
        },
        at: Instant::now(),
    }))
}

fn asked(request: Option<PollerCommand>) -> Option<(String, Vec<String>)> {
    match request? {
        PollerCommand::ReadUsage { cluster, nodes } => {
            Some((cluster, nodes.into_iter().map(|n| n.name).collect()))
        }
        other => panic!("not a usage read: {other:?}"),
    }
}

#[test]
fn usage_is_read_for_the_rows_that_can_be_on_screen_and_asked_again_only_when_they_change() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, Action::Resize(80, 6));
    for i in 1..=9 {
        let n = node(&format!("w-{i}"), &format!("127.10.0.{i}"), None);
        update(&mut s, report("alpha", n, t0));
    }
    // The fleet shows no node: nothing is read.
    assert_eq!(usage_request(&mut s), None);
    open_alpha(&mut s);
    let first = asked(usage_request(&mut s)).expect("the nodes on screen");
    assert_eq!(first.0, "alpha");
    assert_eq!(first.1, ["w-1", "w-2", "w-3", "w-4", "w-5", "w-6"]);
    assert_eq!(usage_request(&mut s), None, "asked once");
    // The first usage read changes no row's place: nothing more is asked.
    update(&mut s, usage_event("alpha", "w-2", "127.10.0.2", 40.0));
    assert_eq!(usage_request(&mut s), None);
    for _ in 0..8 {
        update(&mut s, Action::Move(Move::Down));
    }
    let scrolled = asked(usage_request(&mut s)).expect("the rows scrolled to");
    assert_eq!(scrolled.1, ["w-4", "w-5", "w-6", "w-7", "w-8", "w-9"]);
    // Back to the fleet and in again: asked anew (the focus change stopped the reads).
    update(&mut s, Action::Back);
    assert_eq!(usage_request(&mut s), None);
    open_alpha(&mut s);
    assert!(usage_request(&mut s).is_some());
}

#[test]
fn a_full_disk_read_puts_its_node_first_with_its_usage_in_the_columns() {
    let t0 = Instant::now();
    let mut s = state();
    for (n, a) in [("w-1", "127.10.0.1"), ("w-2", "127.10.0.2")] {
        update(&mut s, report("alpha", node(n, a, None), t0));
    }
    open_alpha(&mut s);
    update(&mut s, usage_event("alpha", "w-2", "127.10.0.2", 96.0));
    let data = tables::table(&s, TableKind::Nodes);
    let w2 = &data.rows[0];
    assert_eq!(w2.key, "127.10.0.2");
    let cells: Vec<&str> = w2.cells.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(&cells[8..11], ["3", "20", "96"]);
    assert_eq!(w2.cells[10].tone, tables::Tone::Error);
    assert_eq!(cells[13], "disk 96% full");
    // w-1 was never read: its usage cells are the placeholder.
    assert!(
        data.rows[1].cells[8..11]
            .iter()
            .all(|c| c.tone == tables::Tone::Unknown)
    );
    let fleet = tables::table(&s, TableKind::Fleet);
    let alpha = fleet.rows.iter().find(|r| r.key == "alpha").expect("alpha");
    assert_eq!(alpha.cells[8].text, "w-2 disk 96% full");
    assert_eq!(alpha.cells[9].text, "cpu w-2 3% mem w-2 20% disk w-2 96%");
}
