//! Column widths come from content (issue 16, items 2 and 8): versions and
//! guard names are never cut, a name column takes what its names need and no
//! more, the sort arrow never shortens a header, and the fleet shows its
//! problems first. Snapshots at 80x24 and 200x50 on pre-release versions.
mod view_support;

use taloscope::app::screen::{Pane, Screen};
use taloscope::app::state::AppState;
use taloscope::app::{Action, update};
use taloscope::upgrade::GuardId;
use taloscope::views::upgrade_plan as kube_plan;
use view_support::scenarios::{self, PRERELEASE};
use view_support::{all_renders, screen_text_at};

const TALOS: &str = "v1.12.0-beta.1";
const KUBERNETES: &str = "v1.35.0-rc.1";

fn nodes_pane(scenario: &str) -> AppState {
    let mut s = scenarios::state(&[scenario]);
    update(&mut s, Action::OpenSelected);
    assert_eq!(s.screen, Screen::Cluster(Pane::Nodes));
    s
}

/// The header line of the table on screen (the line holding `first`).
fn header<'t>(text: &'t str, first: &str) -> &'t str {
    text.lines()
        .find(|l| l.contains(first))
        .unwrap_or_else(|| panic!("no header with {first}:\n{text}"))
}

#[test]
fn versions_are_whole_in_the_nodes_pane_at_80_and_200() {
    let s = nodes_pane(PRERELEASE);
    for (w, h) in [(80, 24), (200, 50)] {
        let text = screen_text_at(&s, w, h);
        assert!(text.contains(TALOS), "{w}x{h}:\n{text}");
        assert!(text.contains(KUBERNETES), "{w}x{h}:\n{text}");
    }
    // NAME holds "cp-1" and its title, not a third of the screen.
    let wide = screen_text_at(&s, 200, 50);
    let line = header(&wide, "ROLE");
    let name_to_role = line.find("ROLE").unwrap() - line.find("NAME").unwrap();
    assert!(
        name_to_role < 12,
        "NAME takes {name_to_role} cells:\n{line}"
    );
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn versions_are_whole_in_the_fleet_at_80_and_200() {
    let s = scenarios::state(&[PRERELEASE]);
    for (w, h) in [(80, 24), (200, 50)] {
        let text = screen_text_at(&s, w, h);
        assert!(text.contains(TALOS), "{w}x{h}:\n{text}");
        assert!(text.contains(KUBERNETES), "{w}x{h}:\n{text}");
    }
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn guard_names_are_whole_at_200() {
    let mut s = nodes_pane(scenarios::HEALTHY_112);
    update(&mut s, Action::Open("kube-plan"));
    assert_eq!(s.screen, Screen::Module(kube_plan::KUBE_PLAN));
    let guards: Vec<GuardId> = s
        .screens
        .find::<kube_plan::KubePlanModule>()
        .and_then(|m| m.plan.as_ref())
        .map(|p| p.guards.shown.iter().map(|g| g.id).collect())
        .unwrap_or_default();
    // "Talos supports target" is longer than the 20 cells GUARD had.
    assert!(guards.contains(&GuardId::TalosSupportsTarget), "{guards:?}");
    let text = screen_text_at(&s, 200, 50);
    for id in guards {
        assert!(text.contains(id.title()), "{}:\n{text}", id.title());
    }
}

#[test]
fn the_sort_arrow_does_not_shorten_a_header() {
    let mut s = scenarios::state(&["healthy"]);
    // s from the default (WARN) to ISSUE, then past the columns 80 does not
    // show (UPDATED) back to NAME, REACH.
    for _ in 0..3 {
        update(&mut s, Action::SortNext);
    }
    let text = screen_text_at(&s, 80, 24);
    assert!(header(&text, "NAME").contains("REACH↑"), "{text}");
}

#[test]
fn the_fleet_shows_problems_first() {
    // By name, healthy would come first: mixed (w-2 on an older Talos)
    // warns, and cp2-down (a node down, etcd short) fails.
    let s = scenarios::state(&["healthy", "mixed", "cp2-down"]);
    for (w, h) in [(80, 24), (200, 50)] {
        let text = screen_text_at(&s, w, h);
        let row = |name: &str| {
            text.lines()
                .position(|l| l.contains(&format!(" {name} ")))
                .unwrap_or_else(|| panic!("no row {name}:\n{text}"))
        };
        assert!(row("cp2-down") < row("mixed"), "{text}");
        assert!(row("mixed") < row("healthy"), "{text}");
    }
}
