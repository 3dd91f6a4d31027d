//! Screens that are modules of their own (`views/<screen>/`: state, keys, update step and
//! view in one place): the trait each implements, the context the shell lends them, what
//! they ask of it, and the registry the shell (`shell`) routes through by name, so nothing
//! below them names their types.
use std::any::Any;
use std::fmt;
use std::time::Instant;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::action::Effect;
use super::message::Message;
use super::screen::Screen;
pub use super::screen_io::{ScreenName, ScreenNews, ScreenTask};
use super::state::Overlay;
use crate::approval::{ApprovedAction, MutatingAction};
use crate::clock::Zone;
use crate::config::Config;
use crate::discovery::Cluster;
use crate::fleet::FleetModel;
use crate::operation::OperationKind;
use crate::operation::progress::ProgressEvent;
use crate::tui::Look;

/// What a screen reads of the console around it: lent for one call, never owned.
#[derive(Debug, Clone, Copy)]
pub struct Shared<'a> {
    pub clusters: &'a [Cluster],
    pub fleet: &'a FleetModel,
    /// The cluster in use.
    pub current: Option<&'a str>,
    /// The time of the latest poller report (ages are measured to it).
    pub now: Option<Instant>,
    /// The latest wall-clock tick, seconds since the Unix epoch.
    pub wall_clock: Option<u64>,
    /// The terminal's size in cells (width, height).
    pub size: (u16, u16),
    pub zone: Zone,
    /// taloscope's own configuration (its providers).
    pub config: &'a Config,
    /// Read-only mode: plans are for reading.
    pub readonly: bool,
}

/// What a screen's update step asks of the shell: effects for the event loop, a message for
/// the operator, and whether it closes (the screen it was opened from shows again).
#[derive(Debug, Default)]
pub struct Step {
    pub effects: Vec<Effect>,
    pub message: Option<Message>,
    pub close: bool,
    /// The input line, opened for the screen: what it prompts and the text typed already.
    /// Enter gives the line to [`ScreenModule::on_text`].
    pub input: Option<(&'static str, String)>,
    /// An overlay over the screen (help, an explanation).
    pub overlay: Option<Overlay>,
}

impl Step {
    pub fn effects(effects: Vec<Effect>) -> Step {
        Step {
            effects,
            ..Step::default()
        }
    }

    pub fn message(message: Message) -> Step {
        Step {
            message: Some(message),
            ..Step::default()
        }
    }

    pub fn close() -> Step {
        Step {
            close: true,
            ..Step::default()
        }
    }

    /// The input line opened for the screen with `prompt`, `text` typed already.
    pub fn input(prompt: &'static str, text: String) -> Step {
        Step {
            input: Some((prompt, text)),
            ..Step::default()
        }
    }

    pub fn overlay(overlay: Overlay) -> Step {
        Step {
            overlay: Some(overlay),
            ..Step::default()
        }
    }

    /// The step, saying `message` too when there is one.
    pub fn saying(mut self, message: Option<Message>) -> Step {
        self.message = message.or(self.message);
        self
    }
}

/// One key of a screen's table as `?` and the footer show it, its offer answered where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyLine {
    pub keys: String,
    pub help: &'static str,
    /// The footer's label, when the footer shows the key here and now.
    pub footer: Option<&'static str>,
}

/// What changed in the fleet model with one poller report.
#[derive(Debug, Clone, Copy)]
pub struct FleetChange<'a> {
    pub cluster: &'a str,
    /// The report was a cluster's certificates.
    pub certificates: bool,
}

/// One screen of the console as a module: its state, its keys as data, its pure update step
/// (effects out, no IO) and its view. The shell routes to the one on top; screens never see
/// each other.
pub trait ScreenModule: fmt::Debug + Send + Sync {
    fn name(&self) -> ScreenName;
    /// Its section's title in `?`.
    fn title(&self) -> &'static str;
    /// Its own keys, in help and footer order (the shell adds `:`, `?` and quit).
    fn keys(&self) -> Vec<KeyLine>;
    /// Whether one of its keys is `event`.
    fn binds(&self, event: &KeyEvent) -> bool;
    /// Brought on screen: the step, or why it cannot show now (it stays closed).
    fn open(&mut self, shared: &Shared) -> Result<Step, Message>;
    /// One of its keys, while it is on top.
    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step;
    /// News from its IO task; whether it changed what it shows.
    fn on_news(&mut self, _news: &ScreenNews, _shared: &Shared) -> bool {
        false
    }
    /// News from its IO task when it asks something of the shell (a message, effects); the
    /// default folds it with `on_news`.
    fn on_news_step(&mut self, news: &ScreenNews, shared: &Shared) -> Step {
        self.on_news(news, shared);
        Step::default()
    }
    /// A poller report was folded into the model; whether it changed what it shows.
    fn on_fleet_change(&mut self, _change: &FleetChange, _shared: &Shared) -> bool {
        false
    }
    /// Enter on the input line the screen opened (`Step::input`).
    fn on_text(&mut self, _text: &str, _shared: &Shared) -> Step {
        Step::default()
    }
    /// Whether the dispatcher's approvals of `action` are the screen's to run.
    fn claims(&self, _action: &MutatingAction) -> bool {
        false
    }
    /// The dispatcher approved an action the screen claims: its run, or the audited "not run".
    fn on_approved(&mut self, approved: ApprovedAction, _shared: &Shared) -> Step {
        Step::effects(super::action::not_run(&approved, "no screen runs it"))
    }
    /// Whether it follows the runs of operations of `kind` (their progress events are its).
    fn follows(&self, _kind: OperationKind) -> bool {
        false
    }
    /// A progress event of a run it follows.
    fn on_progress(&mut self, _event: ProgressEvent, _shared: &Shared) -> Step {
        Step::default()
    }
    /// What quitting asks first while its work runs (y/N).
    fn quit_question(&self) -> Option<String> {
        None
    }
    /// A wall-clock tick; whether it changed what it shows.
    fn on_tick(&mut self, _wall: u64) -> bool {
        false
    }
    /// Whether its work runs (the loop ticks the clock for it).
    fn busy(&self) -> bool {
        false
    }
    /// Whether it shows the cluster in use (the header names it, the pollers focus on it).
    fn of_cluster_in_use(&self) -> bool {
        false
    }
    /// Where Esc leads when it was opened from nowhere else.
    fn home(&self) -> Screen {
        Screen::Fleet
    }
    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look);
    fn boxed_clone(&self) -> Box<dyn ScreenModule>;
    fn as_any(&self) -> &dyn Any;
    /// Itself, for a test to set its scene (`Screens::find_mut`).
    fn as_any_mut(&mut self) -> Option<&mut dyn Any> {
        None
    }
}

/// Every screen module of the console, and the screen each was opened from.
#[derive(Debug, Default)]
pub struct Screens {
    pub(super) modules: Vec<Box<dyn ScreenModule>>,
    pub(super) opened_from: Vec<(ScreenName, Screen)>,
}

impl Clone for Screens {
    fn clone(&self) -> Screens {
        Screens {
            modules: self.modules.iter().map(|m| m.boxed_clone()).collect(),
            opened_from: self.opened_from.clone(),
        }
    }
}

impl Screens {
    pub fn new(modules: Vec<Box<dyn ScreenModule>>) -> Screens {
        Screens {
            modules,
            opened_from: Vec::new(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&dyn ScreenModule> {
        self.modules
            .iter()
            .find(|m| m.name() == name)
            .map(|m| m.as_ref())
    }

    pub(super) fn get_mut(&mut self, name: &str) -> Option<&mut Box<dyn ScreenModule>> {
        self.modules.iter_mut().find(|m| m.name() == name)
    }

    /// The module of type `T`, for its own tests and the console's task runner.
    pub fn find<T: Any>(&self) -> Option<&T> {
        self.modules.iter().find_map(|m| m.as_any().downcast_ref())
    }

    /// The module of type `T`, to set a test's scene.
    pub fn find_mut<T: Any>(&mut self) -> Option<&mut T> {
        self.modules
            .iter_mut()
            .find_map(|m| m.as_any_mut()?.downcast_mut())
    }

    pub fn iter(&self) -> impl Iterator<Item = &dyn ScreenModule> {
        self.modules.iter().map(|m| m.as_ref())
    }

    pub fn busy(&self) -> bool {
        self.modules.iter().any(|m| m.busy())
    }
}
