//! Snapshots of the log view at 80x24 and 200x50 in default, NO_COLOR and ASCII modes: etcd of
//! one node, of three control planes interleaved and coloured per node, filtered, paused,
//! scrolled with timestamps, a node's kernel log, a stream's end shown inline, and the service
//! picker of a node.
mod view_support;

use crossterm::event::KeyCode;
use taloscope::app::action::AppEvent;
use taloscope::app::screen::{Pane, Screen};
use taloscope::app::screens::ScreenNews;
use taloscope::app::state::AppState;
use taloscope::app::{Action, update};
use taloscope::views::logs::{LogEvent, LogReport, LogsScreen, NAME};
use view_support::scenarios;
use view_support::{all_renders, press, screen_text_at};

/// The etcd line the sim's node writes as line `i` (zap JSON), with a recognisable revision.
fn etcd_line(node: usize, i: u64) -> String {
    format!(
        r#"{{"level":"info","ts":"2026-12-01T19:5{node}:{:02}.{:06}Z","caller":"etcdserver/server.go:2146","msg":"applied entries","revision":{}}}"#,
        i % 60,
        i * 1000,
        1000 + i * 7
    )
}

fn on_healthy(pane: Pane) -> AppState {
    let mut s = scenarios::state(&["healthy"]);
    update(&mut s, Action::OpenSelected);
    update(&mut s, Action::Show(Screen::Cluster(pane)));
    s
}

/// Opens the input line with the key `open` and types `text` into it, Enter ending it.
fn typed(s: &mut AppState, open: char, text: &str) {
    press(s, KeyCode::Char(open));
    for c in text.chars() {
        update(s, Action::Insert(c));
    }
    update(s, Action::Submit);
}

fn report(s: &mut AppState, node: usize, report: LogReport) {
    let screen = s.screens.find::<LogsScreen>().expect("the log screen");
    let view = screen.view.as_ref().expect("a log view").id();
    let event = LogEvent { view, node, report };
    update(
        s,
        Action::Event(AppEvent::Screen(ScreenNews::new(NAME, event))),
    );
}

fn lines(s: &mut AppState, node: usize, lines: Vec<String>) {
    // 2026-12-01 19:58:20 UTC.
    report(
        s,
        node,
        LogReport::Lines {
            lines,
            received: 1_796_155_100,
        },
    );
}

/// etcd of the three control planes, lines arriving a few at a time from each in turn.
fn three_nodes() -> AppState {
    let mut s = on_healthy(Pane::Etcd);
    press(&mut s, KeyCode::Char('l'));
    for round in 0..20u64 {
        for node in 0..3 {
            let i = round * 2 + node as u64;
            lines(&mut s, node, vec![etcd_line(node, i)]);
        }
    }
    s
}

#[test]
fn one_node() {
    let mut s = on_healthy(Pane::Nodes);
    typed(&mut s, ':', "logs etcd cp-2");
    assert_eq!(s.screen, Screen::Module(NAME));
    lines(&mut s, 0, (0..30).map(|i| etcd_line(1, i)).collect());
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("Logs: etcd of cp-2"), "{text}");
    assert!(text.contains("following; lines 12-30 of 30"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn three_nodes_interleaved() {
    let s = three_nodes();
    let text = screen_text_at(&s, 200, 50);
    assert!(text.contains("Logs: etcd of cp-1, cp-2, cp-3"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn filtered() {
    let mut s = three_nodes();
    typed(&mut s, '/', "revision\":10");
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("filter /revision\":10"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn paused_with_new_lines() {
    let mut s = three_nodes();
    press(&mut s, KeyCode::Char(' '));
    lines(&mut s, 2, (100..105).map(|i| etcd_line(2, i)).collect());
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("paused, 5 new"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn scrolled_with_timestamps_and_a_stream_ended() {
    let mut s = three_nodes();
    report(
        &mut s,
        1,
        LogReport::Ended {
            why: "rpc error: code = Unavailable desc = connection refused".into(),
            retry_in: 4,
        },
    );
    lines(&mut s, 0, vec![etcd_line(0, 40)]);
    lines(&mut s, 2, vec![etcd_line(2, 42)]);
    press(&mut s, KeyCode::Char('t'));
    press(&mut s, KeyCode::Up);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("cp-2: stream ended: rpc error"), "{text}");
    press(&mut s, KeyCode::Right);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("scrolled; lines"), "{text}");
    assert!(text.contains("19:58:20 cp-"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn dmesg_of_a_node() {
    let mut s = on_healthy(Pane::Nodes);
    update(&mut s, Action::OpenSelected);
    press(&mut s, KeyCode::Char('d'));
    let kernel = [
        "kern:  notice: [2026-12-01T19:40:00.000000000Z]: Linux version 6.12.48-talos (root@buildkitsandbox)",
        "kern:    info: [2026-12-01T19:40:00.000100000Z]: Command line: talos.platform=metal console=ttyS0",
        "kern: warning: [2026-12-01T19:40:01.500000000Z]: ACPI: \u{1b}[31mno IRQ\u{7} for device",
        "user:    info: [2026-12-01T19:41:00.000000000Z]: [talos] task startAllServices (1/1): done, 2.1s \u{2014} ok",
    ];
    lines(&mut s, 0, kernel.iter().map(|l| l.to_string()).collect());
    let text = screen_text_at(&s, 200, 50);
    assert!(text.contains("Logs: kernel of cp-1"), "{text}");
    assert!(!text.contains('\u{1b}'), "printable only");
    insta::assert_snapshot!(all_renders(&s));
}

/// etcd of one node with a `nodeready` beyond column 80 on some lines, and levels.
fn long_lines() -> AppState {
    let mut s = on_healthy(Pane::Nodes);
    typed(&mut s, ':', "logs etcd cp-2");
    let texts = (0..30)
        .map(|i| match i % 10 {
            4 => format!(
                r#"{{"level":"warn","ts":"2026-12-01T19:51:{i:02}Z","caller":"etcdserver/util.go:170","msg":"apply request took too long","took":"1.2s","expected-duration":"100ms","prefix":"read-only range ","request":"key:/registry/leases/kube-node-lease/nodeReady-{i}"}}"#
            ),
            7 => format!(
                r#"{{"level":"error","ts":"2026-12-01T19:51:{i:02}Z","caller":"rafthttp/peer.go:267","msg":"failed to send out heartbeat on time","heartbeat-interval":"100ms"}}"#
            ),
            _ => etcd_line(1, i),
        })
        .collect();
    lines(&mut s, 0, texts);
    s
}

#[test]
fn search_match_beyond_column_80_scrolled_into_view() {
    let mut s = long_lines();
    typed(&mut s, '/', "nodeready");
    press(&mut s, KeyCode::Home);
    press(&mut s, KeyCode::Char('n'));
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("nodeReady-4"), "{text}");
    press(&mut s, KeyCode::Char('n'));
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("nodeReady-14"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn right_stops_at_the_longest_line_and_w_wraps() {
    let mut s = long_lines();
    for _ in 0..10 {
        press(&mut s, KeyCode::Right);
    }
    // The longest line's end is at the right edge; no screen of blank lines.
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains(r#"nodeReady-24"}"#), "{text}");
    press(&mut s, KeyCode::Char('w'));
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains(r#"{"level":"warn""#), "{text}");
    assert!(text.contains(r#"nodeReady-24"}"#), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn service_picker() {
    let mut s = on_healthy(Pane::Nodes);
    press(&mut s, KeyCode::Char('l'));
    press(&mut s, KeyCode::Down);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("Logs of cp-1: which one?"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}
