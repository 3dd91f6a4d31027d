//! The create screen (`n` on the fleet): the new cluster's request, the plan the
//! CLI's own planner makes of it with its guards, and the progress of the run started here
//! (the maintenance fingerprints it asks about answered with `y` / `n`). The request in
//! `wizard`, the keys in `keys`, the pure update step (the screen module's side) in `update`,
//! the drawing in `view`; the console reads the journals and plans (`console::run_create`)
//! and runs the approved create on its one runner.
use crate::app::screens::ScreenName;
use crate::cluster_lifecycle::{CreatePlan, CreateRequest, UnfinishedCreate};
use crate::guards::Guard;
use crate::operation::progress::OperationProgress;

mod keys;
mod plan;
mod update;
mod view;
pub mod wizard;

pub use wizard::{CreateField, CreateWizard, MAX_CONTROLPLANES, MAX_WORKERS};

/// The screen module's name: its news and tasks are addressed to it.
pub const NAME: ScreenName = "create";

/// Which part of the create screen shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CreateStage {
    #[default]
    Form,
    Plan,
    Progress,
}

/// What the input line the screen opened holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Typing {
    /// The focused field's value.
    Field,
    /// The acknowledgement a guard's warning needs.
    Acknowledgement,
}

/// Everything about creating clusters in the console: the wizard, which part shows, and the
/// create run started here as its runner's events built it.
#[derive(Debug, Clone, Default)]
pub struct CreateScreen {
    pub wizard: Option<CreateWizard>,
    pub stage: CreateStage,
    pub progress: Option<OperationProgress>,
    typing: Option<Typing>,
}

impl CreateScreen {
    pub fn running(&self) -> bool {
        self.progress
            .as_ref()
            .is_some_and(OperationProgress::running)
    }
}

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
    /// The operator's answer to fingerprint question `id`.
    Answer {
        cluster: String,
        id: u64,
        trust: bool,
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
