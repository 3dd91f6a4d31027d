//! End-to-end: the console in an 80x24 pseudo-terminal (NO_COLOR=1 LANG=C) on the sim's
//! `healthy` cluster, served from the test process on loopback addresses. `l` on the etcd pane
//! follows etcd of the three control planes; once lines written after it opened have arrived,
//! Space pauses it and the test pages through every line it holds. Each node's lines must be
//! an unbroken run of what `taloscope logs` prints headlessly for that node (the sim writes
//! line `i` of a log the same every time, with its own timestamp): none dropped, none twice,
//! none out of order. Esc then goes back to the etcd pane.
mod pty_support;

use std::collections::BTreeMap;
use std::time::Duration;

use pty_support::{BackgroundSim, PtySession};

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);
/// Simulated seconds per real second: etcd writes a line every 2 simulated seconds, so each
/// node sends one every half second while the view follows.
const TIME_SCALE: f64 = 4.0;
/// Lines each node sends of its past when the view opens (the console's default tail).
const TAIL: usize = taloscope::views::logs::DEFAULT_TAIL as usize;
/// New lines per node the test waits for while following.
const FOLLOWED: usize = 6;
const NODES: [&str; 3] = ["cp-1", "cp-2", "cp-3"];

/// The console at 80x24 on `cluster` of `sim` (its files under `home`), its nodes pane shown
/// with the control planes.
fn console_on(sim: &BackgroundSim, home: &std::path::Path, cluster: &str) -> PtySession {
    let mut args = sim.demo_console_args();
    args.extend(["--context".to_string(), cluster.to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let env = [("NO_COLOR", "1".to_string()), ("LANG", "C".to_string())];
    let mut s = PtySession::start(24, 80, home, &args, &env);
    s.wait_for("the nodes pane", BOUND, |t| {
        t.contains("+ Nodes (") && t.contains("cp-3")
    });
    s
}

/// The title's position: (first, last, of) from `lines A-B of N`.
fn position(screen: &str) -> Option<(usize, usize, usize)> {
    let at = screen.find("lines ")?;
    let rest = &screen[at + "lines ".len()..];
    let (range, rest) = rest.split_once(" of ")?;
    let total: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let (a, b) = range.split_once('-')?;
    Some((a.parse().ok()?, b.parse().ok()?, total.parse().ok()?))
}

/// (node, the etcd line's `ts`) of each log line on screen, top to bottom.
fn shown_lines(screen: &str) -> Vec<(String, String)> {
    screen
        .lines()
        .filter_map(|row| {
            let row = row.strip_prefix("| ")?;
            let (node, text) = row.split_once(": ")?;
            let ts = text.split_once(r#""ts":""#)?.1.split_once('"')?.0;
            Some((node.trim().to_string(), ts.to_string()))
        })
        .collect()
}

/// The `ts` of every line of `node`'s etcd log as `taloscope logs` prints it.
fn headless_stamps(sim: &BackgroundSim, home: &std::path::Path, node: &str) -> Vec<String> {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_taloscope"))
        .env_clear()
        .env("HOME", home)
        .env("TALOSCOPE_STATE_DIR", home.join("headless-state"))
        .args(["--talosconfig", &sim.talosconfig()])
        .args(["--kubeconfig", &sim.kubeconfig()])
        .args(["--context", "healthy", "logs", "--node", node, "etcd"])
        .output()
        .expect("run taloscope logs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("an etcd JSON line");
            v["ts"].as_str().expect("ts").to_string()
        })
        .collect()
}

#[test]
fn etcd_of_three_control_planes_shows_every_line_the_sim_sends() {
    let home = tempfile::tempdir().expect("temp home");
    let sim = BackgroundSim::start_scaled("healthy", TIME_SCALE, BOUND);
    let mut s = console_on(&sim, home.path(), "healthy");
    s.send(b"2");
    s.wait_for("the etcd pane", BOUND, |t| t.contains("+ etcd ("));
    s.send(b"l");
    // The tail of each node, then lines written since, all followed at once.
    let enough = NODES.len() * (TAIL + FOLLOWED);
    s.wait_for("etcd of three nodes, followed", BOUND, |t| {
        t.contains("Logs: etcd of cp-1, cp-2, cp-3")
            && t.contains("following;")
            && position(t).is_some_and(|(_, _, n)| n >= enough)
    });
    s.send(b" ");
    s.wait_for("the pause", BOUND, |t| t.contains("paused, "));
    let (_, _, total) = position(&s.text()).expect("a position");
    assert!(total >= enough, "{}", s.text());

    // Page through what the view holds, oldest first.
    s.send(b"g");
    s.wait_for("the oldest line", BOUND, |t| {
        position(t).is_some_and(|(first, _, _)| first == 1)
    });
    let mut held: Vec<(String, String)> = Vec::new();
    loop {
        let screen = s.text();
        let (first, last, of) = position(&screen).expect("a position");
        assert_eq!(of, total, "paused, the count holds:\n{screen}");
        assert!(screen.is_ascii(), "LANG=C must give ASCII only:\n{screen}");
        let rows = shown_lines(&screen);
        assert_eq!(rows.len(), last + 1 - first, "{screen}");
        assert!(first <= held.len() + 1, "a page skipped lines:\n{screen}");
        for (i, row) in rows.into_iter().enumerate() {
            if first + i > held.len() {
                held.push(row);
            }
        }
        if last == total {
            break;
        }
        s.send(b"\x1b[6~");
        s.wait_for("the next page", BOUND, |t| {
            position(t).is_some_and(|(next, _, _)| next > first)
        });
    }
    assert_eq!(held.len(), total);

    let mut by_node: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (node, ts) in held {
        by_node.entry(node).or_default().push(ts);
    }
    assert_eq!(
        by_node.keys().map(String::as_str).collect::<Vec<_>>(),
        NODES,
        "no other line (a stream's end) in the view"
    );
    for node in NODES {
        let shown = &by_node[node];
        let printed = headless_stamps(&sim, home.path(), node);
        let start = printed
            .iter()
            .position(|ts| ts == &shown[0])
            .unwrap_or_else(|| panic!("{node}'s first line {} printed headlessly", shown[0]));
        assert!(
            shown.len() >= TAIL + FOLLOWED,
            "{node}: the tail and the followed lines: {}",
            shown.len()
        );
        assert_eq!(
            &printed[start..start + shown.len()],
            &shown[..],
            "{node}: every line, once, in order"
        );
    }

    s.send(b"\x1b");
    s.wait_for("the etcd pane again", BOUND, |t| {
        t.contains("+ etcd (") && !t.contains("Logs: etcd")
    });
    let code = s.quit(BOUND);
    assert_eq!(code, Some(0));
}

#[test]
fn a_node_that_is_down_is_said_inline_and_the_others_go_on() {
    let home = tempfile::tempdir().expect("temp home");
    let sim = BackgroundSim::start_scaled("cp2-down", TIME_SCALE, BOUND);
    let mut s = console_on(&sim, home.path(), "cp2-down");
    s.send(b"2");
    s.wait_for("the etcd pane", BOUND, |t| t.contains("+ etcd ("));
    s.send(b"l");
    s.wait_for("cp-2's end, inline", BOUND, |t| {
        t.contains("Logs: etcd of cp-1, cp-2, cp-3") && t.contains("cp-2: stream ended: ")
    });
    // The two members that run go on: their tails, then new lines.
    let (_, _, seen) = position(&s.text()).expect("a position");
    s.wait_for("the others' lines", BOUND, |t| {
        position(t).is_some_and(|(_, _, n)| n >= (seen + 4).max(2 * TAIL + 2))
    });
    let screen = s.text();
    let nodes: Vec<String> = shown_lines(&screen).into_iter().map(|(n, _)| n).collect();
    assert!(
        nodes.iter().any(|n| n == "cp-1") && nodes.iter().any(|n| n == "cp-3"),
        "{screen}"
    );
    // q goes back from the logs; on the pane it quits.
    s.send(b"q");
    s.wait_for("the etcd pane again", BOUND, |t| t.contains("+ etcd ("));
    let code = s.quit(BOUND);
    assert_eq!(code, Some(0));
}

/// Where the text `"revision":` starts among the etcd lines the sim writes: past column 80.
const REVISION: &str = r#""revision":"#;

#[test]
fn a_filter_match_beyond_column_80_is_scrolled_into_view_by_n() {
    let home = tempfile::tempdir().expect("temp home");
    let sim = BackgroundSim::start_scaled("healthy", TIME_SCALE, BOUND);
    let mut s = console_on(&sim, home.path(), "healthy");
    s.send(b":logs etcd cp-1\r");
    // One node: its lines have no node prefix, and at 80 columns the revision is cut off.
    s.wait_for("etcd of cp-1, followed", BOUND, |t| {
        t.contains("Logs: etcd of cp-1 ") && t.contains(r#"| {"level":"#)
    });
    assert!(!s.text().contains(REVISION), "{}", s.text());
    s.send(b"/revision\r");
    s.wait_for("the filter", BOUND, |t| t.contains("filter /revision"));
    s.send(b"n");
    s.wait_for("the match scrolled into view", BOUND, |t| {
        t.contains(REVISION) && t.contains("scrolled;")
    });
    // Right as far as it goes: the longest line's end stays on screen.
    s.send(b"\x1b");
    s.wait_for("the filter cleared", BOUND, |t| !t.contains("filter /"));
    for _ in 0..10 {
        s.send(b"\x1b[C");
    }
    s.wait_for("the lines' ends", BOUND, |t| {
        t.lines().any(|row| row.trim_end().ends_with("} |"))
    });
    s.send(b"q");
    s.wait_for("the nodes pane again", BOUND, |t| t.contains("+ Nodes ("));
    assert_eq!(s.quit(BOUND), Some(0));
}
