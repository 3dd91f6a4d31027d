//! End-to-end: the console as `taloscope-demo` opens it, in an 80x24 pseudo-terminal
//! (the `demo` sim served from the test process on loopback addresses), NO_COLOR=1 LANG=C.
//! The upgrade plan of `prod` opens with `u`, its guards pass, `?` explains, `s` asks for the
//! cluster name and a wrong name cancels; a console started with `--context prod-reader`
//! (prod's reader context) shows prod through it and its plan refuses Start on the client
//! role guard; one worker upgrades to completion on screen. On a sim that outlives the
//! console, a console killed mid-rollout resumes from its journal.
mod pty_support;

use std::time::Duration;

use pty_support::PtySession;

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);
/// `taloscope-demo`'s pace: simulated seconds per real second.
const DEMO_TIME_SCALE: f64 = 4.0;

#[test]
fn demo_plan_walks_to_the_confirmation_and_cancels() {
    let home = tempfile::tempdir().expect("temp home");
    let env = [("NO_COLOR", "1".to_string()), ("LANG", "C".to_string())];
    let sim = pty_support::BackgroundSim::start_scaled("demo", DEMO_TIME_SCALE, BOUND);
    let args = sim.demo_console_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut s = PtySession::start(24, 80, home.path(), &args, &env);
    s.wait_for("the fleet", BOUND, |t| {
        t.contains("prod") && t.contains("staging") && t.contains("Enter open")
    });
    s.send(b":ctx prod\r");
    s.wait_for("prod's nodes", BOUND, |t| {
        // All five: the plan is made from the nodes known when it opens.
        t.contains("+ Nodes (5)") && t.contains("cp-1") && t.contains("w-2")
    });
    // The plan needs a first status; u again until it opens.
    s.send(b"u");
    s.wait_for("the plan with passing guards", BOUND, |t| {
        if !t.contains("Upgrade prod to") {
            return false;
        }
        t.contains("guards pass: s starts")
    });
    let plan = s.text();
    assert!(plan.is_ascii(), "LANG=C must give ASCII only:\n{plan}");
    assert!(plan.contains("FROM -> TO"), "{plan}");
    s.send(b"\t?");
    s.wait_for("a guard's explanation", BOUND, |t| t.contains("Why: "));
    s.send(b"\x1b");
    s.wait_for("the explanation to close", BOUND, |t| !t.contains("Why: "));
    s.send(b"s");
    s.wait_for("the confirmation", BOUND, |t| {
        t.contains("Type the cluster name in full") && t.contains("[ Cancel ]")
    });
    s.send(b"pro\r");
    s.wait_for("the cancellation", BOUND, |t| {
        t.contains("cancelled") && !t.contains("Type the cluster name")
    });
    // Esc alone (Esc then a key at once reads as Alt-key).
    s.send(b"\x1b");
    s.wait_for("the nodes pane again", BOUND, |t| {
        t.contains("+ Nodes (") && !t.contains("Upgrade prod")
    });
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
    // The demo keeps its audit log in its own temporary dir; the audit is
    // checked on the rollout below.

    // prod-reader reaches prod too: named, it is the context prod uses, and its plan refuses.
    let mut args = sim.demo_console_args();
    args.extend(["--context".to_string(), "prod-reader".to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut s = PtySession::start(24, 80, home.path(), &args, &env);
    s.wait_for("prod through prod-reader", BOUND, |t| {
        t.contains("cluster: prod via prod-reader (os:reader)") && t.contains("cp-1")
    });
    s.send(b"u");
    s.wait_for("the reader's refusal", BOUND, |t| {
        t.contains("Upgrade prod") && t.contains("Start refused")
    });
    let refused = s.text();
    assert!(refused.contains("client role"), "{refused}");
    s.send(b"\x1b");
    s.wait_for("the plan to close", BOUND, |t| {
        !t.contains("Upgrade prod to")
    });
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
}

/// The whole walk on the demo's `prod`: plan, leave out all but one worker, start,
/// confirm by name, watch it to the end.
#[test]
fn demo_upgrade_of_one_worker_runs_to_completion_on_screen() {
    let home = tempfile::tempdir().expect("temp home");
    let env = [("NO_COLOR", "1".to_string()), ("LANG", "C".to_string())];
    let sim = pty_support::BackgroundSim::start_scaled("demo", DEMO_TIME_SCALE, BOUND);
    let args = sim.demo_console_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut s = PtySession::start(24, 80, home.path(), &args, &env);
    s.wait_for("the fleet", BOUND, |t| {
        t.contains("prod") && t.contains("Enter open")
    });
    s.send(b":ctx prod\r");
    s.wait_for("prod's nodes", BOUND, |t| {
        // All five: the plan is made from the nodes known when it opens.
        t.contains("+ Nodes (5)") && t.contains("cp-1") && t.contains("w-2")
    });
    s.send(b"u");
    s.wait_for("the plan", BOUND, |t| t.contains("guards pass: s starts"));
    // Leave out every node but the last in plan order.
    s.send(b"xjxjxjx");
    s.wait_for("one node to upgrade", BOUND, |t| t.contains("1 of 5 nodes"));
    s.send(b"s");
    s.wait_for("the confirmation", BOUND, |t| {
        t.contains("Type the cluster name in full")
    });
    s.send(b"prod\r");
    s.wait_for("the progress pane", BOUND, |t| t.contains("+ Progress "));
    s.wait_for("the rollout to complete", Duration::from_secs(120), |t| {
        t.contains("completed: every node done or skipped")
    });
    let done = s.text();
    assert!(
        done.contains(" done ") && done.contains("skipped"),
        "{done}"
    );
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
}

/// The console on a sim served from the test process (so the fleet outlives it).
fn console_on(sim: &pty_support::BackgroundSim, home: &std::path::Path) -> PtySession {
    let mut s = PtySession::start(24, 80, home, &[], &sim.console_env());
    s.wait_for("the fleet", BOUND, |t| {
        t.contains("healthy") && t.contains("Enter open")
    });
    s
}

/// How the first console goes away mid-rollout.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Killed (SIGHUP) while the second worker upgrades.
    KilledWhileUpgrading,
    /// `p` before the first node, then `q`.
    QuitWhilePaused,
}

#[test]
fn a_killed_console_resumes_its_rollout_from_the_journal() {
    resumes_after(Stop::KilledWhileUpgrading);
}

#[test]
fn a_console_quit_while_paused_resumes_its_rollout_paused() {
    resumes_after(Stop::QuitWhilePaused);
}

/// The console gone mid-rollout (`stop`), the console opened again shows
/// the journal's rollout, resumes it through the confirmation and completes
/// it; a paused rollout comes back paused and `r` goes on.
fn resumes_after(stop: Stop) {
    let sim = pty_support::BackgroundSim::start_scaled("healthy", 5.0, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut s = console_on(&sim, home.path());
    s.send(b":ctx healthy\r");
    // All five: the plan is made from the nodes known when it opens.
    s.wait_for("the nodes", BOUND, |t| {
        t.contains("+ Nodes (5)") && t.contains("w-2")
    });
    s.send(b"u");
    s.wait_for("the plan", BOUND, |t| t.contains("guards pass: s starts"));
    // Only the two workers: leave out the three control planes.
    s.send(b"xjxjx");
    s.wait_for("two nodes to upgrade", BOUND, |t| {
        t.contains("2 of 5 nodes")
    });
    s.send(b"s");
    s.wait_for("the confirmation", BOUND, |t| {
        t.contains("Type the cluster name")
    });
    s.send(b"healthy\r");
    s.wait_for("the progress pane", BOUND, |t| t.contains("+ Progress "));
    let journal = home.path().join("taloscope-state/rollouts/healthy.json");
    // What resumes is the journal: wait (bounded) until it holds `what`.
    let journal_says = |what: &str| {
        let deadline = std::time::Instant::now() + BOUND;
        loop {
            let text = std::fs::read_to_string(&journal).unwrap_or_default();
            if text.contains(what) {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the journal never said {what}: {text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    match stop {
        Stop::KilledWhileUpgrading => {
            s.wait_for("the first worker done", Duration::from_secs(120), |t| {
                t.lines()
                    .any(|l| l.starts_with('|') && l.contains(" done  "))
            });
            journal_says("\"phase\": \"done\"");
            s.child.kill().expect("kill the console");
            drop(s);
        }
        Stop::QuitWhilePaused => {
            s.send(b" ");
            s.wait_for("the pause", BOUND, |t| t.contains("PAUSED; r resumes"));
            journal_says("\"paused\": true");
            // Quitting while the rollout runs (paused) asks first; n stays.
            let question = "a rollout is running; the journal resumes it next time; quit? y/N";
            s.send(b"q");
            s.wait_for("the quit question", BOUND, |t| t.contains(question));
            s.send(b"n");
            s.wait_for("the question answered", BOUND, |t| {
                !t.contains(question) && t.contains("not quitting")
            });
            // Ctrl-C asks too; y quits, exit 0, the journal left to resume.
            s.send(b"\x03");
            s.wait_for("the quit question again", BOUND, |t| t.contains(question));
            s.send(b"y");
            let (status, _raw) = s.finish(BOUND);
            assert!(status.success(), "exit status {status:?}");
        }
    }
    let left = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(
        left.contains("\"outcome\": null"),
        "the journal must not end: {left}"
    );

    let mut s = console_on(&sim, home.path());
    s.wait_for("the journal's notice", BOUND, |t| {
        t.contains("did not finish")
    });
    s.send(b":ctx healthy\r");
    s.wait_for("the nodes", BOUND, |t| t.contains("+ Nodes ("));
    s.send(b":rollout\r");
    s.wait_for("the stopped rollout", BOUND, |t| {
        t.contains("interrupted; r resumes")
    });
    s.send(b"r");
    s.wait_for("the confirmation", BOUND, |t| {
        t.contains("Type the cluster name")
    });
    s.send(b"healthy\r");
    if stop == Stop::QuitWhilePaused {
        s.wait_for("the resumed rollout, still paused", BOUND, |t| {
            t.contains("PAUSED; r resumes") && t.contains("resuming from the journal")
        });
        s.send(b"r");
    }
    s.wait_for("the rollout to complete", Duration::from_secs(120), |t| {
        t.contains("completed: every node done or skipped")
    });
    let done = s.text();
    assert_eq!(
        done.lines()
            .filter(|l| l.starts_with('|') && l.contains(" done  "))
            .count(),
        2,
        "both workers done:\n{done}"
    );
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
    let audit =
        std::fs::read_to_string(home.path().join("taloscope-state/audit.log")).expect("audit log");
    let outcomes: Vec<&str> = audit
        .lines()
        .filter(|l| l.contains("cluster=\"healthy\""))
        .filter_map(|l| l.split("outcome=").nth(1))
        .collect();
    // Each run is audited as it starts and at each step; the first run never ended, the
    // resumed one did.
    let ends: Vec<&str> = outcomes
        .iter()
        .copied()
        .filter(|o| *o != "\"started\"" && !o.starts_with("\"step "))
        .collect();
    assert_eq!(
        ends,
        ["\"confirmed\"", "\"confirmed\"", "\"succeeded\""],
        "{audit}"
    );
    assert_eq!(
        outcomes.iter().filter(|o| **o == "\"started\"").count(),
        2,
        "{audit}"
    );
}

/// The plan screen learns the Talos releases as `taloscope upgrade` does: with the sim's
/// registry listing v1.12.15 (newer than the built-in table's v1.12.11), `u` on a cluster
/// running v1.12.0 offers v1.12.15 first and says the registry listed it.
#[test]
fn the_plan_offers_the_registry_s_patch_newer_than_the_table() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let tags: Vec<String> = (0..=15).map(|p| format!("v1.12.{p}")).collect();
    let tags: Vec<&str> = tags.iter().map(String::as_str).collect();
    let spec = taloscope_sim::registry::RegistrySpec::installer(&tags);
    let registry = runtime
        .block_on(taloscope_sim::registry::RegistrySim::start(spec))
        .expect("registry");
    let sim = pty_support::BackgroundSim::start_scaled("healthy-112", 5.0, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut env = sim.console_env();
    env.push(("TALOSCOPE_RELEASES_REGISTRY", registry.endpoint()));
    let mut s = PtySession::start(24, 80, home.path(), &[], &env);
    s.wait_for("the fleet", BOUND, |t| {
        t.contains("healthy-112") && t.contains("Enter open")
    });
    s.send(b":ctx healthy-112\r");
    s.wait_for("the nodes", BOUND, |t| {
        t.contains("+ Nodes (5)") && t.contains("w-2")
    });
    s.send(b"u");
    s.wait_for("the registry's newest patch as the target", BOUND, |t| {
        t.contains("Upgrade healthy-112 to v1.12.15")
    });
    s.send(b"\x1b");
    s.wait_for("the plan to close", BOUND, |t| {
        !t.contains("Upgrade healthy-112")
    });
    s.send(b"q");
    let (status, _raw) = s.finish(BOUND);
    assert!(status.success(), "exit status {status:?}");
    assert!(
        registry
            .requests()
            .iter()
            .any(|r| format!("{r:?}").contains("siderolabs/installer")),
        "the registry was asked"
    );
    drop(registry);
}
