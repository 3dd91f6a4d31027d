//! The certificates screen's part of the update step: `:certs` and `C` on the fleet open it,
//! the move keys select a certificate (its fix shows below), Esc goes back. Pure.
use super::action::{Action, Effect};
use super::certs::fleet_certs;
use super::screen::Screen;
use super::state::AppState;

/// Shows the screen, remembering where it was opened from.
pub fn open(state: &mut AppState) -> Vec<Effect> {
    if state.screen != Screen::Certs {
        state.certs.back = Some(state.screen);
    }
    state.screen = Screen::Certs;
    Vec::new()
}

/// The keys of the screen.
pub fn on_key(state: &mut AppState, action: Action) -> Vec<Effect> {
    let last = fleet_certs(&state.fleet).len().saturating_sub(1);
    let at = state.certs.selected.min(last);
    let page = state.size.1.saturating_sub(12).max(1) as usize;
    state.certs.selected = match action {
        Action::MoveDown => (at + 1).min(last),
        Action::MoveUp => at.saturating_sub(1),
        Action::PageDown => (at + page).min(last),
        Action::PageUp => at.saturating_sub(page),
        Action::MoveFirst => 0,
        Action::MoveLast => last,
        Action::Back => {
            state.screen = state.certs.back.take().unwrap_or(Screen::Fleet);
            at
        }
        _ => at,
    };
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::test_fixtures::cluster_screen;
    use crate::app::{AppEvent, update};
    use crate::fleet::cert_expiry::{CertExpiry, ExpiryVerdict};
    use crate::fleet::{ClusterStatus, FleetEvent};

    fn cert(context: &str, days: i64) -> CertExpiry {
        CertExpiry {
            cluster: "lab".into(),
            context: context.into(),
            certificate: "talos client",
            not_after: Some(days * 86_400),
            days_left: Some(days),
            verdict: crate::fleet::cert_expiry::verdict(days * 86_400, 0),
            error: None,
            endpoint: None,
        }
    }

    #[test]
    fn certs_opens_soonest_first_moves_and_goes_back() {
        let status = ClusterStatus {
            name: "lab".into(),
            ..Default::default()
        };
        let mut s = cluster_screen(status, crate::app::screen::Pane::Etcd);
        let event = FleetEvent::Certificates {
            cluster: "lab".into(),
            certs: vec![cert("far", 900), cert("soon", 5), cert("near", 20)],
            at: std::time::Instant::now(),
        };
        update(&mut s, Action::Event(AppEvent::Fleet(event)));
        update(&mut s, Action::OpenCommandLine);
        for c in "certs".chars() {
            update(&mut s, Action::Insert(c));
        }
        update(&mut s, Action::Submit);
        assert_eq!(s.screen, Screen::Certs);
        let contexts: Vec<String> = fleet_certs(&s.fleet)
            .into_iter()
            .map(|c| c.context)
            .collect();
        assert_eq!(contexts, ["soon", "near", "far"]);
        assert_eq!(fleet_certs(&s.fleet)[0].verdict, ExpiryVerdict::Fail);
        update(&mut s, Action::MoveDown);
        update(&mut s, Action::MoveDown);
        update(&mut s, Action::MoveDown);
        assert_eq!(s.certs.selected, 2, "stops at the last");
        update(&mut s, Action::MoveFirst);
        assert_eq!(s.certs.selected, 0);
        update(&mut s, Action::Back);
        assert_eq!(s.screen, Screen::Cluster(crate::app::screen::Pane::Etcd));
    }

    #[test]
    fn certificates_read_while_the_screen_is_open_redraw_it() {
        let status = ClusterStatus {
            name: "lab".into(),
            ..Default::default()
        };
        let mut s = cluster_screen(status, crate::app::screen::Pane::Nodes);
        update(&mut s, Action::OpenCerts);
        let event = FleetEvent::Certificates {
            cluster: "lab".into(),
            certs: vec![cert("soon", 5)],
            at: std::time::Instant::now(),
        };
        let outcome = crate::app::apply(&mut s, Action::Event(AppEvent::Fleet(event)));
        assert!(outcome.redraw);
        assert_eq!(fleet_certs(&s.fleet).len(), 1);
    }
}
