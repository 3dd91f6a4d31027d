//! End-to-end: the console in an 80x24 pseudo-terminal against a `taloscope
//! sim` process on loopback (`healthy-112`, a big time scale), NO_COLOR=1
//! LANG=C: `:upgrade-k8s 1.35.0` opens the Kubernetes plan, the removed-API
//! count arrives and every guard passes, `s` and the typed cluster name start
//! it, and the progress pane follows it until it completes.
mod pty_support;

use std::time::Duration;

use pty_support::PtySession;

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);

#[test]
fn upgrade_k8s_walks_from_the_plan_to_completion_on_screen() {
    let sim = pty_support::BackgroundSim::start_scaled("healthy-112", 20.0, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let env = [
        ("NO_COLOR", "1".to_string()),
        ("LANG", "C".to_string()),
        ("TALOSCONFIG", sim.talosconfig()),
        ("KUBECONFIG", sim.kubeconfig()),
    ];
    let mut s = PtySession::start(24, 80, home.path(), &[], &env);
    s.wait_for("the fleet", BOUND, |t| {
        t.contains("healthy-112") && t.contains("Enter open")
    });
    s.send(b":ctx healthy-112\r");
    // All five: the plan is made from the nodes known when it opens.
    s.wait_for("the nodes", BOUND, |t| {
        t.contains("+ Nodes (5)") && t.contains("w-2")
    });
    // The plan needs a first status; the command again until it opens.
    let deadline = std::time::Instant::now() + BOUND;
    loop {
        s.send(b":upgrade-k8s 1.35.0\r");
        let until = std::time::Instant::now() + Duration::from_secs(3);
        while std::time::Instant::now() < until && !s.text().contains("Kubernetes v1.34") {
            s.pump(Duration::from_millis(100));
        }
        if s.text().contains("Kubernetes v1.34") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the plan never opened:\n{}",
            s.text()
        );
    }
    s.wait_for("the count and passing guards", BOUND, |t| {
        t.contains("guards pass: s starts") && !t.contains("checking")
    });
    let plan = s.text();
    assert!(plan.is_ascii(), "LANG=C must give ASCII only:\n{plan}");
    assert!(plan.contains("-> v1.35.0"), "{plan}");
    s.send(b"s");
    s.wait_for("the confirmation", BOUND, |t| {
        t.contains("Type the cluster name")
    });
    s.send(b"healthy-112\r");
    s.wait_for("the progress pane", BOUND, |t| t.contains("+ Progress "));
    // The pre-pull's rows, one per node and image, before the components' steps.
    s.wait_for("the pre-pull rows", BOUND, |t| {
        t.contains("of 31 steps") && t.contains("pre-pull registry.k8s.io/kube-apiserver")
    });
    s.wait_for("the rollout to complete", Duration::from_secs(240), |t| {
        t.contains("completed: every node done or skipped")
    });
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
    let audit =
        std::fs::read_to_string(home.path().join("taloscope-state/audit.log")).expect("audit log");
    assert!(
        audit
            .lines()
            .any(|l| l.contains("cluster=\"healthy-112\"") && l.contains("outcome=\"succeeded\"")),
        "{audit}"
    );
}
