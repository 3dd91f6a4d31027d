//! The create screen (`n` on the fleet): the new cluster's request, the plan the
//! CLI's own planner makes of it with its guards, and the progress of the run started here
//! (the maintenance fingerprints it asks about answered with `y` / `n`). The request in
//! `wizard`, the keys in `keys`, the pure update step in `update`, the drawing in `view`; the
//! console reads the journals and plans (`console::run_create`) and runs the approved create
//! on its one runner.
use std::any::Any;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::binding::{KeyLine, MOVE_KEYS, intent, key_lines};
use crate::app::message::Message;
use crate::app::screens::{ScreenModule, ScreenName, ScreenNews, Shared, Step};
use crate::approval::{ApprovedAction, MutatingAction};
use crate::cluster_lifecycle::{CreatePlan, CreateRequest, UnfinishedCreate};
use crate::guards::Guard;
use crate::operation::OperationKind;
use crate::operation::progress::{OperationProgress, ProgressEvent};
use crate::tui::Look;

mod keys;
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

impl ScreenModule for CreateScreen {
    fn name(&self) -> ScreenName {
        NAME
    }

    fn title(&self) -> &'static str {
        match self.stage {
            CreateStage::Form => "Create a cluster (n on the fleet)",
            CreateStage::Plan => "Create plan and guards",
            CreateStage::Progress => "Create progress",
        }
    }

    fn keys(&self) -> Vec<KeyLine> {
        let mut lines = key_lines(keys::of(self.stage), self);
        if self.stage != CreateStage::Progress {
            lines.extend(key_lines(MOVE_KEYS, &()));
        }
        lines
    }

    fn binds(&self, event: &KeyEvent) -> bool {
        let moves = self.stage != CreateStage::Progress && intent(MOVE_KEYS, event).is_some();
        moves || intent(keys::of(self.stage), event).is_some()
    }

    fn open(&mut self, shared: &Shared) -> Result<Step, Message> {
        Ok(self.open_wizard(shared))
    }

    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step {
        if let Some(key) = intent(keys::of(self.stage), event) {
            return self.on_intent(*key, shared);
        }
        match intent(MOVE_KEYS, event) {
            Some(step) => self.on_move(*step, shared),
            None => Step::default(),
        }
    }

    fn on_news_step(&mut self, news: &ScreenNews, _shared: &Shared) -> Step {
        news.get::<CreateNews>()
            .map_or_else(Step::default, |news| self.on_report(news.clone()))
    }

    fn on_text(&mut self, text: &str, _shared: &Shared) -> Step {
        self.take_text(text)
    }

    fn claims(&self, action: &MutatingAction) -> bool {
        matches!(action, MutatingAction::CreateCluster { .. })
    }

    fn on_approved(&mut self, approved: ApprovedAction, shared: &Shared) -> Step {
        self.run_approved(approved, shared)
    }

    fn follows(&self, kind: OperationKind) -> bool {
        kind == OperationKind::Create
    }

    fn on_progress(&mut self, event: ProgressEvent, shared: &Shared) -> Step {
        self.fold_progress(event, shared)
    }

    fn quit_question(&self) -> Option<String> {
        self.running().then(|| {
            "a create is running; its journal resumes it (n, Enter) next time; quit? y/N".into()
        })
    }

    /// An elapsed time on screen; a run started before the first tick takes its start from it.
    fn on_tick(&mut self, wall: u64) -> bool {
        let Some(progress) = self.progress.as_mut() else {
            return false;
        };
        progress.clock_known(wall);
        progress.running()
    }

    fn busy(&self) -> bool {
        self.running()
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look) {
        view::draw(self, area, buf, shared, look);
    }

    fn boxed_clone(&self) -> Box<dyn ScreenModule> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests;
