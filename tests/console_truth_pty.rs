//! End-to-end, the console in a pseudo-terminal against a sim served from the test process,
//! NO_COLOR=1 LANG=C: it shows the nodes `status` lists, not only the talosconfig's. On
//! `sparse` (a talosconfig naming cp-1 only) all five nodes with their kubelet versions; on
//! `healthy` after `taloscope provision` added two workers, seven nodes in the nodes pane and
//! the Talos upgrade plan, and a Kubernetes plan to 1.35.0 whose support-matrix guard fails
//! as `upgrade-k8s --plan` does. Each node row says the source that listed it, and `:ctx` to
//! an alternate context switches the running poller to it.
mod pty_support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use pty_support::{BackgroundSim, PtySession};

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);
/// The console's focused refresh (5 s) and a round on top.
const ONE_REFRESH: Duration = Duration::from_secs(12);

fn console_on(sim: &BackgroundSim, home: &Path, cluster: &str) -> PtySession {
    sim.console_on_cluster(home, (40, 120), cluster, BOUND)
}

/// `taloscope ARGS` against the sim; stdout, stderr and the exit code.
fn taloscope(sim: &BackgroundSim, home: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_taloscope"))
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("TALOSCOPE_STATE_DIR", home.join("cli-state"))
        .env("TALOSCONFIG", sim.talosconfig())
        .env("KUBECONFIG", sim.kubeconfig())
        .output()
        .expect("taloscope runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

/// (name, kubelet version) of every node `status --output json` lists.
fn status_nodes(sim: &BackgroundSim, home: &Path, cluster: &str) -> Vec<(String, String)> {
    let (_, text) = taloscope(sim, home, &["status", "--context", cluster, "-o", "json"]);
    let json: serde_json::Value = serde_json::from_str(&text).expect("status JSON");
    json["clusters"][0]["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| {
            let kubelet = n["kubelet_version"].as_str().unwrap_or("-");
            (
                n["name"].as_str().unwrap_or("?").to_string(),
                kubelet.to_string(),
            )
        })
        .collect()
}

/// Every `status` node has a row on screen showing its kubelet version.
fn shows_every_node(text: &str, nodes: &[(String, String)]) -> bool {
    let title = format!("+ Nodes ({})", nodes.len());
    text.contains(&title)
        && nodes.iter().all(|(name, kubelet)| {
            text.lines()
                .any(|l| l.contains(&format!(" {name} ")) && l.contains(kubelet.as_str()))
        })
}

#[test]
fn a_talosconfig_naming_one_node_shows_every_node_with_its_kubelet() {
    let sim = BackgroundSim::start("sparse", BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let nodes = status_nodes(&sim, home.path(), "sparse");
    assert_eq!(nodes.len(), 5, "status lists every node: {nodes:?}");
    assert!(nodes.iter().all(|(_, k)| k == "v1.34.1"), "{nodes:?}");
    let mut s = console_on(&sim, home.path(), "sparse");
    s.wait_for(
        "all five nodes with kubelets",
        Duration::from_secs(5),
        |t| shows_every_node(t, &nodes),
    );
    // 120 columns: the wide table, with the source of each node.
    let text = s.text();
    let row = |name: &str| {
        let cell = format!(" {name} ");
        text.lines().find(|l| l.contains(&cell)).unwrap_or_default()
    };
    assert!(text.contains("SOURCE"), "{text}");
    assert!(row("cp-1").contains("talosconfig"), "{text}");
    for name in ["cp-2", "cp-3", "w-1", "w-2"] {
        assert!(row(name).contains("discovery"), "{name}:\n{text}");
    }
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
}

#[test]
fn provisioned_workers_are_shown_planned_and_guarded_as_the_cli_does() {
    let sim = BackgroundSim::start_scaled("healthy", 20.0, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut s = console_on(&sim, home.path(), "healthy");
    s.wait_for("five nodes", BOUND, |t| t.contains("+ Nodes (5)"));

    let config = sim.dir.path().join("taloscope.yaml").display().to_string();
    let args = [
        "provision",
        "--context",
        "healthy",
        "--role",
        "worker",
        "--count",
        "2",
        "--yes",
        "--confirm",
        "healthy",
        "--config",
        &config,
    ];
    let (code, out) = taloscope(&sim, home.path(), &args);
    assert_eq!(code, 0, "{out}");
    let nodes = status_nodes(&sim, home.path(), "healthy");
    assert_eq!(nodes.len(), 7, "status after provisioning: {nodes:?}");
    s.wait_for("seven nodes within one refresh", ONE_REFRESH, |t| {
        shows_every_node(t, &nodes)
    });

    s.send(b"u");
    s.wait_for("the Talos plan over seven nodes", BOUND, |t| {
        t.contains(" of 7 nodes ")
    });
    s.send(b"\x1b");
    s.wait_for("the panes again", BOUND, |t| t.contains("+ Nodes (7)"));

    let (_, cli) = taloscope(
        &sim,
        home.path(),
        &[
            "upgrade-k8s",
            "--context",
            "healthy",
            "--to",
            "1.35.0",
            "--plan",
        ],
    );
    assert!(
        cli.contains("FAIL") && cli.contains("Talos supports target"),
        "{cli}"
    );
    assert!(
        cli.contains("Kubernetes v1.35.0 is not supported by Talos v1.11.3"),
        "{cli}"
    );
    s.send(b":upgrade-k8s 1.35.0\r");
    s.wait_for("the support-matrix guard failing", BOUND, |t| {
        t.lines()
            .any(|l| l.contains("Talos supports target") && l.to_lowercase().contains("fail"))
            && t.contains("guard failing")
    });
    s.send(b"\x1b");
    s.wait_for("the panes again", BOUND, |t| t.contains("pane:"));
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
}

/// `:ctx healthy-reader` on a console using `healthy` through its admin context: the header
/// says the reader context is in use, and the running poller's next round asks with the
/// reader's rights, so the Talos upgrade plan refuses to start on the client-role guard;
/// `:ctx healthy` goes back to the admin context and the plan may start again.
#[test]
fn ctx_to_an_alternate_context_switches_the_running_poller() {
    let sim = BackgroundSim::start("healthy", BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut s = console_on(&sim, home.path(), "healthy");
    s.wait_for("five nodes", BOUND, |t| t.contains("+ Nodes (5)"));
    let plan_of = |s: &mut PtySession, what: &str, done: &dyn Fn(&str) -> bool| {
        s.send(b"u");
        s.wait_for(what, BOUND, |t| t.contains("Upgrade healthy") && done(t));
        let plan = s.text();
        s.send(b"\x1b");
        s.wait_for("the panes again", BOUND, |t| t.contains("+ Nodes (5)"));
        plan
    };
    plan_of(&mut s, "the admin's plan", &|t| {
        t.contains("guards pass: s starts")
    });

    s.send(b":ctx healthy-reader\r");
    s.wait_for("the reader context in the header", BOUND, |t| {
        t.contains("cluster: healthy via healthy-reader (os:reader)")
    });
    let refused = plan_of(&mut s, "the reader's refusal", &|t| {
        t.contains("Start refused")
    });
    assert!(refused.contains("client role"), "{refused}");

    s.send(b":ctx healthy\r");
    s.wait_for("the admin context in the header", BOUND, |t| {
        t.contains("cluster: healthy via healthy (os:admin)")
    });
    plan_of(&mut s, "the admin's plan again", &|t| {
        t.contains("guards pass: s starts")
    });
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
}
