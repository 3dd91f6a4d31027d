//! Snapshots of the certificates screen (`:certs`) at 80x24 and 200x50 in every mode: the
//! certificates of two clusters soonest end first (an unreadable one, an expired one, one
//! within the warning days, the CAs and the servers' far off), the first selected with its fix,
//! then another selected; and the screen before any certificate was read.
mod view_support;

use std::time::Instant;

use crossterm::event::KeyCode;
use taloscope::app::screen::Screen;
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, update};
use taloscope::fleet::FleetEvent;
use taloscope::fleet::cert_expiry::{CertExpiry, ExpiryVerdict, verdict};
use view_support::scenarios;
use view_support::{all_renders, press, screen_text_at};

/// 2030-03-17 08:53:20 UTC: the certificates' ends are days from here.
const NOW: i64 = 1_900_000_000;

fn cert(cluster: &str, context: &str, certificate: &'static str, days: i64) -> CertExpiry {
    let not_after = NOW + days * 86_400;
    CertExpiry {
        cluster: cluster.into(),
        context: context.into(),
        certificate,
        not_after: Some(not_after),
        days_left: Some(days),
        verdict: verdict(not_after, NOW),
        error: None,
        endpoint: None,
    }
}

fn certificates(s: &mut AppState, cluster: &str, certs: Vec<CertExpiry>) {
    let event = FleetEvent::Certificates {
        cluster: cluster.into(),
        certs,
        at: Instant::now(),
    };
    update(s, Action::Event(AppEvent::Fleet(event)));
}

/// `:certs` typed on the fleet.
fn opened(s: &mut AppState) {
    update(s, Action::OpenCommandLine);
    for c in "certs".chars() {
        update(s, Action::Insert(c));
    }
    update(s, Action::Submit);
    assert_eq!(s.screen, Screen::Module("certs"));
}

fn two_clusters() -> AppState {
    let mut s = scenarios::state(&["healthy", "cp2-down"]);
    let served = CertExpiry {
        endpoint: Some("127.10.0.1:50000".into()),
        ..cert("healthy", "healthy", "apid server", 340)
    };
    certificates(
        &mut s,
        "healthy",
        vec![
            cert("healthy", "healthy", "talos CA", 3600),
            cert("healthy", "healthy", "talos client", 200),
            cert("healthy", "healthy-expiring", "talos client", 9),
            cert("healthy", "admin@healthy", "kubernetes client", 300),
            served,
        ],
    );
    let unreadable = CertExpiry {
        not_after: None,
        days_left: None,
        verdict: ExpiryVerdict::Fail,
        error: Some("kubeconfig user \"admin@cp2-down\": no client certificate PEM".into()),
        ..cert("cp2-down", "admin@cp2-down", "kubernetes client", 0)
    };
    certificates(
        &mut s,
        "cp2-down",
        vec![
            cert("cp2-down", "cp2-down", "talos client", -3),
            cert("cp2-down", "cp2-down", "talos CA", 3000),
            unreadable,
        ],
    );
    s
}

#[test]
fn certs_soonest_first_with_the_fix() {
    let mut s = two_clusters();
    opened(&mut s);
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("Certificates: 8 of 2 clusters"), "{text}");
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle}: {text}"))
    };
    // Unreadable, expired, then 9 days, then the far ones.
    assert!(
        at("?  kubernetes client") < at("-3d  talos client"),
        "{text}"
    );
    assert!(at("-3d  talos client") < at("9d  talos client"), "{text}");
    assert!(at("9d  talos client") < at("3600d  talos CA"), "{text}");
    assert!(
        text.contains("renew: kubernetes client of cp2-down/admin@cp2-down"),
        "{text}"
    );
    assert!(
        text.contains("talosctl -n CONTROL_PLANE kubeconfig"),
        "{text}"
    );
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn certs_expired_client_selected() {
    let mut s = two_clusters();
    opened(&mut s);
    press(&mut s, KeyCode::Down);
    let text = screen_text_at(&s, 80, 24);
    assert!(
        text.contains("renew: talos client of cp2-down/cp2-down"),
        "{text}"
    );
    assert!(
        text.contains("talosctl --context cp2-down -n CONTROL_PLANE config new FILE"),
        "{text}"
    );
    press(&mut s, KeyCode::End);
    let text = screen_text_at(&s, 80, 24);
    assert!(
        text.contains("talosctl rotate-ca --talos=true --kubernetes=false"),
        "{text}"
    );
    insta::assert_snapshot!(all_renders(&s));
}

#[test]
fn certs_none_read_yet() {
    let mut s = scenarios::state(&["healthy"]);
    update(&mut s, Action::Open("certs"));
    assert_eq!(s.screen, Screen::Module("certs"));
    let text = screen_text_at(&s, 80, 24);
    assert!(text.contains("No certificate read yet"), "{text}");
    insta::assert_snapshot!(all_renders(&s));
    press(&mut s, KeyCode::Esc);
    assert_eq!(s.screen, Screen::Fleet);
}
