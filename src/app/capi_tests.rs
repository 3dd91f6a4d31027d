//! The console's side of Cluster API ownership: an upgrade plan of a cluster a management
//! cluster owns is refused with the CAPI way named, as soon as the owner is known.
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::app::action::{Action, AppEvent};
use crate::app::keymap;
use crate::app::plan_screen::GuardedPlan;
use crate::app::screen::{Pane, Screen};
use crate::app::state::AppState;
use crate::app::test_fixtures::cluster_screen;
use crate::app::update::update;
use crate::capi::{CapiOwner, CapiView};
use crate::fleet::FleetEvent;
use crate::upgrade::fixtures;
use crate::upgrade::{GuardId, Verdict};

fn owned_by_capi(state: &mut AppState) {
    let cluster = state.current.clone().expect("a cluster in use");
    let mut view = CapiView::default();
    view.owners.insert(
        cluster,
        CapiOwner {
            management: "mgmt".into(),
            namespace: "clusters".into(),
            name: "workload".into(),
        },
    );
    let event = FleetEvent::Capi {
        view: Box::new(view),
        at: Instant::now(),
    };
    update(state, Action::Event(AppEvent::Fleet(event)));
}

fn press(state: &mut AppState, c: char) {
    let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    let action = keymap::action_for(state, &key).expect("bound");
    update(state, action);
}

#[test]
fn a_capi_owned_clusters_talos_plan_is_refused_naming_the_capi_way() {
    let mut state = cluster_screen(fixtures::healthy(), Pane::Nodes);
    press(&mut state, 'u');
    assert_eq!(state.screen, Screen::UpgradePlan);
    let plan = state.upgrade.as_ref().unwrap();
    assert_eq!(
        plan.start_refused(),
        None,
        "not owned yet: {:?}",
        plan.guards
    );
    // The management clusters are read after the plan opened: it is re-evaluated.
    owned_by_capi(&mut state);
    let plan = state.upgrade.as_ref().unwrap();
    let guard = plan
        .guards
        .shown
        .iter()
        .find(|g| g.id == GuardId::CapiOwned)
        .expect("the CAPI guard");
    assert_eq!(guard.verdict, Verdict::Fail);
    assert!(
        guard
            .reason
            .contains("owned by Cluster API (mgmt/clusters/workload)"),
        "{}",
        guard.reason
    );
    assert!(
        guard.reason.contains("infrastructure machine template"),
        "{}",
        guard.reason
    );
    assert!(plan.start_refused().is_some());
}
