//! The health checklist screen (`H`, `:health`): the checks of the cluster in use, filling in
//! as the node's stream (or the client-side evaluation on the live model) reports them. The
//! run's state in `checklist`, the keys here (`r` runs the checks again, `c` the client-side
//! ones after the server's stopped, Up/Down and Enter open a check's whole error, Esc closes
//! it or goes back), the pure update step in `update`, the drawing in `view`; the console
//! runs the server-side checks (`console::run_health`).

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use crate::app::binding::{Binding, Key, KeyLine, bind, intent, key_lines};
use crate::app::message::Message;
use crate::app::screens::{FleetChange, ScreenModule, ScreenName, ScreenNews, Shared, Step};
use crate::tui::Look;

pub mod checklist;
mod update;
mod view;

pub use checklist::{HealthNews, HealthReport, HealthRun, HealthScreen};

/// The screen module's name: its news and tasks are addressed to it.
pub const NAME: ScreenName = "health";

/// The checklist screen: its latest run, kept when the screen is left.
#[derive(Debug, Clone, Default)]
pub struct Checklist {
    pub latest: Option<HealthScreen>,
}

/// The checklist's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HealthKey {
    Rerun,
    ClientChecks,
    ToggleError,
    Next,
    Previous,
    Back,
}

#[rustfmt::skip]
static CHECKLIST: &[Binding<HealthKey, Checklist>] = &[
    bind(&[Key::char('r')], HealthKey::Rerun, "run the checks again (once the run ended)").footer("re-run").offered(ended),
    bind(&[Key::char('c')], HealthKey::ClientChecks, "the client-side checks, which go on past a failing one (after the server's stopped)").footer("client checks").offered(server_stopped),
    bind(&[Key::ENTER], HealthKey::ToggleError, "the selected check's whole error, open or closed").footer("error").offered(has_error),
    bind(&[Key::char('j'), Key::DOWN], HealthKey::Next, "select the next check"),
    bind(&[Key::char('k'), Key::UP], HealthKey::Previous, "select the previous check"),
    bind(&[Key::ESC], HealthKey::Back, "close the error, else back to the cluster (a running check goes on)").footer("back"),
];

fn ended(screen: &Checklist) -> bool {
    screen.latest.as_ref().is_some_and(|h| !h.running())
}

fn server_stopped(screen: &Checklist) -> bool {
    screen.latest.as_ref().is_some_and(|h| h.not_run() > 0)
}

fn has_error(screen: &Checklist) -> bool {
    (screen.latest.as_ref()).is_some_and(|h| h.focused_error().is_some())
}

impl ScreenModule for Checklist {
    fn name(&self) -> ScreenName {
        NAME
    }

    fn title(&self) -> &'static str {
        "Health checklist (H, :health)"
    }

    fn keys(&self) -> Vec<KeyLine> {
        key_lines(CHECKLIST, self)
    }

    fn open(&mut self, shared: &Shared) -> Result<Step, Message> {
        self.open_checks(shared)
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        match intent(CHECKLIST, event) {
            Some(key) => self.on_intent(*key, shared),
            None => Step::default(),
        }
    }

    fn on_news(&mut self, news: &ScreenNews, shared: &Shared) -> bool {
        news.get::<HealthReport>()
            .is_some_and(|report| self.on_report(report, shared))
    }

    fn on_fleet_change(&mut self, change: &FleetChange, shared: &Shared) -> bool {
        self.on_status_change(shared, change.cluster)
    }

    fn on_tick(&mut self, wall: u64) -> bool {
        self.latest.as_mut().is_some_and(|h| h.tick(wall))
    }

    fn busy(&self) -> bool {
        self.latest.as_ref().is_some_and(|h| h.running())
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, _shared: &Shared, look: &Look) {
        let latest = self.latest.as_ref();
        (&view::HealthPane { latest, look }).render(area, buf);
    }
}
