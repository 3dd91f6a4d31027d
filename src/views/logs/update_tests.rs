//! Unit tests of the log screen's update: how it opens from the panes, node detail and the
//! command line, the picker, the keys, and the streams started and stopped as it comes and goes.
use std::time::Instant;

use crossterm::event::KeyCode;

use super::*;
use crate::app::action::{Action, AppEvent, PollerCommand};
use crate::app::screen::TableKind;
use crate::app::screens::ScreenNews;
use crate::app::state::AppState;
use crate::app::test_fixtures::{cluster_screen, press};
use crate::app::update::{apply, update};
use crate::talos::ServiceStatus;
use crate::upgrade::fixtures;
use crate::views::logs::{LogReport, LogRequest};

const LOGS: Screen = Screen::Module(NAME);

fn healthy(pane: Pane) -> AppState {
    cluster_screen(fixtures::healthy(), pane)
}

fn screen(s: &AppState) -> &LogsScreen {
    s.screens.find::<LogsScreen>().expect("the log screen")
}

fn tasks(effects: &[Effect]) -> Vec<&LogTask> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Screen(task) => task.get::<LogTask>(),
            _ => None,
        })
        .collect()
}

fn started(effects: &[Effect]) -> Vec<&LogRequest> {
    let started = tasks(effects).into_iter().filter_map(|t| match t {
        LogTask::Start(r) => Some(r),
        LogTask::Stop(_) => None,
    });
    started.collect()
}

fn stopped(effects: &[Effect]) -> Vec<u64> {
    let stopped = tasks(effects).into_iter().filter_map(|t| match t {
        LogTask::Stop(id) => Some(*id),
        LogTask::Start(_) => None,
    });
    stopped.collect()
}

fn news(event: LogEvent) -> Action {
    Action::Event(AppEvent::Screen(ScreenNews::new(NAME, event)))
}

/// Types `text` into the open input line and ends it with Enter.
fn typed(s: &mut AppState, text: &str) -> Vec<Effect> {
    for c in text.chars() {
        update(s, Action::Insert(c));
    }
    update(s, Action::Submit)
}

fn names(request: &LogRequest) -> Vec<&str> {
    request.nodes.iter().map(|n| n.name.as_str()).collect()
}

#[test]
fn l_on_the_etcd_pane_follows_etcd_of_every_control_plane() {
    let mut s = healthy(Pane::Etcd);
    let effects = press(&mut s, KeyCode::Char('l'));
    assert_eq!(s.screen, LOGS);
    let requests = started(&effects);
    assert_eq!(requests.len(), 1, "{effects:?}");
    assert_eq!(names(requests[0]), ["cp-1", "cp-2", "cp-3"]);
    assert_eq!(requests[0].subject, LogSubject::Service("etcd".into()));
    assert_eq!(requests[0].tail, crate::views::logs::DEFAULT_TAIL);
    let id = requests[0].view;
    // Lines of this view show; Esc goes back and stops the streams.
    let event = LogEvent {
        view: id,
        node: 1,
        report: LogReport::Lines {
            lines: vec!["hello".into()],
            received: 1,
        },
    };
    assert!(apply(&mut s, news(event)).redraw);
    let effects = press(&mut s, KeyCode::Esc);
    assert_eq!(s.screen, Screen::Cluster(Pane::Etcd));
    assert_eq!(stopped(&effects), [id]);
    assert!(screen(&s).view.is_none());
    // A late report of the closed view changes nothing.
    let late = LogEvent {
        view: id,
        node: 0,
        report: LogReport::Reconnected,
    };
    assert!(!apply(&mut s, news(late)).redraw);
}

#[test]
fn l_in_node_detail_picks_a_service_and_d_reads_the_kernel_log() {
    let mut s = healthy(Pane::Nodes);
    update(&mut s, Action::OpenSelected);
    assert_eq!(s.screen, Screen::NodeDetail);
    let effects = press(&mut s, KeyCode::Char('l'));
    assert_eq!(s.screen, LOGS);
    assert!(started(&effects).is_empty(), "the picker starts nothing");
    let picker = screen(&s).picker.clone().expect("the picker");
    assert_eq!(picker.node.name, "cp-1");
    // The picker keeps the node's services watched.
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::Poller(PollerCommand::UnwatchNode))),
        "{effects:?}"
    );
    let (choices, missing) = picker_choices(&s.fleet, &picker);
    assert!(missing.is_some(), "no service list yet");
    assert_eq!(
        choices.len(),
        4,
        "three static pods and the kernel: {choices:?}"
    );
    s.fleet.apply(crate::fleet::FleetEvent::NodeServices {
        cluster: "healthy".into(),
        node: "127.10.0.2".into(),
        services: Ok(vec![
            ServiceStatus {
                id: "apid".into(),
                state: "Running".into(),
                healthy: Some(true),
                last_message: String::new(),
            },
            ServiceStatus {
                id: "etcd".into(),
                state: "Running".into(),
                healthy: Some(true),
                last_message: String::new(),
            },
        ]),
        at: Instant::now(),
    });
    let (choices, missing) = picker_choices(&s.fleet, &picker);
    assert_eq!(missing, None);
    assert_eq!(
        choices[1],
        (
            LogSubject::Service("etcd".into()),
            "Running, healthy".into()
        )
    );
    press(&mut s, KeyCode::Down);
    let effects = press(&mut s, KeyCode::Enter);
    let requests = started(&effects);
    assert_eq!(requests.len(), 1);
    assert_eq!(names(requests[0]), ["cp-1"]);
    assert_eq!(requests[0].subject, LogSubject::Service("etcd".into()));
    // q goes back to node detail (not quit).
    let effects = press(&mut s, KeyCode::Esc);
    assert_eq!(s.screen, Screen::NodeDetail);
    assert_eq!(stopped(&effects).len(), 1);

    let effects = press(&mut s, KeyCode::Char('d'));
    let requests = started(&effects);
    assert_eq!(requests[0].subject, LogSubject::Kernel);
    assert_eq!(names(requests[0]), ["cp-1"]);
}

#[test]
fn the_filter_typed_on_the_log_screen_is_the_views_and_esc_clears_it() {
    let mut s = healthy(Pane::Etcd);
    press(&mut s, KeyCode::Char('l'));
    press(&mut s, KeyCode::Char('/'));
    typed(&mut s, "slow");
    let view = screen(&s).view.as_ref().expect("view");
    assert_eq!(view.filter, "slow");
    assert!(s.tables.get(TableKind::Etcd).filter.is_empty());
    let effects = press(&mut s, KeyCode::Esc);
    assert!(effects.is_empty(), "clearing the filter keeps the streams");
    assert_eq!(s.screen, LOGS);
    assert!(
        screen(&s)
            .view
            .as_ref()
            .is_some_and(|v| v.filter.is_empty())
    );
}

#[test]
fn keys_pause_and_toggle_timestamps() {
    let mut s = healthy(Pane::Etcd);
    press(&mut s, KeyCode::Char('l'));
    press(&mut s, KeyCode::Char(' '));
    press(&mut s, KeyCode::Char('t'));
    let view = screen(&s).view.as_ref().expect("view");
    assert!(view.paused_at.is_some() && view.timestamps);
    assert!(!s.paused, "the fleet's pause is not the view's");
    press(&mut s, KeyCode::End);
    assert!(screen(&s).view.as_ref().is_some_and(|v| v.following()));
}

#[test]
fn leaving_by_the_command_line_stops_the_streams() {
    let mut s = healthy(Pane::Etcd);
    let id = started(&press(&mut s, KeyCode::Char('l')))[0].view;
    let effects = command(&mut s, "fleet");
    assert_eq!(s.screen, Screen::Fleet);
    assert_eq!(stopped(&effects), [id]);
}

fn command(s: &mut AppState, line: &str) -> Vec<Effect> {
    press(s, KeyCode::Char(':'));
    typed(s, line)
}

#[test]
fn logs_and_dmesg_commands_name_nodes() {
    let mut s = healthy(Pane::Nodes);
    let effects = command(&mut s, "logs kubelet w-1 cp-2");
    assert_eq!(names(started(&effects)[0]), ["w-1", "cp-2"]);
    let effects = command(&mut s, "logs kubelet");
    assert_eq!(names(started(&effects)[0]).len(), 5, "every node");
    let effects = command(&mut s, "logs kube-apiserver");
    let request = started(&effects)[0].clone();
    assert_eq!(names(&request), ["cp-1", "cp-2", "cp-3"]);
    assert_eq!(
        request.subject,
        LogSubject::StaticPod("kube-apiserver".into())
    );
    let effects = command(&mut s, "dmesg 127.10.0.5");
    assert_eq!(names(started(&effects)[0]), ["w-1"]);
    let before = screen(&s).view.as_ref().map(LogView::id);
    command(&mut s, "dmesg nope");
    let message = s.message.clone().expect("an error");
    assert!(
        message.text.contains("no node named \"nope\""),
        "{message:?}"
    );
    assert!(message.text.contains("cp-1, cp-2, cp-3, w-1, w-2"));
    assert_eq!(screen(&s).view.as_ref().map(LogView::id), before);
    command(&mut s, "dmesg");
    assert!(
        s.message
            .as_ref()
            .is_some_and(|m| m.text.contains("needs NODE"))
    );
}

#[test]
fn l_on_the_nodes_pane_picks_for_the_selection_and_watches_its_services() {
    let mut s = healthy(Pane::Nodes);
    update(&mut s, Action::Move(Move::Down));
    let effects = press(&mut s, KeyCode::Char('l'));
    assert_eq!(
        screen(&s).picker.as_ref().map(|p| p.node.name.as_str()),
        Some("cp-2")
    );
    assert!(effects.iter().any(|e| matches!(
        e,
        Effect::Poller(PollerCommand::WatchNode { node, .. }) if node == "127.10.0.3"
    )));
    let effects = press(&mut s, KeyCode::Esc);
    assert_eq!(s.screen, Screen::Cluster(Pane::Nodes));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::Poller(PollerCommand::UnwatchNode)))
    );
}

#[test]
fn l_on_the_versions_pane_says_where_logs_open() {
    let mut s = healthy(Pane::Versions);
    let effects = press(&mut s, KeyCode::Char('l'));
    assert!(effects.is_empty());
    assert_eq!(s.screen, Screen::Cluster(Pane::Versions));
    assert!(s.message.is_some());
}

#[test]
fn the_footer_and_help_show_the_shells_keys_less_those_the_screen_binds() {
    use crate::app::keymap::{KeyContext, footer_hints, shown};
    let mut s = healthy(Pane::Etcd);
    press(&mut s, KeyCode::Char('l'));
    let footer = footer_hints(&s);
    assert!(
        footer.contains(&("Esc/q".to_string(), "back")),
        "{footer:?}"
    );
    assert!(
        footer.contains(&("Ctrl-c".to_string(), "quit")),
        "{footer:?}"
    );
    let shell: Vec<String> = (shown(KeyContext::Screen(NAME), &s).into_iter())
        .map(|line| line.keys)
        .collect();
    assert_eq!(shell, [":", "?", "Ctrl-c"]);
    // q goes back to the etcd pane; the streams stop.
    let effects = press(&mut s, KeyCode::Char('q'));
    assert_eq!(s.screen, Screen::Cluster(Pane::Etcd));
    assert_eq!(stopped(&effects).len(), 1);
}
