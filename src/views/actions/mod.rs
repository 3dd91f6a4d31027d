//! The actions screen (`a` on the nodes pane, node detail, the etcd pane and `:capi`): the menu
//! of what can be done to the selection (the shell hands it over, `app::actions::MenuOpened`),
//! then the chosen action's plan and guards on the one plan screen (`views::plan`). The plans
//! in `plan`, the menu's keys and the update step in `update`, the drawing in `view`;
//! the console reads a node plan's survey (`console::run_actions`) and runs the approved action
//! on the one runner.
use std::path::PathBuf;

use crate::app::actions::ActionMenu;
use crate::app::screen::Screen;
use crate::app::screens::ScreenName;
use crate::views::plan::PlanScreen;

pub mod plan;
mod update;
mod view;

pub use plan::{ChoicePlan, ChoicePlanScreen, SurveyNode, Surveyed};

/// The screen module's name: its news and tasks are addressed to it.
pub const NAME: ScreenName = "actions";

/// The actions screen: the menu, or the plan of its chosen action on the one plan screen.
pub type ActionsScreen = PlanScreen<ChoicePlan>;

/// What the actions screen keeps beside the plan: the menu and what its plans need.
#[derive(Debug, Clone, Default)]
pub struct ActionsMenu {
    /// The menu, while no plan of it is open.
    pub menu: Option<ActionMenu>,
    /// The screen the menu pops up over.
    over: Option<Screen>,
    /// Where a snapshot goes unless the operator types another path.
    snapshot_dir: PathBuf,
    /// How many talosconfig backups a forget keeps.
    kept_backups: usize,
    /// The cluster and node whose snapshot's file is being typed.
    snapshot_of: Option<(String, String)>,
}

#[cfg(test)]
mod tests;
