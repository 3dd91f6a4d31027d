//! The certificates screen (`:certs`, `C` on the fleet): every certificate `taloscope certs`
//! lists, of every cluster, soonest end first, as the fleet's pollers read them with the
//! command's own collector (`fleet::cert_expiry`); the move keys select one (its fix shows
//! below), Esc goes back. State, keys and update step here, the drawing in `view`.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use crate::app::binding::{Binding, Key, KeyLine, MOVE_KEYS, bind, intent, lines_with_moves};
use crate::app::screen::Screen;
use crate::app::screens::{FleetChange, ScreenModule, ScreenName, Shared, Step};
use crate::fleet::FleetModel;
use crate::fleet::cert_expiry::{CertExpiry, soonest_first};
use crate::tui::Look;

mod view;

/// The screen's selection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CertsScreen {
    pub selected: usize,
}

/// The screen's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CertsKey {
    Back,
}

#[rustfmt::skip]
static KEYS: &[Binding<CertsKey, CertsScreen>] = &[
    bind(&[Key::ESC], CertsKey::Back, "back where the screen was opened").footer("back"),
];

/// Every cluster's certificates, soonest end first.
pub fn fleet_certs(fleet: &FleetModel) -> Vec<CertExpiry> {
    let mut certs: Vec<CertExpiry> = fleet
        .clusters
        .values()
        .flat_map(|live| live.certs.iter().cloned())
        .collect();
    soonest_first(&mut certs);
    certs
}

impl ScreenModule for CertsScreen {
    fn name(&self) -> ScreenName {
        "certs"
    }

    fn title(&self) -> &'static str {
        "Certificates (C on the fleet, :certs)"
    }

    fn keys(&self) -> Vec<KeyLine> {
        lines_with_moves(KEYS, self)
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        if intent(KEYS, event) == Some(&CertsKey::Back) {
            return Step::close();
        }
        if let Some(step) = intent(MOVE_KEYS, event) {
            let last = fleet_certs(shared.fleet).len().saturating_sub(1);
            let page = usize::from(shared.size.1.saturating_sub(12).max(1));
            self.selected = step.from(self.selected, last, page);
        }
        Step::default()
    }

    /// Every cluster's certificates, as they are read.
    fn on_fleet_change(&mut self, change: &FleetChange, _shared: &Shared) -> bool {
        change.certificates
    }

    /// Every cluster's, opened from the fleet.
    fn of_cluster_in_use(&self) -> bool {
        false
    }

    /// Every cluster's, so Esc leads back to the fleet when it was opened from nowhere else.
    fn home(&self) -> Screen {
        Screen::Fleet
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        let (screen, fleet) = (self, shared.fleet);
        (&view::CertsPane {
            screen,
            fleet,
            look,
        })
            .render(area, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::action::{Action, AppEvent};
    use crate::app::screen::{Pane, Screen};
    use crate::app::test_fixtures::{cluster_screen, press};
    use crate::app::update;
    use crate::fleet::cert_expiry::ExpiryVerdict;
    use crate::fleet::{ClusterStatus, FleetEvent};
    use crossterm::event::KeyCode;

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

    fn selected(s: &crate::app::AppState) -> usize {
        s.screens
            .find::<CertsScreen>()
            .expect("the certs screen")
            .selected
    }

    #[test]
    fn certs_opens_soonest_first_moves_and_goes_back() {
        let status = ClusterStatus {
            name: "lab".into(),
            ..Default::default()
        };
        let mut s = cluster_screen(status, Pane::Etcd);
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
        assert_eq!(s.screen, Screen::Module("certs"));
        let contexts: Vec<String> = fleet_certs(&s.fleet)
            .into_iter()
            .map(|c| c.context)
            .collect();
        assert_eq!(contexts, ["soon", "near", "far"]);
        assert_eq!(fleet_certs(&s.fleet)[0].verdict, ExpiryVerdict::Fail);
        for _ in 0..3 {
            press(&mut s, KeyCode::Char('j'));
        }
        assert_eq!(selected(&s), 2, "stops at the last");
        press(&mut s, KeyCode::Char('g'));
        assert_eq!(selected(&s), 0);
        press(&mut s, KeyCode::Esc);
        assert_eq!(s.screen, Screen::Cluster(Pane::Etcd));
    }

    #[test]
    fn certificates_read_while_the_screen_is_open_redraw_it() {
        let status = ClusterStatus {
            name: "lab".into(),
            ..Default::default()
        };
        let mut s = cluster_screen(status, Pane::Nodes);
        update(&mut s, Action::Open("certs"));
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
