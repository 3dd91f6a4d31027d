//! The actions screen (`a` on the nodes pane, node detail, the etcd pane and `:capi`): the menu
//! of what can be done to the selection (the shell hands it over, `app::actions::MenuOpened`),
//! then the chosen action's plan and guards through the one gate (`app::plan_keys`). The plans
//! in `plan`, the keys in `keys`, the update step in `update`, the drawing in `view`; the
//! console reads a node plan's survey (`console::run_actions`) and runs the approved action
//! on the one runner.
use std::path::PathBuf;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::actions::{ActionMenu, MenuOpened};
use crate::app::binding::{KeyLine, intent, key_lines};
use crate::app::message::Message;
use crate::app::screen::{Pane, Screen};
use crate::app::screens::{FleetChange, ScreenModule, ScreenName, ScreenNews, Shared, Step};
use crate::approval::ApprovedAction;
use crate::tui::Look;

mod keys;
pub mod plan;
mod update;
mod view;

pub use plan::{ChoicePlan, ChoicePlanScreen, SurveyNode, Surveyed};

/// The screen module's name: its news and tasks are addressed to it.
pub const NAME: ScreenName = "actions";

/// The actions screen: the menu, or the plan of its chosen action.
#[derive(Debug, Clone, Default)]
pub struct ActionsScreen {
    /// The menu, while no plan of it is open.
    pub menu: Option<ActionMenu>,
    pub plan: Option<ChoicePlanScreen>,
    /// The screen the menu pops up over.
    over: Option<Screen>,
    /// Where a snapshot goes unless the operator types another path.
    snapshot_dir: PathBuf,
    /// How many talosconfig backups a forget keeps.
    kept_backups: usize,
    /// The cluster and node whose snapshot's file is being typed.
    snapshot_of: Option<(String, String)>,
}

impl ActionsScreen {
    fn table(&self) -> &'static [crate::app::binding::Binding<keys::ActionsKey, ActionsScreen>] {
        if self.plan.is_some() {
            keys::PLAN
        } else {
            keys::MENU
        }
    }
}

impl ScreenModule for ActionsScreen {
    fn name(&self) -> ScreenName {
        NAME
    }

    fn title(&self) -> &'static str {
        "Actions (a on nodes, node detail, etcd)"
    }

    fn keys(&self) -> Vec<KeyLine> {
        key_lines(self.table(), self)
    }

    fn binds(&self, event: &KeyEvent) -> bool {
        intent(self.table(), event).is_some()
    }

    fn open(&mut self, _shared: &Shared) -> Result<Step, Message> {
        match (&self.menu, &self.plan) {
            (None, None) => Err(Message::warn(
                "a on the nodes pane, node detail or the etcd pane opens the actions",
            )),
            _ => Ok(Step::default()),
        }
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        match intent(self.table(), event) {
            Some(key) => self.on_intent(*key, shared),
            None => Step::default(),
        }
    }

    fn on_news(&mut self, news: &ScreenNews, shared: &Shared) -> bool {
        if let Some(opened) = news.get::<MenuOpened>() {
            self.opened(opened);
            return true;
        }
        news.get::<Surveyed>()
            .is_some_and(|surveyed| self.surveyed(surveyed, shared))
    }

    fn on_fleet_change(&mut self, change: &FleetChange, shared: &Shared) -> bool {
        crate::app::plan_keys::fleet_changed(self.plan.as_mut(), change, shared)
    }

    fn on_input(&mut self, text: &str, shared: &Shared) -> Step {
        self.typed(text, shared)
    }

    fn on_approved(&mut self, approved: &ApprovedAction, shared: &Shared) -> Option<Step> {
        self.approved(approved, shared)
    }

    fn drawn_over(&self) -> Option<Screen> {
        self.plan.is_none().then_some(self.over).flatten()
    }

    fn of_cluster_in_use(&self) -> bool {
        true
    }

    fn home(&self) -> Screen {
        Screen::Cluster(Pane::Nodes)
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        view::draw(self, area, buf, shared, look);
    }
}

#[cfg(test)]
mod tests;
