//! Another console's rollout, as its Lease tells it, in the fleet row, the
//! selected-cluster line and the cluster view's summary: at 80x24 and
//! 200x50, in default, NO_COLOR and ASCII modes, and cut to fit when the
//! holder's name is long.
mod view_support;

use taloscope::app::screen::{Pane, Screen};
use taloscope::app::state::AppState;
use taloscope::app::{Action, update};
use taloscope::fleet::RolloutStatus;
use taloscope::rollout::RolloutKind;
use view_support::scenarios;
use view_support::{all_renders, text_at};

fn rollout(holder: &str) -> RolloutStatus {
    RolloutStatus {
        holder: holder.into(),
        kind: Some(RolloutKind::TalosUpgrade),
        target: Some("v1.12.0".into()),
        node_index: 3,
        node_count: 5,
        current_node: Some("cp-3".into()),
        phase: Some("rebooting".into()),
    }
}

fn opened(state: &mut AppState) {
    update(state, Action::OpenSelected);
    assert_eq!(state.screen, Screen::Cluster(Pane::Nodes));
}

const SAID: &str = "upgrade in progress by bob@jump2, node 3 of 5 (cp-3, rebooting)";

#[test]
fn fleet_shows_who_is_rolling_out() {
    let s = scenarios::state_with_rollout(&["healthy"], "healthy", &rollout("bob@jump2"));
    let narrow = text_at(&s, 80, 24);
    assert!(narrow.contains("upgrade 3/5 by"), "{narrow}");
    assert!(narrow.contains(SAID), "{narrow}");
    let wide = text_at(&s, 200, 50);
    assert!(wide.contains("upgrade 3/5 by bob@jump2"), "{wide}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn cluster_summary_shows_who_is_rolling_out() {
    let mut s = scenarios::state_with_rollout(&["healthy"], "healthy", &rollout("bob@jump2"));
    opened(&mut s);
    let narrow = text_at(&s, 80, 24);
    let said = narrow
        .lines()
        .position(|l| l.contains(SAID))
        .unwrap_or_else(|| panic!("{SAID} in\n{narrow}"));
    let next = narrow.lines().nth(said + 1).unwrap_or("");
    assert!(next.contains("healthy: 5/5 nodes Ready"), "{narrow}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn a_long_holder_is_cut_to_fit_and_the_health_line_stays() {
    let holder = "a-very-long-operator-name@a-very-long-jump-host.example.internal";
    let mut s = scenarios::state_with_rollout(&["cp2-down"], "cp2-down", &rollout(holder));
    let fleet = text_at(&s, 80, 24);
    assert!(
        fleet.contains("upgrade in progress by a-very-long"),
        "{fleet}"
    );
    assert!(
        fleet.contains("cp2-down (talos cp2-down, kube admin@cp2-down): cp-2"),
        "{fleet}"
    );
    opened(&mut s);
    let cluster = text_at(&s, 80, 24);
    assert!(
        cluster.contains("upgrade in progress by a-very-long"),
        "{cluster}"
    );
    assert!(cluster.contains("cp2-down: 4/5 nodes Ready"), "{cluster}");
    insta::assert_snapshot!(format!("{fleet}\n{cluster}"));
}

#[test]
fn no_lease_no_rollout_shown() {
    let s = scenarios::state(&["healthy"]);
    let text = text_at(&s, 200, 50);
    assert!(!text.contains("in progress"), "{text}");
}
