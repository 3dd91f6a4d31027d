//! Snapshots of the fleet, nodes, etcd, versions and node detail panes on
//! data shaped like the sim's `healthy`, `cp2-down` and `single-cp`
//! scenarios, at 80x24 and 200x50, in default, NO_COLOR and ASCII modes. One
//! snapshot file per pane and scenario holds all six renders (styles for the
//! 80x24 ones), and each render is checked for its mode.
mod view_support;

use taloscope::app::binding::Move;
use taloscope::app::screen::{Pane, Screen};
use taloscope::app::state::AppState;
use taloscope::app::{Action, update};
use view_support::scenarios::{self, SCENARIOS};
use view_support::{all_renders, text_at};

fn opened(scenario: &str) -> AppState {
    let mut s = scenarios::state(&[scenario]);
    update(&mut s, Action::OpenSelected);
    assert_eq!(s.screen, Screen::Cluster(Pane::Nodes));
    s
}

#[test]
fn fleet() {
    for scenario in SCENARIOS {
        let s = scenarios::state(&[scenario]);
        insta::assert_snapshot!(format!("fleet_{scenario}"), all_renders(&s));
    }
}

#[test]
fn fleet_of_all_three() {
    let s = scenarios::state(&SCENARIOS);
    let text = text_at(&s, 200, 50);
    assert!(text.contains("cp-2 DOWN (stale 35s)"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn nodes() {
    for scenario in SCENARIOS {
        let s = opened(scenario);
        insta::assert_snapshot!(format!("nodes_{scenario}"), all_renders(&s));
    }
}

#[test]
fn etcd() {
    for scenario in SCENARIOS {
        let mut s = opened(scenario);
        update(&mut s, Action::Show(Screen::Cluster(Pane::Etcd)));
        insta::assert_snapshot!(format!("etcd_{scenario}"), all_renders(&s));
    }
}

#[test]
fn versions() {
    for scenario in SCENARIOS {
        let mut s = opened(scenario);
        update(&mut s, Action::Show(Screen::Cluster(Pane::Versions)));
        insta::assert_snapshot!(format!("versions_{scenario}"), all_renders(&s));
    }
}

#[test]
fn node_detail() {
    for scenario in SCENARIOS {
        // The wall clock ticks with the rounds: a down node says since when.
        let mut s = scenarios::state_on_the_wall_clock(&[scenario]);
        update(&mut s, Action::OpenSelected);
        assert_eq!(s.screen, Screen::Cluster(Pane::Nodes));
        // Problems first: on cp2-down the first row is the DOWN node, cp-2.
        update(&mut s, Action::OpenSelected);
        assert_eq!(s.screen, Screen::NodeDetail);
        insta::assert_snapshot!(format!("node_detail_{scenario}"), all_renders(&s));
    }
}

/// `healthy`'s nodes as a talosconfig naming only cp-1 finds them: the others through
/// discovery, etcd and Kubernetes. The wide nodes table has a SOURCE column (at 80 columns the
/// table keeps its versions and issue instead) and the node detail says it at every size.
#[test]
fn nodes_say_which_source_listed_them() {
    use taloscope::fleet::NodeSource;
    let mut s = scenarios::state(&["healthy"]);
    let sources = [
        NodeSource::Talosconfig,
        NodeSource::Discovery,
        NodeSource::Etcd,
        NodeSource::Discovery,
        NodeSource::Kubernetes,
    ];
    let live = s.fleet.clusters.get_mut("healthy").expect("healthy");
    for (node, source) in live.status.nodes.iter_mut().zip(sources) {
        node.source = source;
    }
    update(&mut s, Action::OpenSelected);
    let wide = text_at(&s, 200, 50);
    assert!(wide.contains("SOURCE"), "{wide}");
    let w2 = wide.lines().find(|l| l.contains("w-2")).unwrap_or_default();
    assert!(w2.contains("kubernetes"), "{wide}");
    assert!(!text_at(&s, 80, 24).contains("SOURCE"));
    insta::assert_snapshot!("nodes_sources", all_renders(&s));
    update(&mut s, Action::Move(Move::Last));
    update(&mut s, Action::OpenSelected);
    assert_eq!(s.screen, Screen::NodeDetail);
    let detail = text_at(&s, 80, 24);
    assert!(
        detail
            .lines()
            .any(|l| l.contains("source") && l.contains("kubernetes")),
        "{detail}"
    );
    insta::assert_snapshot!("node_detail_sources", all_renders(&s));
}

#[test]
fn cp2_down_says_what_is_wrong_everywhere() {
    let mut s = scenarios::state(&["cp2-down"]);
    let fleet = text_at(&s, 80, 24);
    assert!(fleet.contains("cp-2 DOWN"), "fleet row:\n{fleet}");
    update(&mut s, Action::OpenSelected);
    let nodes = text_at(&s, 80, 24);
    assert!(nodes.contains("DOWN"), "nodes pane:\n{nodes}");
    assert!(nodes.contains("stale 35s"), "nodes pane:\n{nodes}");
    update(&mut s, Action::Show(Screen::Cluster(Pane::Etcd)));
    let etcd = text_at(&s, 80, 24);
    assert!(
        etcd.contains("3 members, 2 healthy, quorum 2, can lose 0"),
        "etcd pane:\n{etcd}"
    );
    let healthy = {
        let mut s = scenarios::state(&["healthy"]);
        update(&mut s, Action::OpenSelected);
        update(&mut s, Action::Show(Screen::Cluster(Pane::Etcd)));
        text_at(&s, 80, 24)
    };
    assert!(
        healthy.contains("3 members, 3 healthy, quorum 2, can lose 1"),
        "{healthy}"
    );
}

#[test]
fn mixed_talos_minors_are_a_skew_warning_with_its_reason() {
    let mut s = opened(scenarios::MIXED);
    let fleet_row = {
        let mut f = scenarios::state(&[scenarios::MIXED]);
        update(&mut f, Action::Back);
        text_at(&f, 200, 50)
    };
    assert!(fleet_row.contains("v1.10.7..v1.11.3"), "{fleet_row}");
    update(&mut s, Action::Show(Screen::Cluster(Pane::Versions)));
    let text = text_at(&s, 200, 50);
    assert!(
        text.contains("nodes on different Talos minors: v1.10.7 on w-2"),
        "{text}"
    );
    assert!(
        text.contains("Why: Talos supports a range of Kubernetes versions"),
        "{text}"
    );
    // Upgrades are planned from the lowest node: v1.10 goes to v1.11 first.
    assert!(text.contains("Talos upgrade targets: v1.11."), "{text}");
}

#[test]
fn paused_and_filtered_and_sorted() {
    let mut s = opened("cp2-down");
    update(&mut s, Action::TogglePause);
    update(&mut s, Action::OpenFilter);
    for c in "CP".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    update(&mut s, Action::SortReverse);
    let text = text_at(&s, 80, 24);
    assert!(
        text.lines().next().unwrap_or("").contains("PAUSED"),
        "{text}"
    );
    assert!(text.contains("filter: CP"), "{text}");
    assert!(!text.contains("w-1"), "{text}");
    insta::assert_snapshot!(text);
}

/// An etcd alarm makes its member unhealthy in the pane, the fleet row and
/// health; the alarm and the member errors print the member id in hex, as the
/// table does; one member is "1 member".
#[test]
fn an_etcd_alarm_makes_the_member_unhealthy_everywhere() {
    let mut s = scenarios::state(&[scenarios::NOSPACE]);
    let fleet = text_at(&s, 200, 50);
    assert!(fleet.contains("cp-1 alarm NOSPACE"), "fleet row:\n{fleet}");
    update(&mut s, Action::OpenSelected);
    update(&mut s, Action::Show(Screen::Cluster(Pane::Etcd)));
    let etcd = text_at(&s, 200, 50);
    assert!(etcd.contains("1 member, 0 healthy"), "etcd pane:\n{etcd}");
    assert!(!etcd.contains("members,"), "etcd pane:\n{etcd}");
    assert!(
        !etcd.contains("memberID:4204005535780235265"),
        "decimal member id:\n{etcd}"
    );
    assert!(
        etcd.contains("memberID:3a57a0c2d1f4e801"),
        "etcd pane:\n{etcd}"
    );
    insta::assert_snapshot!(all_renders(&s));
}
