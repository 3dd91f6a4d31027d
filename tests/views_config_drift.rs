//! The nodes pane's DRIFT column at 80x24 and 200x50, in default, NO_COLOR and ASCII modes,
//! on the `healthy` scenario's nodes with w-2's configuration differing from the other
//! worker's in `machine.registries`: the wide pane marks w-2 alone; at 80 columns the column
//! gives way to ISSUE. A reader context's read (no marks) and a cluster without drift show
//! no column. The nodes are asked for once the first round listed them, not again on every
//! frame, again when a node joins or a config patch of the cluster ends.
mod view_support;

use std::time::Instant;

use taloscope::app::screen::{Pane, Screen};
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, PollerCommand, drift_request, update};
use taloscope::fleet::FleetEvent;
use taloscope::machine_config::DriftMark;
use taloscope::operation::progress::{OperationProgress, ProgressEvent};
use taloscope::operation::{CancelRule, OperationKind};
use view_support::scenarios;
use view_support::{all_renders, screen_text_at};

fn marked(s: &mut AppState, marks: &[(&str, DriftMark)]) {
    let event = FleetEvent::ConfigDrift {
        cluster: "healthy".into(),
        marks: (marks.iter())
            .map(|(address, mark)| (address.to_string(), mark.clone()))
            .collect(),
        at: Instant::now(),
    };
    update(s, Action::Event(AppEvent::Fleet(event)));
}

fn opened() -> AppState {
    let mut s = scenarios::state(&["healthy"]);
    update(&mut s, Action::OpenSelected);
    assert_eq!(s.screen, Screen::Cluster(Pane::Nodes));
    s
}

/// w-2 (127.10.0.5) carries an extra registry mirror; the others are as their role's.
fn w2_drifted() -> AppState {
    let mut s = opened();
    let same = DriftMark::Same;
    marked(
        &mut s,
        &[
            ("127.10.0.1", same.clone()),
            ("127.10.0.2", same.clone()),
            ("127.10.0.3", same.clone()),
            ("127.10.0.4", same),
            (
                "127.10.0.5",
                DriftMark::Differs("machine.registries".into()),
            ),
        ],
    );
    s
}

/// The nodes pane's line of `node` at `width` columns.
fn row_of(s: &AppState, node: &str, width: u16) -> String {
    let text = screen_text_at(s, width, 50);
    text.lines()
        .find(|l| {
            l.trim_start_matches(['│', '|', ' ', '▶', '>'])
                .starts_with(&format!("{node} "))
        })
        .unwrap_or_else(|| panic!("no row of {node} in\n{text}"))
        .to_string()
}

#[test]
fn the_drifted_worker_marked_in_the_wide_pane() {
    let s = w2_drifted();
    let wide = screen_text_at(&s, 200, 50);
    assert!(wide.contains("DRIFT"), "{wide}");
    assert!(row_of(&s, "w-2", 200).contains("machine.registries"));
    for node in ["cp-1", "cp-2", "cp-3", "w-1"] {
        assert!(!row_of(&s, node, 200).contains("machine."), "{node}");
    }
    assert!(!screen_text_at(&s, 80, 24).contains("DRIFT"));
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn no_column_without_drift_or_for_a_reader() {
    let mut s = w2_drifted();
    // A reader context's read: no marks at all.
    marked(&mut s, &[]);
    assert!(!screen_text_at(&s, 200, 50).contains("DRIFT"));
    marked(&mut s, &[("127.10.0.5", DriftMark::Same)]);
    assert!(!screen_text_at(&s, 200, 50).contains("DRIFT"));
    // A node whose configuration could not be read says so only beside a drift.
    marked(
        &mut s,
        &[
            ("127.10.0.4", DriftMark::Unread),
            (
                "127.10.0.5",
                DriftMark::Differs("machine.kubelet +1".into()),
            ),
        ],
    );
    assert!(row_of(&s, "w-2", 200).contains("machine.kubelet +1"));
    assert!(row_of(&s, "w-1", 200).contains(" ? "));
}

#[test]
fn every_node_is_asked_for_once_then_again_when_one_joins_or_a_patch_ends() {
    let mut s = opened();
    let Some(PollerCommand::ReadConfigDrift { cluster, nodes }) = drift_request(&mut s) else {
        panic!("no drift read asked for");
    };
    assert_eq!(cluster, "healthy");
    let named: Vec<(&str, &str)> = (nodes.iter())
        .map(|n| (n.name.as_str(), n.role.as_str()))
        .collect();
    assert_eq!(
        named,
        [
            ("cp-1", "controlplane"),
            ("cp-2", "controlplane"),
            ("cp-3", "controlplane"),
            ("w-1", "worker"),
            ("w-2", "worker")
        ]
    );
    assert_eq!(drift_request(&mut s), None, "asked once");
    let mut joined = nodes[4].clone();
    (joined.name, joined.address) = ("w-3".into(), "127.10.0.6".into());
    let node = taloscope::fleet::NodeStatus {
        name: joined.name.clone(),
        address: joined.address.clone(),
        role: taloscope::fleet::NodeRole::Worker,
        ..Default::default()
    };
    let event = FleetEvent::Node {
        cluster: "healthy".into(),
        node,
        at: Instant::now(),
    };
    update(&mut s, Action::Event(AppEvent::Fleet(event)));
    let Some(PollerCommand::ReadConfigDrift { nodes, .. }) = drift_request(&mut s) else {
        panic!("not asked again after w-3 joined");
    };
    assert_eq!(nodes.last(), Some(&joined));
    // A config patch of the cluster ends: its nodes are compared again.
    assert_eq!(drift_request(&mut s), None);
    s.screens
        .find_mut::<taloscope::views::progress::ProgressScreen>()
        .unwrap()
        .progress = Some(OperationProgress::start(
        OperationKind::ConfigPatch,
        "healthy",
        "patch the machine configuration",
        "patch".into(),
        CancelRule::AfterStep,
        None,
    ));
    let done = ProgressEvent::Finished(Ok("2 node(s) of healthy patched".into()));
    let event = taloscope::app::action::progress(OperationKind::ConfigPatch, done);
    update(&mut s, Action::Event(event));
    assert!(
        matches!(
            drift_request(&mut s),
            Some(PollerCommand::ReadConfigDrift { .. })
        ),
        "not asked again after the patch"
    );
    // Off the cluster (the fleet), nothing is read.
    update(&mut s, Action::Back);
    assert_eq!(drift_request(&mut s), None);
}
