//! Snapshots of the health checklist (`H`) while it runs, once every check passed, and failed
//! on `cp2-down` (the etcd check naming cp-2), client-side for an `os:etcd:backup` role, and
//! of the fleet row when a context's client certificate nears its end; at 80x24 and 200x50
//! in every mode. The reports carry times a fixed distance apart, so elapsed times are the
//! same on every run.
mod view_support;

use std::time::{Duration, Instant};

use taloscope::app::checklist::{HealthNews, HealthReport};
use taloscope::app::screen::Screen;
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, Effect, update};
use taloscope::fleet::FleetEvent;
use taloscope::fleet::cert_expiry::{CertExpiry, ExpiryVerdict};
use taloscope::talos::{CheckState, HealthProgress};
use view_support::scenarios;
use view_support::{all_renders, screen_text_at};

/// `talosctl health`'s default checks, as the sim reports them (pkg/cluster/check/default.go).
const CHECKS: [&str; 16] = [
    "etcd to be healthy",
    "etcd members to be consistent across nodes",
    "etcd members to be control plane nodes",
    "apid to be ready",
    "all nodes memory sizes",
    "all nodes disk sizes",
    "no diagnostics",
    "kubelet to be healthy",
    "all nodes to finish boot sequence",
    "all k8s nodes to report",
    "all control plane static pods to be running",
    "all control plane components to be ready",
    "all k8s nodes to report ready",
    "kube-proxy to report ready",
    "coredns to report ready",
    "all k8s nodes to report schedulable",
];

/// The checklist of `scenario` opened with `H`, and the run the console would start.
fn opened(scenario: &str) -> (AppState, u64) {
    let mut s = scenarios::state(&[scenario]);
    update(&mut s, Action::OpenSelected);
    let effects = update(&mut s, Action::OpenHealth);
    assert_eq!(s.screen, Screen::Health);
    let [Effect::RunHealthCheck(run)] = effects.as_slice() else {
        panic!("one run: {effects:?}");
    };
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
        update(s, Action::Event(AppEvent::Health(Box::new(report))));
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
    assert!(text.contains("running: 5 passed so far"), "{text}");
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
    let effects = update(&mut s, Action::OpenHealth);
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
            "NOT HEALTHY in 2.0s: etcd to be healthy: 1 error occurred: * 127.10.0.2 (cp-2)"
        ),
        "{text}"
    );
    insta::assert_snapshot!(all_renders(&s));
    // `r` runs the checks again; the last run's checks wait as pending.
    let effects = update(&mut s, Action::Refresh);
    assert!(matches!(effects.as_slice(), [Effect::RunHealthCheck(r)] if r.run == run + 1));
    assert!(screen_text_at(&s, 80, 24).contains("pending"));
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
