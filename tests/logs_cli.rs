//! `taloscope logs` and `taloscope dmesg` as processes against the sim: a tail prints exactly
//! that many lines, the whole log arrives in 1024-byte chunks and still prints whole lines,
//! --follow streams new lines as simulated time passes, a reader context suffices, and a
//! service or node that does not exist is a usage error naming it.
mod upgrade_common;

use tokio::io::{AsyncBufReadExt, BufReader};
use upgrade_common::*;

/// Spawns `cmd`, reads `n` lines of its stdout (bounded by LIMIT), then kills it.
async fn first_lines(mut cmd: tokio::process::Command, n: usize) -> Vec<String> {
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let seen = tokio::time::timeout(LIMIT, async {
        let mut seen = Vec::new();
        while seen.len() < n {
            match lines.next_line().await.expect("read") {
                Some(line) => seen.push(line),
                None => break,
            }
        }
        seen
    })
    .await
    .unwrap_or_else(|_| panic!("{n} lines within {LIMIT:?}"));
    child.kill().await.expect("kill");
    seen
}

fn etcd_ts(line: &str) -> String {
    let v: serde_json::Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("etcd JSON line: {e}: {line}"));
    v["ts"].as_str().expect("ts").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tail_prints_that_many_lines_and_the_whole_log_prints_whole_lines() {
    let fx = start(builtin("healthy")).await;
    let mut cmd = fx.taloscope("healthy", "logs");
    cmd.args(["--node", "cp-1", "etcd", "--tail", "20"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 20, "{stdout}");
    let stamps: Vec<String> = lines.iter().map(|l| etcd_ts(l)).collect();
    assert!(
        stamps.windows(2).all(|w| w[0] < w[1]),
        "in order: {stamps:?}"
    );

    // The whole log is far more than one 1024-byte chunk: every line still arrives whole.
    let mut cmd = fx.taloscope("healthy", "logs");
    cmd.args(["--node", "cp-1", "etcd"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.len() > 20 * 1024, "{} bytes", stdout.len());
    assert!(stdout.lines().count() > 400);
    for line in stdout.lines() {
        etcd_ts(line);
    }

    let mut cmd = fx.taloscope("healthy", "logs");
    cmd.args([
        "--node", "cp-2", "kubelet", "--tail", "3", "--output", "json",
    ]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stderr}");
    let objects: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(objects.len(), 3);
    for o in &objects {
        assert_eq!(o["node"], "cp-2");
        let line = o["line"].as_str().expect("line");
        let header = line.split(']').next().unwrap_or_default();
        assert!(
            line.starts_with('I') && header.contains("    2051 ") && header.contains(".go:"),
            "a klog header: {line}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_streams_new_lines_and_a_reader_context_suffices() {
    let fx = start(builtin("healthy")).await;
    let mut cmd = fx.taloscope("healthy-reader", "logs");
    cmd.args(["--node", "cp-1", "etcd", "--tail", "2", "--follow"]);
    // 2 from the tail, then 4 the node writes while we follow (one per 2 simulated seconds).
    let lines = first_lines(cmd, 6).await;
    assert_eq!(lines.len(), 6, "{lines:?}");
    let stamps: Vec<String> = lines.iter().map(|l| etcd_ts(l)).collect();
    assert!(stamps.windows(2).all(|w| w[0] < w[1]), "{stamps:?}");

    let mut cmd = fx.taloscope("healthy", "dmesg");
    cmd.args(["--node", "cp-3"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stderr}");
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("kern:  notice: [") && first.contains("]: Linux version"),
        "{first}"
    );

    let mut cmd = fx.taloscope("healthy-reader", "dmesg");
    cmd.args(["--node", "cp-3", "--follow"]);
    let boot = stdout.lines().count();
    let lines = first_lines(cmd, boot + 2).await;
    assert_eq!(
        lines.len(),
        boot + 2,
        "new kernel messages arrive: {lines:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn containers_and_faults_and_bad_names() {
    let fx = start(builtin("cp2-down")).await;
    let mut cmd = fx.taloscope("cp2-down", "logs");
    cmd.args([
        "-k",
        "--node",
        "cp-1",
        "kube-system/kube-apiserver-cp-1:kube-apiserver",
        "--tail",
        "3",
    ]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.lines().count(), 3);
    assert!(
        stdout.lines().all(|l| l.contains("Z stderr F I")),
        "{stdout}"
    );

    // cp-2 is down: cp-1's etcd warns that it cannot reach that peer.
    let mut cmd = fx.taloscope("cp2-down", "logs");
    cmd.args(["--node", "cp-1", "etcd", "--tail", "9"]);
    let (_, stdout, _) = output(cmd).await;
    assert!(
        stdout.contains("prober detected unhealthy status"),
        "{stdout}"
    );

    let mut cmd = fx.taloscope("cp2-down", "logs");
    cmd.args(["--node", "cp-1", "etcdd"]);
    let (code, _, stderr) = output(cmd).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("node cp-1 runs no service \"etcdd\"") && stderr.contains("etcd,"),
        "{stderr}"
    );

    let mut cmd = fx.taloscope("cp2-down", "logs");
    cmd.args(["--node", "cp-9", "etcd"]);
    let (code, _, stderr) = output(cmd).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("no node named \"cp-9\""), "{stderr}");

    let mut cmd = fx.taloscope("cp2-down", "logs");
    cmd.args(["--node", "cp-2", "etcd"]);
    let (code, _, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.starts_with("taloscope: cp-2: node 127.") && stderr.contains("unreachable"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_echoing_hostile_text_prints_no_control_character() {
    // The operator's own input (and any hostname the message names) reaches stderr without
    // an escape or a bell: a terminal could otherwise be retitled or cleared by a message.
    let fx = start(builtin("healthy")).await;
    let hostile = "\u{1b}]0;owned\u{7}\u{1b}[2Jnosuch";
    let mut cmd = fx.taloscope("healthy", "logs");
    cmd.args(["--node", hostile, "etcd"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(2), "{stdout}\n{stderr}");
    assert!(stderr.contains("nosuch"), "{stderr:?}");
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\u{7}'),
        "raw control characters on stderr: {stderr:?}"
    );
    let mut cmd = fx.taloscope("healthy", "upgrade");
    cmd.args(["--to", "v1.\u{1b}[2J12", "--plan"]);
    let (code, _, stderr) = output(cmd).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_hostname_reaches_no_terminal_raw() {
    // A node whose hostname carries an escape sequence and a bell (issue 27's hostile
    // hostname): the refusal that lists the cluster's nodes shows it filtered, as `cat -v`
    // of stderr would show no raw ESC or BEL.
    let mut scenario = builtin("healthy");
    let hostile = "cp-3\u{1b}]0;owned\u{7}\u{1b}[2J";
    let node = scenario.clusters[0]
        .nodes
        .iter_mut()
        .find(|n| n.name == "cp-3")
        .expect("cp-3");
    node.name = hostile.to_string();
    let fx = start(scenario).await;
    let mut cmd = fx.taloscope("healthy", "logs");
    cmd.args(["--node", "nosuch", "etcd"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(2), "{stdout}\n{stderr}");
    assert!(stderr.contains("no node named \"nosuch\""), "{stderr:?}");
    assert!(stderr.contains("cp-3"), "the nodes are listed: {stderr:?}");
    for out in [&stdout, &stderr] {
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{7}'),
            "raw control characters: {out:?}"
        );
    }
    // An etcd plan that names the node, and the health report, show it filtered too.
    let mut forfeit = fx.taloscope("healthy", "etcd");
    forfeit.args(["forfeit", "--node", hostile, "--plan"]);
    let health = fx.taloscope("healthy", "health");
    let mut upgrade = fx.taloscope("healthy", "upgrade");
    upgrade.args(["--to", "v1.12.0", "--plan"]);
    for (cmd, names) in [(forfeit, true), (health, false), (upgrade, true)] {
        let (_, stdout, stderr) = output(cmd).await;
        let said = format!("{stdout}{stderr}");
        assert!(!names || said.contains("cp-3"), "{said}");
        for out in [&stdout, &stderr] {
            assert!(
                !out.contains('\u{1b}') && !out.contains('\u{7}'),
                "raw control characters: {out:?}"
            );
        }
    }
}
