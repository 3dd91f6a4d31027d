//! End-to-end in an 80x24 pseudo-terminal (NO_COLOR=1 LANG=C) on the sim's
//! `capi-stuck-rollout` served from the test process: names cut to fit keep what tells rows
//! apart. The nodes pane's `capi-work-cp-…` rows and the CAPI tree's control-plane Machines
//! (one of them stuck) all read differently, and the selected one is named in full.
mod pty_support;
mod upgrade_common;

use std::collections::BTreeSet;
use std::time::Duration;

use pty_support::{PtySession, env_on};
use upgrade_common::{builtin, start};

const WORK: &str = "capi-work";
/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);

/// The nodes pane's NAME cells: the first word of each row under the header.
fn node_names(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.contains("+ Nodes ("))
        .skip(2)
        .take_while(|l| l.starts_with("| "))
        .filter_map(|l| {
            l.trim_start_matches(['|', ' ', '>'])
                .split_whitespace()
                .next()
        })
        .filter(|name| name.starts_with("capi-"))
        .map(String::from)
        .collect()
}

/// The CAPI tree's control-plane Machine names as drawn.
fn machine_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split("- Machine/").nth(1))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(String::from)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_names_keep_the_rows_apart_at_80_columns() {
    let fx = start(builtin("capi-stuck-rollout")).await;
    let home = tempfile::tempdir().expect("temp home");
    let env = env_on(&fx.sim.talosconfig_path(), &fx.sim.kubeconfig_path());
    let mut s = PtySession::start(24, 80, home.path(), &[], &env);
    s.wait_for("the fleet", BOUND, |t| {
        t.contains(WORK) && t.contains("Enter open")
    });
    s.send(format!(":ctx {WORK}\r").as_bytes());
    s.wait_for("the workload's nodes, told apart", BOUND, |t| {
        let names = node_names(t);
        let distinct: BTreeSet<&String> = names.iter().collect();
        names.len() >= 4 && distinct.len() == names.len()
    });
    let nodes = s.text();
    assert!(
        node_names(&nodes).iter().any(|n| n.contains("...")),
        "the names are cut at 80 columns:\n{nodes}"
    );
    // The selected row's full name is on the pane's bottom border.
    assert!(
        nodes
            .lines()
            .any(|l| l.starts_with('+') && !l.contains("Nodes (") && l.contains(" capi-work-")),
        "{nodes}"
    );

    // The management clusters are read in the background: C until its owner is known.
    s.retry_until("the :capi screen", b"C", BOUND, |t| {
        t.contains("Cluster API: ") && t.contains("Enter: every condition of")
    });
    s.wait_for("three control-plane Machines told apart", BOUND, |t| {
        let names = machine_names(t);
        let distinct: BTreeSet<&String> = names.iter().collect();
        names.len() >= 3 && distinct.len() == names.len()
    });
    s.quit(BOUND);
}
