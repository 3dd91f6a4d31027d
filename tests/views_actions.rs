//! Snapshots of the node and etcd actions at 80x24 and 200x50 in default, NO_COLOR and ASCII
//! modes: the actions menu over the nodes pane, the reboot plan of cp-2 on `healthy` with its
//! guards, the defragment plan on `cp2-down` (its etcd guard failing), and an action's progress.
mod view_support;

use crossterm::event::KeyCode;
use taloscope::app::screen::{Pane, Screen, TableKind};
use taloscope::app::screens::ScreenNews;
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, update};
use taloscope::approval::{
    AuditLog, Dispatcher, Gate, MutatingAction, NodeOperation, PendingConfirmation, Verdict,
};
use taloscope::node_actions::{NodeSurvey, NodeWorkloads};
use taloscope::operation::progress::ProgressEvent;
use taloscope::operation::runner_events::node_action_line;
use taloscope::views::actions::{self, Surveyed};
use view_support::scenarios;
use view_support::{all_renders_default_styles, press, screen_text_at};

/// The `pane` of `scenario`'s cluster.
fn pane(scenario: &str, pane: Pane) -> AppState {
    let mut s = scenarios::state(&[scenario]);
    update(&mut s, Action::OpenSelected);
    update(&mut s, Action::Show(Screen::Cluster(pane)));
    assert_eq!(s.screen, Screen::Cluster(pane));
    s
}

/// The nodes pane of `scenario` with `node` selected, its actions menu open.
fn menu(scenario: &str, node: &str) -> AppState {
    let mut s = pane(scenario, Pane::Nodes);
    let found = s.current_live().and_then(|live| live.status.node(node));
    let address = found.map(|n| n.address.clone());
    s.select(
        TableKind::Nodes,
        address.unwrap_or_else(|| panic!("{node} is a node of {scenario}")),
    );
    update(&mut s, Action::Open("actions"));
    assert_eq!(s.screen, Screen::Module(actions::NAME), "{:?}", s.message);
    s
}

/// The running operation's events, as the console's runner tells them.
fn progress(s: &mut AppState, events: Vec<ProgressEvent>) {
    for e in events {
        update(
            s,
            Action::Event(taloscope::app::action::progress(
                taloscope::operation::OperationKind::NodeReboot,
                e,
            )),
        );
    }
}

fn news(s: &mut AppState, surveyed: Surveyed) {
    let news = ScreenNews::new(actions::NAME, surveyed);
    update(s, Action::Event(AppEvent::Screen(news)));
}

/// The reboot plan of cp-2 on `healthy`, its survey read (a Kubernetes node, nothing to evict).
fn reboot_plan() -> AppState {
    let mut s = menu("healthy", "cp-2");
    press(&mut s, KeyCode::Enter);
    news(
        &mut s,
        Surveyed {
            cluster: "healthy".into(),
            node: "cp-2".into(),
            survey: Ok(NodeSurvey {
                kube_node: Some("cp-2".into()),
                workloads: Some(Ok(NodeWorkloads::default())),
                services: None,
            }),
        },
    );
    s
}

#[test]
fn actions_menu_over_the_nodes_pane() {
    let s = menu("healthy", "cp-2");
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("Actions: cp-2 in healthy"), "{text}");
    assert!(
        text.contains("reboot cp-2") && text.contains("drain cp-2"),
        "{text}"
    );
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn reboot_plan_with_its_guards() {
    let s = reboot_plan();
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("Reboot node cp-2 in healthy"), "{text}");
    assert!(text.contains("etcd quorum"), "{text}");
    assert!(text.contains("you type the node name"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

#[test]
fn defragment_plan_on_cp2_down_fails_on_the_unhealthy_member() {
    let mut s = pane("cp2-down", Pane::Etcd);
    update(&mut s, Action::Open("actions"));
    // No alarm: the menu offers no disarm, so defragment comes first.
    press(&mut s, KeyCode::Enter);
    assert_eq!(s.screen, Screen::Module(actions::NAME), "{:?}", s.message);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("Defragment etcd on all members"), "{text}");
    assert!(
        text.contains("fail") && text.contains("Start refused"),
        "{text}"
    );
    assert!(
        text.contains("quota 2.0 GiB") || text.contains("quota 2 GiB"),
        "{text}"
    );
    insta::assert_snapshot!(all_renders_default_styles(&s));
}

/// The dispatcher's confirmation of the reboot of cp-2 on `healthy` (auditing under `dir`).
fn reboot_confirmation(dir: &std::path::Path) -> (Dispatcher, PendingConfirmation) {
    let d = Dispatcher::new(false, AuditLog::new(dir.join("audit.log")));
    let reboot = MutatingAction::Node {
        cluster: "healthy".into(),
        node: "cp-2".into(),
        operation: NodeOperation::Reboot,
    };
    let Gate::Confirm(pending) = d.request(reboot) else {
        panic!("expected a confirmation")
    };
    (d, pending)
}

#[test]
fn the_confirmation_asks_for_the_node_name() {
    let mut s = reboot_plan();
    let dir = tempfile::tempdir().unwrap();
    let (_, pending) = reboot_confirmation(dir.path());
    update(&mut s, Action::AskConfirmation(pending));
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("Type the node name in full"), "{text}");
}

#[test]
fn progress_of_a_reboot() {
    let mut s = reboot_plan();
    let dir = tempfile::tempdir().unwrap();
    let (d, pending) = reboot_confirmation(dir.path());
    let Verdict::Proceed(approved) =
        d.answer(pending, taloscope::approval::Answer::Typed("cp-2".into()))
    else {
        panic!()
    };
    update(&mut s, Action::Approved(approved));
    for line in [
        "cp-2: cordoning",
        "cp-2: reboot requested",
        "cp-2: rebooting: not answering",
        "cp-2: rebooting: waiting for apid",
        "cp-2: back, running and ready",
    ] {
        progress(&mut s, node_action_line("cp-2", line.into()));
    }
    let text = screen_text_at(&s, 80, 24);
    assert!(
        text.contains("reboot node cp-2 in healthy: running"),
        "{text}"
    );
    assert!(text.contains("back, running and ready"), "{text}");
    let done = ProgressEvent::Finished(Ok("cp-2 rebooted and back".into()));
    progress(&mut s, vec![done]);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains(": done"), "{text}");
    insta::assert_snapshot!(all_renders_default_styles(&s));
}
