//! The create screen (`n` on the fleet): the new cluster's request and the plan the CLI's own
//! planner makes of it with its guards; the approved create runs on the console's one runner
//! and shows on the one progress screen (where `y` / `n` answer the maintenance fingerprints
//! it asks about). The request in `wizard`, its keys and pure update step (what the create
//! says of itself as a wizard on the one plan screen, `views::wizard`) in `update`, the
//! drawing in `view` and `plan`; the console reads the journals and plans
//! (`console::run_create`).
use crate::app::screens::ScreenName;
use crate::cluster_lifecycle::{CreatePlan, CreateRequest, UnfinishedCreate};
use crate::guards::Guard;
use crate::views::plan::PlanScreen;
use crate::views::wizard::Wizard;

mod plan;
mod update;
mod view;
pub mod wizard;

pub use wizard::{CreateField, NewCluster};

/// The screen module's name: its news and tasks are addressed to it.
pub const NAME: ScreenName = "create";

/// The create wizard: the new cluster asked for and its form.
pub type CreateWizard = Wizard<NewCluster>;

/// The create screen: the wizard on the one plan screen.
pub type CreateScreen = PlanScreen<CreateWizard>;

/// IO the screen asks of the console.
#[derive(Debug, Clone)]
pub enum CreateTask {
    /// Read the create journals killed runs left.
    ReadUnfinished,
    /// Plan `request` and evaluate its guards as the CLI does.
    Plan {
        asked: u64,
        request: Box<CreateRequest>,
    },
}

/// What the console's create tasks report.
#[derive(Debug, Clone)]
pub enum CreateNews {
    /// The create journals killed runs left.
    Unfinished {
        found: Vec<UnfinishedCreate>,
        errors: Vec<String>,
    },
    /// The plan and guards asked for as `asked`.
    Planned {
        asked: u64,
        result: Result<(Box<CreatePlan>, Vec<Guard>), String>,
    },
}

#[cfg(test)]
mod tests;
