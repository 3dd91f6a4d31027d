//! End-to-end: the console in an 80x24 pseudo-terminal on a sim served from the test process
//! (its OpenNebula sim and `taloscope.yaml`), NO_COLOR=1 LANG=C, time scale 30. On the fleet,
//! `n` opens the create wizard; a 1+1 cluster `lab` on `sim-opennebula` with maintenance
//! delivery is planned (its guards pass), confirmed by name, each maintenance fingerprint
//! confirmed with `y`, and followed until up; back on the fleet `lab` shows with both nodes
//! Ready. No secret of its bundle (CA keys, bootstrap token, secretbox key) ever reached the
//! terminal, and the audit log has the create.
mod pty_support;

use std::path::Path;
use std::time::Duration;

use pty_support::{BackgroundSim, PtySession};

/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(60);
const CREATE_BOUND: Duration = Duration::from_secs(300);

fn console_on(sim: &BackgroundSim, home: &Path) -> PtySession {
    let mut env = sim.console_env();
    env.push((
        "TALOSCOPE_CONFIG",
        sim.dir.path().join("taloscope.yaml").display().to_string(),
    ));
    let mut s = PtySession::start(24, 80, home, &[], &env);
    s.wait_for("the fleet", BOUND, |t| {
        t.contains("healthy") && t.contains("Enter open")
    });
    s
}

/// Types `text` into the focused field (`e`, its value erased, the text, Enter).
fn type_field(s: &mut PtySession, text: &str) {
    s.send(b"e");
    s.wait_for("the input line", BOUND, |t| t.contains("value> "));
    s.send(&[0x7f; 24]);
    s.send(format!("{text}\r").as_bytes());
}

/// The secret values of the bundle: every long scalar (keys, token, secretbox key, secrets).
fn secrets(bundle: &str) -> Vec<String> {
    bundle
        .lines()
        .filter_map(|l| l.split_once(": ").map(|(_, v)| v.trim().trim_matches('"')))
        .filter(|v| v.len() >= 16 && !v.contains(' '))
        .map(|v| v[..16].to_string())
        .collect()
}

#[test]
fn a_cluster_created_from_the_tui_shows_ready_on_the_fleet() {
    let sim = BackgroundSim::start_scaled("healthy", 30.0, BOUND);
    let home = tempfile::tempdir().expect("temp home");
    let mut s = console_on(&sim, home.path());
    s.send(b"n");
    s.wait_for("the wizard", BOUND, |t| t.contains("Create a new cluster"));
    type_field(&mut s, "lab");
    s.wait_for("the name", BOUND, |t| t.contains("Name            lab"));
    // Provider (third, after sim-oneflow and sim-oneflow-gateway: sim-opennebula), one control
    // plane, one worker, Talos v1.11.3.
    s.send(b"jll");
    s.wait_for("sim-opennebula", BOUND, |t| {
        t.contains("sim-opennebula (OpenNebula)")
    });
    s.send(b"j--j-j");
    type_field(&mut s, "v1.11.3");
    s.wait_for("the request", BOUND, |t| {
        t.contains("Control planes  1") && t.contains("Workers         1") && t.contains("v1.11.3")
    });
    let wizard = s.text();
    assert!(wizard.is_ascii(), "LANG=C must give ASCII only:\n{wizard}");
    s.send(b"\r");
    s.wait_for("the plan and its guards", BOUND, |t| {
        t.contains("guards pass: s starts")
    });
    let plan = s.text();
    assert!(
        plan.contains("CREATE     cluster lab: 1 control plane(s), 1 worker(s)")
            && plan.contains("6 pass, 0 warn, 0 fail"),
        "{plan}"
    );
    s.send(b"s");
    s.wait_for("the confirmation", BOUND, |t| {
        t.contains("Type the cluster name in full")
    });
    s.send(b"lab\r");
    s.wait_for("the progress screen", BOUND, |t| {
        t.contains("Create of lab")
    });
    let mut confirmed = 0;
    loop {
        let asking = |t: &str| t.contains(") maintenance certificate fingerprint");
        s.wait_for("a fingerprint question, or the end", CREATE_BOUND, |t| {
            asking(t) || t.contains("is up") || t.contains("stopped:")
        });
        let t = s.text();
        if !asking(&t) {
            break;
        }
        assert!(confirmed < 2, "asked more than once per VM:\n{t}");
        confirmed += 1;
        // The question's first line: `VM (ADDRESS) maintenance certificate fingerprint`.
        let question = t
            .lines()
            .find_map(|l| {
                let at = l.find(") maintenance certificate fingerprint")?;
                Some(l[..at].trim().to_string())
            })
            .unwrap_or_else(|| panic!("the question names its VM:\n{t}"));
        let question = format!("{question}) maintenance");
        s.send(b"y");
        s.wait_for("the answer taken", BOUND, |t| !t.contains(&question));
    }
    assert_eq!(
        confirmed, 2,
        "one fingerprint per VM (maintenance delivery)"
    );
    s.wait_for("every phase done", BOUND, |t| {
        t.contains("is up")
            && t.contains("8 of 8 phases")
            && t.lines().any(|l| l.contains("contexts written done"))
    });
    s.send(b"\x1b");
    s.wait_for("lab Ready on the fleet", CREATE_BOUND, |t| {
        // NODES is Ready of known; ISSUE says ok only with every node Ready and etcd healthy.
        t.lines().any(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            cells.contains(&"lab") && cells.contains(&"2/2") && l.contains(" ok ")
        })
    });

    let state = home.path().join("taloscope-state");
    let bundle = std::fs::read_to_string(state.join("clusters/lab.secrets.yaml")).expect("bundle");
    let secrets = secrets(&bundle);
    assert!(
        secrets.len() >= 5,
        "secrets found in the bundle: {}",
        secrets.len()
    );
    let (status, raw) = s.quit_answering(BOUND);
    assert!(status.success(), "exit status {status:?}");
    let shown = String::from_utf8_lossy(&raw);
    for secret in &secrets {
        assert!(
            !shown.contains(secret.as_str()),
            "a secret reached the terminal"
        );
    }
    let audit = std::fs::read_to_string(state.join("audit.log")).unwrap_or_default();
    assert!(
        audit.contains("lab") && audit.contains("confirmed"),
        "{audit}"
    );
}
