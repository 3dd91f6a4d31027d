//! End-to-end in an 80x24 pseudo-terminal (NO_COLOR=1 LANG=C) on the sim's `config-drift`
//! served from the test process: `m` in w-2's node detail opens its machine configuration,
//! folded by section; `+` opens every section and each secret shows redacted, the `ghcr.io`
//! mirror it alone carries among them. Through the reader context,
//! `:config w-2` is refused: the configuration needs os:admin.
mod pty_support;

use std::time::Duration;

use pty_support::{BackgroundSim, console_on_five_nodes};

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);

#[test]
fn a_nodes_machine_config_folded_by_section_its_secrets_redacted_and_a_reader_refused() {
    let sim = BackgroundSim::start("config-drift", BOUND);
    let home = tempfile::tempdir().unwrap();
    let mut s = console_on_five_nodes(&sim, home.path(), "config-drift", BOUND);
    s.send(b"/w-2\r");
    s.wait_for("w-2 alone in the nodes pane", BOUND, |t| {
        t.contains("w-2") && !t.contains("cp-2")
    });
    s.send(b"\r");
    s.wait_for("w-2's detail", BOUND, |t| t.contains("Node w-2"));
    s.send(b"m");
    s.wait_for("w-2's config, folded", BOUND, |t| {
        t.contains("Machine config of w-2")
            && t.contains("+ machine.kubelet")
            && t.contains("+ machine.registries")
    });
    s.send(b"+");
    s.wait_for("its sections open, the token redacted", BOUND, |t| {
        t.contains("- v1alpha1") && t.contains("token: <redacted sha256:")
    });
    s.send(b"G");
    s.wait_for("the ghcr.io mirror at the end", BOUND, |t| {
        t.contains("ghcr.io")
    });
    s.send(b"\x1b");
    s.wait_for("w-2's detail again", BOUND, |t| {
        t.contains("Node w-2") && !t.contains("Machine config")
    });
    s.send(b"\x1b");
    s.wait_for("the nodes pane", BOUND, |t| t.contains("+ Nodes ("));
    s.send(b":ctx config-drift-reader\r");
    s.wait_for("the reader context in the header", BOUND, |t| {
        t.contains("via config-drift-reader")
    });
    s.send(b":config w-2\r");
    s.wait_for("the reader refused", BOUND, |t| {
        t.contains("Machine config of w-2") && t.contains("needs os:admin")
    });
    s.send(b"q");
    s.wait_for("the panes", BOUND, |t| !t.contains("Machine config"));
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
}

/// The line of the nodes pane that lists `node`.
fn row_of<'a>(text: &'a str, node: &str) -> Option<&'a str> {
    text.lines().find(|l| {
        l.trim_start_matches(['│', '|', ' ', '▶', '>'])
            .starts_with(&format!("{node} "))
    })
}

/// In a 200-column terminal the nodes pane reads every node's configuration once the first
/// round has listed them and marks w-2, whose extra `ghcr.io` mirror `config drift` names,
/// in its DRIFT column: w-2 alone. Through the reader context the column shows nothing.
#[test]
fn the_drift_column_marks_the_worker_with_the_extra_mirror_alone() {
    let sim = BackgroundSim::start("config-drift", BOUND);
    let home = tempfile::tempdir().unwrap();
    let mut s = sim.console_on_cluster(home.path(), (40, 200), "config-drift", BOUND);
    s.wait_for("w-2 marked in the DRIFT column", BOUND, |t| {
        t.contains("DRIFT") && row_of(t, "w-2").is_some_and(|r| r.contains("machine.registries"))
    });
    let text = s.text();
    for node in ["cp-1", "cp-2", "cp-3", "w-1"] {
        let row = row_of(&text, node).unwrap_or_else(|| panic!("no row of {node}:\n{text}"));
        assert!(!row.contains("machine."), "{node} marked:\n{text}");
    }
    // A reader may not read configurations: its read marks nothing, and the column goes.
    s.send(b":ctx config-drift-reader\r");
    s.wait_for("the reader context, no DRIFT column", BOUND, |t| {
        t.contains("via config-drift-reader") && !t.contains("DRIFT") && !t.contains("machine.")
    });
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
}
