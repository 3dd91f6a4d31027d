//! Unit tests of the log view's state: interleaving in arrival order, the filter, pause,
//! scrolling, and the bounded buffer that drops its oldest lines but shows every kept one.
use super::*;

impl LogArea {
    /// A body of `rows` rows whose lines are never wrapped nor cut.
    fn rows(rows: usize) -> LogArea {
        LogArea {
            rows,
            room: usize::MAX,
        }
    }
}

fn nodes(names: &[&str]) -> Vec<NodeIdentity> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| NodeIdentity {
            name: n.to_string(),
            address: format!("127.0.0.{}", i + 1),
            machine_type: "worker".into(),
        })
        .collect()
}

fn view(names: &[&str]) -> LogView {
    LogView::new(7, "lab", LogSubject::Service("etcd".into()), nodes(names))
}

fn lines(view: &mut LogView, node: usize, texts: &[&str]) {
    let applied = view.apply(LogEvent {
        view: view.id(),
        node,
        report: LogReport::Lines {
            lines: texts.iter().map(|t| t.to_string()).collect(),
            received: 100,
        },
    });
    assert!(applied);
}

/// (node, text) of what a body of `rows` rows shows.
fn shown(view: &LogView, rows: usize) -> Vec<(usize, String)> {
    view.window(LogArea::rows(rows))
        .lines
        .iter()
        .map(|l| (l.node, l.text.clone()))
        .collect()
}

#[test]
fn nodes_interleave_in_arrival_order() {
    let mut v = view(&["cp-1", "cp-2", "cp-3"]);
    lines(&mut v, 0, &["a1", "a2"]);
    lines(&mut v, 2, &["c1"]);
    lines(&mut v, 1, &["b1"]);
    lines(&mut v, 0, &["a3"]);
    assert_eq!(
        shown(&v, 10),
        vec![
            (0, "a1".into()),
            (0, "a2".into()),
            (2, "c1".into()),
            (1, "b1".into()),
            (0, "a3".into())
        ]
    );
    // Following: the last screenful.
    assert_eq!(shown(&v, 2), vec![(1, "b1".into()), (0, "a3".into())]);
    assert!(v.following());
}

#[test]
fn reports_of_another_view_or_node_are_ignored() {
    let mut v = view(&["cp-1"]);
    let other = LogEvent {
        view: 8,
        node: 0,
        report: LogReport::Reconnected,
    };
    assert!(!v.apply(other));
    let no_such_node = LogEvent {
        view: 7,
        node: 3,
        report: LogReport::Reconnected,
    };
    assert!(!v.apply(no_such_node));
    assert_eq!(v.window(LogArea::rows(10)).matching, 0);
}

#[test]
fn the_filter_shows_matching_lines_and_notes_and_clears() {
    let mut v = view(&["cp-1", "cp-2"]);
    lines(
        &mut v,
        0,
        &["apply entries", "Slow fdatasync", "apply entries"],
    );
    lines(&mut v, 1, &["SLOW read", "ok"]);
    v.apply(LogEvent {
        view: 7,
        node: 1,
        report: LogReport::Ended {
            why: "connection reset\x1b[2J".into(),
            retry_in: 2,
        },
    });
    v.set_filter("slow");
    let got = shown(&v, 10);
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got[0], (0, "Slow fdatasync".into()));
    assert_eq!(got[1], (1, "SLOW read".into()));
    assert_eq!(
        got[2],
        (1, "stream ended: connection reset?[2J; again in 2s".into()),
        "a stream's end shows whatever the filter, printable"
    );
    // The node's name matches too.
    v.set_filter("CP-2");
    assert_eq!(shown(&v, 10).len(), 3);
    v.set_filter("");
    assert_eq!(shown(&v, 10).len(), 6);
}

#[test]
fn pause_holds_the_screen_and_counts_new_lines() {
    let mut v = view(&["cp-1"]);
    lines(&mut v, 0, &["1", "2", "3"]);
    v.toggle_pause();
    lines(&mut v, 0, &["4", "5"]);
    assert_eq!(shown(&v, 2), vec![(0, "2".into()), (0, "3".into())]);
    assert_eq!(v.new_since_pause(), 2);
    assert_eq!(v.window(LogArea::rows(10)).matching, 3);
    assert!(!v.following());
    v.toggle_pause();
    assert_eq!(shown(&v, 2), vec![(0, "4".into()), (0, "5".into())]);
    assert_eq!(v.new_since_pause(), 0);
    assert!(v.following());
}

#[test]
fn scrolling_stops_following_and_end_resumes() {
    let mut v = view(&["cp-1"]);
    let texts: Vec<String> = (0..10).map(|i| i.to_string()).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    lines(&mut v, 0, &refs);
    v.scroll(-3, LogArea::rows(4));
    assert_eq!(v.window(LogArea::rows(4)).first, 3);
    lines(&mut v, 0, &["10", "11"]);
    assert_eq!(
        v.window(LogArea::rows(4)).first,
        3,
        "new lines do not move a scrolled view"
    );
    v.scroll_home();
    assert_eq!(shown(&v, 2), vec![(0, "0".into()), (0, "1".into())]);
    v.scroll(100, LogArea::rows(4));
    assert!(v.following(), "scrolling to the end follows again");
    v.scroll(-1, LogArea::rows(4));
    v.toggle_pause();
    v.follow();
    assert!(v.following(), "End follows and ends a pause");
    assert_eq!(v.window(LogArea::rows(4)).first, 8);
}

#[test]
fn the_buffer_drops_its_oldest_lines_and_shows_every_kept_one() {
    let mut v = view(&["cp-1", "cp-2"]);
    let total = MAX_LOG_LINES + 25;
    for i in 0..total {
        lines(&mut v, i % 2, &[&format!("line {i}")]);
    }
    assert_eq!(v.dropped, 25);
    assert_eq!(v.lines.len(), MAX_LOG_LINES);
    assert_eq!(v.lines.front().map(|l| l.text.as_str()), Some("line 25"));
    // Page through from the oldest kept line: every kept line shows once, in order.
    v.scroll_home();
    let rows = 19;
    let mut seen = Vec::new();
    loop {
        let window = v.window(LogArea::rows(rows));
        let start = window.first;
        for (i, l) in window.lines.iter().enumerate() {
            if start + i >= seen.len() {
                seen.push(l.text.clone());
            }
        }
        if v.following() || start + rows >= window.matching {
            break;
        }
        v.scroll(rows as isize - 1, LogArea::rows(rows));
    }
    let expected: Vec<String> = (25..total).map(|i| format!("line {i}")).collect();
    assert_eq!(seen, expected);
    // A scroll position whose line was dropped starts at the oldest kept one.
    v.scroll_home();
    lines(&mut v, 0, &["newest"]);
    assert_eq!(v.window(LogArea::rows(3)).lines[0].text, "line 26");
}

#[test]
fn subjects_name_the_same_sources_as_the_headless_commands() {
    use crate::talos::LogSource;
    assert_eq!(
        LogSubject::named("etcd"),
        LogSubject::Service("etcd".into())
    );
    assert_eq!(
        LogSubject::named("kube-apiserver"),
        LogSubject::StaticPod("kube-apiserver".into())
    );
    assert_eq!(
        LogSubject::named("etcd").source_for("cp-1"),
        LogSource::requested("etcd", false)
    );
    assert_eq!(
        LogSubject::named("kube-scheduler").source_for("cp-2"),
        LogSource::requested("kube-system/kube-scheduler-cp-2:kube-scheduler", true)
    );
    assert_eq!(LogSubject::Kernel.source_for("w-1"), LogSource::Kernel);
}

#[test]
fn sideways_scroll_stops_at_the_longest_line() {
    let mut v = view(&["cp-1"]);
    let long = format!("{}END", "x".repeat(117));
    lines(&mut v, 0, &["short", &long]);
    v.shift(false, 60);
    assert_eq!(v.column, 0);
    for _ in 0..10 {
        v.shift(true, 60);
    }
    // The longest line (120 columns) ends at the right edge of 60 columns.
    assert_eq!(v.column, 60);
    v.shift(false, 60);
    assert_eq!(v.column, 40);
    // Wrapped lines do not scroll sideways.
    v.toggle_wrap();
    v.shift(true, 60);
    assert_eq!(v.column, 0);
}

#[test]
fn matches_are_found_case_insensitively_without_overlap() {
    assert_eq!(
        match_ranges("NodeReady nodeready", "nodeready"),
        [(0, 9), (10, 19)]
    );
    assert_eq!(match_ranges("aaaa", "aa"), [(0, 2), (2, 4)]);
    assert_eq!(match_ranges("é-NODE", "node"), [(3, 7)]);
    assert!(match_ranges("abc", "").is_empty());
    assert!(match_ranges("ab", "abc").is_empty());
}

#[test]
fn n_jumps_to_the_next_match_and_scrolls_it_into_view() {
    let mut v = view(&["cp-1"]);
    let far = format!("{}NodeReady here", "-".repeat(100));
    let texts: Vec<String> = (0..30)
        .map(|i| match i {
            3 => far.clone(),
            20 => "nodeready at the start".to_string(),
            _ => format!("line {i} nodeready"),
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    lines(&mut v, 0, &refs);
    // No filter yet: nothing to jump to.
    let area = LogArea { rows: 5, room: 78 };
    assert!(!v.jump(true, area));
    v.set_filter("NODEREADY");
    v.scroll_home();
    assert!(v.jump(true, area));
    assert_eq!(v.hit.map(|h| (h.seq, h.start)), Some((0, 7)));
    assert!(v.jump(true, area));
    assert!(v.jump(true, area));
    assert!(v.jump(true, area));
    // The fourth match is line 3's, at column 100: the text scrolled so that it is in view.
    let hit = v.hit.expect("a hit");
    assert_eq!((hit.seq, hit.start), (3, 100));
    assert!(
        v.column <= 100 && 109 <= v.column + area.room,
        "{}",
        v.column
    );
    assert!(!v.following());
    // N goes back, and back round from the first to the last.
    assert!(v.jump(false, area));
    assert_eq!(v.hit.map(|h| h.seq), Some(2));
    v.set_filter("nodeready");
    assert_eq!(v.hit, None);
    v.scroll_home();
    assert!(v.jump(false, area));
    assert_eq!(v.hit.map(|h| h.seq), Some(29));
    // The jumped-to line is on screen.
    let window = v.window(area);
    assert!(window.lines.iter().any(|l| l.seq == 29));
    // A text that occurs nowhere.
    v.set_filter("absent");
    assert!(!v.jump(true, area));
}

#[test]
fn wrapped_lines_take_rows_and_the_last_screenful_still_ends_with_the_newest() {
    let mut v = view(&["cp-1"]);
    let long = "y".repeat(25);
    lines(&mut v, 0, &["a", &long, "b", &long]);
    v.toggle_wrap();
    let area = LogArea { rows: 4, room: 10 };
    // The newest long line takes 3 rows, "b" one: the screen holds those two.
    let texts = |v: &LogView| -> Vec<String> {
        v.window(area)
            .lines
            .iter()
            .map(|l| l.text.clone())
            .collect()
    };
    assert_eq!(texts(&v), ["b".to_string(), long.clone()]);
    v.scroll(-1, area);
    assert_eq!(texts(&v), [long.clone(), "b".to_string()]);
    v.toggle_wrap();
    assert_eq!(v.window(area).lines.len(), 4);
}

#[test]
fn f_holds_the_screen_and_follows_again() {
    let mut v = view(&["cp-1", "cp-2"]);
    lines(&mut v, 0, &["1", "2", "3", "4"]);
    let area = LogArea::rows(2);
    v.toggle_follow(area);
    assert!(!v.following());
    lines(&mut v, 1, &["5"]);
    assert_eq!(v.window(area).lines[0].text, "3");
    v.toggle_follow(area);
    assert!(v.following());
    assert_eq!(v.window(area).lines[1].text, "5");
}

#[test]
fn the_node_prefix_is_there_only_when_several_nodes_are_merged() {
    let mut one = view(&["cp-1"]);
    assert_eq!((one.prefixed(), one.prefix_width()), (false, 0));
    assert_eq!(one.text_room(78), 78);
    one.timestamps = true;
    assert_eq!(one.text_room(78), 78 - TIMESTAMP_WIDTH);
    let three = view(&["cp-1", "cp-2", "worker-10"]);
    assert_eq!(three.prefix_width(), "worker-10: ".len());
}

#[test]
fn a_name_with_namespace_pod_and_container_is_a_kubernetes_container() {
    let id = "kube-system/coredns-6b9f:coredns";
    let subject = LogSubject::named(id);
    assert_eq!(subject, LogSubject::Container(id.to_string()));
    assert_eq!(
        subject.source_for("w-1"),
        LogSource::Container(id.to_string())
    );
    assert_eq!(subject.name(), id);
    assert_eq!(
        LogSubject::named("kube-apiserver"),
        LogSubject::StaticPod("kube-apiserver".into())
    );
    assert_eq!(
        LogSubject::named("kubelet"),
        LogSubject::Service("kubelet".into())
    );
}
