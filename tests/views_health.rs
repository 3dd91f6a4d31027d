//! Snapshots of the health checklist (`H`) while it runs, once every check passed, and failed
//! on `cp2-down` (the etcd check naming cp-2), client-side for an `os:etcd:backup` role, and
//! of the fleet row when a context's client certificate nears its end; at 80x24 and 200x50
//! in every mode. The reports carry times a fixed distance apart, so elapsed times are the
//! same on every run.
mod view_support;

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use taloscope::app::screen::Screen;
use taloscope::app::screens::ScreenNews;
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, Effect, update};
use taloscope::fleet::FleetEvent;
use taloscope::fleet::cert_expiry::{CertExpiry, ExpiryVerdict};
use taloscope::fleet::health_check::SERVER_CHECKS;
use taloscope::talos::{CheckState, HealthProgress};
use taloscope::views::health::{HealthNews, HealthReport, HealthRun, NAME};
use view_support::scenarios;
use view_support::{all_renders, press, screen_text_at};

/// `talosctl health`'s default checks, in the order the server runs them.
const CHECKS: [&str; 16] = SERVER_CHECKS;

/// The checklist of `scenario` opened with `H`, and the run the console would start.
fn opened(scenario: &str) -> (AppState, u64) {
    let mut s = scenarios::state(&[scenario]);
    update(&mut s, Action::OpenSelected);
    let effects = update(&mut s, Action::Open(NAME));
    assert_eq!(s.screen, Screen::Module(NAME));
    let [Effect::Screen(task)] = effects.as_slice() else {
        panic!("one run: {effects:?}");
    };
    let run = task.get::<HealthRun>().expect("a health run");
    assert_eq!(run.route.name, "cp-1");
    (s, run.run)
}

struct Feed {
    cluster: String,
    run: u64,
    t0: Instant,
}

impl Feed {
    fn send(&self, s: &mut AppState, ms: u64, news: HealthNews) {
        let report = HealthReport {
            cluster: self.cluster.clone(),
            run: self.run,
            at: self.t0 + Duration::from_millis(ms),
            news,
        };
        update(
            s,
            Action::Event(AppEvent::Screen(ScreenNews::new(NAME, report))),
        );
    }

    fn check(&self, s: &mut AppState, ms: u64, name: &str, state: CheckState) {
        let progress = HealthProgress::Check {
            name: name.into(),
            state,
        };
        self.send(s, ms, HealthNews::Progress(progress));
    }

    /// Started, the discovered nodes, then the first `passed` checks passing 250 ms apart.
    fn passing(&self, s: &mut AppState, passed: usize) -> u64 {
        self.send(s, 0, HealthNews::Started);
        let nodes = (1..=5).map(|i| format!("127.10.0.{i}")).collect();
        self.send(
            s,
            20,
            HealthNews::Progress(HealthProgress::Discovered(nodes)),
        );
        let mut ms = 40;
        for name in &CHECKS[..passed] {
            self.check(s, ms, name, CheckState::Waiting);
            self.check(s, ms + 250, name, CheckState::Passed);
            ms += 250;
        }
        ms
    }
}

fn feed(s: &AppState, run: u64) -> Feed {
    Feed {
        cluster: s.current.clone().expect("a cluster in use"),
        run,
        t0: Instant::now(),
    }
}

#[test]
fn health_running() {
    let (mut s, run) = opened("healthy");
    let f = feed(&s, run);
    let ms = f.passing(&mut s, 5);
    f.check(&mut s, ms + 10, CHECKS[5], CheckState::Waiting);
    let text = screen_text_at(&s, 80, 24);
    assert!(
        text.contains("running: 5 passed so far in 1.3s of the 1m00s timeout"),
        "{text}"
    );
    // The checks after the running one are on screen, pending.
    assert!(
        text.contains("pending") && text.contains(CHECKS[6]),
        "{text}"
    );
    assert!(
        text.contains("server-side HealthCheck on cp-1 (127.10.0.1): os:admin may call it"),
        "{text}"
    );
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn health_client_side_for_an_etcd_backup_role() {
    let mut s = scenarios::state(&["cp2-down"]);
    for live in s.fleet.clusters.values_mut() {
        live.status.role = "os:etcd:backup".into();
    }
    update(&mut s, Action::OpenSelected);
    let effects = update(&mut s, Action::Open(NAME));
    assert!(effects.is_empty(), "no HealthCheck call: {effects:?}");
    let text = screen_text_at(&s, 200, 50);
    assert!(
        text.contains(
            "client-side checks (talosctl health --server=false): role os:etcd:backup may not \
             call HealthCheck"
        ),
        "{text}"
    );
    assert!(text.contains("etcd to be healthy"), "{text}");
    assert!(text.contains("(cp-2)"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn health_all_passed() {
    let (mut s, run) = opened("healthy");
    let f = feed(&s, run);
    let ms = f.passing(&mut s, CHECKS.len());
    f.send(&mut s, ms + 10, HealthNews::Finished(None));
    let text = screen_text_at(&s, 200, 50);
    assert!(
        text.contains("HEALTHY: all 16 checks passed in 4.0s"),
        "{text}"
    );
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn health_failed_on_cp2_down() {
    let (mut s, run) = opened("cp2-down");
    let f = feed(&s, run);
    f.send(&mut s, 0, HealthNews::Started);
    let why = "1 error occurred:\n\t* 127.10.0.2: service is not healthy: etcd\n\n";
    f.check(&mut s, 40, CHECKS[0], CheckState::Waiting);
    f.check(&mut s, 300, CHECKS[0], CheckState::Failing(why.into()));
    f.send(
        &mut s,
        2040,
        HealthNews::Finished(Some("context deadline exceeded".into())),
    );
    let text = screen_text_at(&s, 200, 50);
    assert!(
        text.contains(
            "NOT HEALTHY in 2.0s (timeout 1m00s): etcd to be healthy: 1 error occurred: * \
             127.10.0.2 (cp-2)"
        ),
        "{text}"
    );
    // The server stopped at the failing check: the rest did not run, and `c` is offered.
    let text = screen_text_at(&s, 80, 24);
    assert!(
        text.contains("stops at its first failing check: 15 after it not")
            && text.contains("c runs the client-side checks"),
        "{text}"
    );
    assert!(
        text.contains("not run") && text.contains(CHECKS[1]),
        "{text}"
    );
    assert!(text.contains("c client checks"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
    // `r` runs the checks again; the last run's checks wait as pending.
    let effects = press(&mut s, KeyCode::Char('r'));
    let rerun = |t: &taloscope::app::screens::ScreenTask| {
        t.get::<HealthRun>().is_some_and(|r| r.run == run + 1)
    };
    assert!(matches!(effects.as_slice(), [Effect::Screen(t)] if rerun(t)));
    assert!(screen_text_at(&s, 80, 24).contains("pending"));
}

#[test]
fn health_failing_check_error_opened() {
    let (mut s, run) = opened("cp2-down");
    let f = feed(&s, run);
    f.send(&mut s, 0, HealthNews::Started);
    let nodes = (1..=5).map(|i| format!("127.10.0.{i}")).collect();
    f.send(
        &mut s,
        20,
        HealthNews::Progress(HealthProgress::Discovered(nodes)),
    );
    for (i, name) in CHECKS[..3].iter().enumerate() {
        f.check(&mut s, 40 + 10 * i as u64, name, CheckState::Passed);
    }
    let why = "3 errors occurred:\n\t* 127.10.0.2: rpc error: code = Unavailable desc = \
               connection error: desc = \"transport: Error while dialing: dial tcp \
               127.10.0.2:50000: connect: connection refused\"\n\t* 127.10.0.4: rpc error: \
               code = Unavailable desc = connection refused\n\t* 127.10.0.5: the node's \
               apid did not answer in time: the final words of this error end here\n\n";
    f.check(&mut s, 300, CHECKS[3], CheckState::Failing(why.into()));
    f.send(
        &mut s,
        60_300,
        HealthNews::Finished(Some("context deadline exceeded".into())),
    );
    // Cut in its row; whole once Enter opens it.
    let text = screen_text_at(&s, 80, 24);
    assert!(!text.contains("final words"), "{text}");
    press(&mut s, KeyCode::Enter);
    let text = screen_text_at(&s, 80, 24);
    assert!(
        text.contains("FAIL: apid to be ready (Esc closes)"),
        "{text}"
    );
    assert!(text.contains("words of this error end here"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn fleet_shows_a_certificate_near_its_end() {
    let mut s = scenarios::state(&["healthy"]);
    let cert = |context: &str, days: i64, verdict| CertExpiry {
        cluster: "healthy".into(),
        context: context.into(),
        certificate: "talos client",
        not_after: Some(1_900_000_000 + days * 86_400),
        days_left: Some(days),
        verdict,
        error: None,
        endpoint: None,
    };
    let certs = vec![
        cert("healthy", 3000, ExpiryVerdict::Ok),
        cert("healthy-expiring", 9, ExpiryVerdict::Warn),
    ];
    let event = FleetEvent::Certificates {
        cluster: "healthy".into(),
        certs,
        at: Instant::now(),
    };
    update(&mut s, Action::Event(AppEvent::Fleet(event)));
    let text = screen_text_at(&s, 200, 50);
    assert!(
        text.contains("talos client cert (healthy-expiring) expires in 9d"),
        "{text}"
    );
    insta::assert_snapshot!(all_renders(&s));
}
