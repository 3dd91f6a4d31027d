//! Unit tests of the action screen's progress keys and the etcd menu's choices: quitting
//! while an action runs asks first, `c` cancels a running node action once (saying it stops
//! after the step), and the etcd menu offers only actions whose subject exists.
use super::*;
use crate::app::action::Action;
use crate::app::test_fixtures::{cluster_screen, press};
use crate::app::update::update;
use crate::operation::progress::OperationProgress;
use crate::operation::{CancelRule, OperationKind};
use crate::upgrade::fixtures;
use crossterm::event::KeyCode;

#[test]
fn quitting_while_an_action_runs_asks_first() {
    let mut state = cluster_screen(fixtures::healthy(), Pane::Nodes);
    *crate::app::test_fixtures::progress_mut(&mut state) =
        Some(running("reboot node cp-2", CancelRule::AfterStep, None));
    assert!(update(&mut state, Action::Quit).is_empty());
    assert!(state.quit_question.is_some());
}

#[test]
fn the_etcd_menu_offers_disarm_with_an_alarm_and_remove_member_for_a_member_no_node_runs() {
    let mut status = fixtures::healthy();
    status.etcd.alarms.push(crate::fleet::EtcdAlarmReport {
        member_id: format!("{:016x}", 2),
        hostname: Some("cp-2".into()),
        alarm: "NOSPACE".into(),
    });
    status.nodes.retain(|n| n.name != "cp-3");
    let choices = |id: u64| crate::etcd_maintenance::offered(&status, &format!("{id:016x}"));
    assert!(choices(2).contains(&crate::approval::EtcdAction::Disarm));
    assert!(!choices(2).contains(&crate::approval::EtcdAction::RemoveMember));
    assert!(choices(3).contains(&crate::approval::EtcdAction::RemoveMember));
}

#[test]
fn c_cancels_a_running_node_action_once_and_says_it_stops_after_the_step() {
    let mut state = cluster_screen(fixtures::healthy(), Pane::Nodes);
    state.screen = Screen::Module("progress");
    state.wall_clock = Some(1_000);
    let mut progress = running("reboot node cp-2", CancelRule::AfterStep, Some(940));
    progress.timeout = Some(std::time::Duration::from_secs(900));
    *crate::app::test_fixtures::progress_mut(&mut state) = Some(progress);
    let progress = state.progress().unwrap();
    assert_eq!(
        progress.elapsed(state.wall_clock).as_deref(),
        Some("elapsed 1m00s, times out after 15m00s")
    );
    let effects = press(&mut state, KeyCode::Char('c'));
    assert!(
        matches!(effects.as_slice(), [Effect::CancelAction]),
        "{effects:?}"
    );
    let progress = state.progress().unwrap();
    assert!(progress.cancelling);
    assert!(
        progress.lines.back().is_some_and(
            |l| l.starts_with("[+1m00s] cancel asked: it stops after the current step")
        ),
        "{:?}",
        progress.lines
    );
    assert!(
        press(&mut state, KeyCode::Char('c')).is_empty(),
        "asked once"
    );
}

#[test]
fn an_action_that_cannot_be_cancelled_says_so() {
    let mut state = cluster_screen(fixtures::healthy(), Pane::Nodes);
    state.screen = Screen::Module("progress");
    *crate::app::test_fixtures::progress_mut(&mut state) = Some(running(
        "delete cluster healthy",
        CancelRule::RunsToItsEnd,
        None,
    ));
    assert!(press(&mut state, KeyCode::Char('c')).is_empty());
    assert!(
        state
            .message
            .as_ref()
            .is_some_and(|m| m.text.contains("cannot be cancelled")),
        "{:?}",
        state.message
    );
}

/// The progress of `what` on healthy, started at `started`.
fn running(what: &str, cancel: CancelRule, started: Option<u64>) -> OperationProgress {
    let headline = format!("{what} in healthy");
    let kind = OperationKind::NodeReboot;
    OperationProgress::start(kind, "healthy", what, headline, cancel, started)
}
