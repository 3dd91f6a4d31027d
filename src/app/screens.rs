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
pub use super::binding::KeyLine;
use super::message::Message;
use super::plan_screen::GuardSource;
use super::screen::Screen;
pub use super::screen_io::{ScreenName, ScreenNews, ScreenTask};
use crate::approval::ApprovedAction;
use crate::clock::Zone;
use crate::config::Config;
use crate::discovery::Cluster;
use crate::fleet::{FleetModel, NodeStatus, node_named_among};
use crate::operation::progress::OperationProgress;
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
    /// Read-only mode (`--readonly`): a plan is for reading.
    pub readonly: bool,
    /// What a plan's guards read of any cluster beyond the fleet model.
    pub guards: &'a dyn GuardSource,
    /// taloscope's own configuration (its providers).
    pub config: &'a Config,
}

impl Shared<'_> {
    /// How far PgUp/PgDn move through a screen's list: the rows below its frame.
    pub fn page(&self) -> usize {
        usize::from(self.size.1.saturating_sub(8)).max(1)
    }

    /// Rows of text a screen's one pane shows: all but the header, message and footer lines
    /// and the pane's borders.
    pub fn pane_rows(&self) -> usize {
        usize::from(self.size.1.saturating_sub(5)).max(1)
    }

    /// The cluster in use, or the warning that says how to choose one.
    pub fn cluster_in_use(&self) -> Result<&str, Message> {
        self.current.ok_or_else(Message::no_cluster_in_use)
    }
}

/// What a screen's update step asks of the shell: effects for the event loop, a message for
/// the operator, and whether it closes (the screen it was opened from shows again).
#[derive(Debug, Default)]
pub struct Step {
    pub effects: Vec<Effect>,
    pub message: Option<Message>,
    pub close: bool,
    /// Opens the shell's filter line holding this text; what is typed there comes back
    /// through [`ScreenModule::set_filter`].
    pub filter: Option<String>,
    /// What it asks the shell to show over it.
    pub ask: Option<Ask>,
    /// Another screen to bring on top, by its name, with the words of its `:` command
    /// (`["logs", "kube-system/coredns-x:coredns", "w-1"]`): screens never import each other.
    pub open: Option<(ScreenName, Vec<String>)>,
}

/// What a screen asks the shell to show over it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// The input line, `prompt` first and `text` typed; Enter gives the text to its
    /// `on_input`.
    Input { prompt: &'static str, text: String },
    /// The explanation overlay.
    Explain { title: String, text: String },
    /// The help overlay (its keys).
    Help,
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

    pub fn ask(ask: Ask) -> Step {
        Step {
            ask: Some(ask),
            ..Step::default()
        }
    }

    /// Brings the screen `screen` on top with the words of its `:` command.
    pub fn open(screen: ScreenName, words: Vec<String>) -> Step {
        Step {
            open: Some((screen, words)),
            ..Step::default()
        }
    }

    /// Opens the shell's filter line holding `text`.
    pub fn filter(text: String) -> Step {
        Step {
            filter: Some(text),
            ..Step::default()
        }
    }

    /// The audited "not run" of `approved` whose plan was closed or changed before it was
    /// confirmed, and the message saying so.
    pub fn closed_approval(approved: &ApprovedAction) -> Step {
        let why = "the plan was closed or changed before it was confirmed".to_string();
        Step::not_started(approved, why)
    }

    /// The audited "not run" of `approved`, and the message saying `why`.
    pub fn not_started(approved: &ApprovedAction, why: String) -> Step {
        Step {
            message: Some(Message::warn(format!("not started: {why}"))),
            ..Step::effects(super::action::not_run(approved, why))
        }
    }
}

/// Where a screen is opened from: the screen under it, the cluster and node selected there
/// (read once, as the shell opens it) and the words of the `:` command or key that named
/// what to show (`:logs etcd cp-1`: `logs`, `etcd`, `cp-1`).
#[derive(Debug, Clone)]
pub struct Opening {
    pub from: Screen,
    /// The fleet's selected cluster on the fleet, the cluster in use on its panes and node
    /// detail.
    pub cluster: Option<String>,
    /// The nodes pane's selection, node detail's node.
    pub node: Option<String>,
    pub words: Vec<String>,
}

impl Opening {
    /// The node this opening names (the word after the screen's command, `:resources NODE`, by
    /// name or address), else the one selected where it was opened, in the cluster in use;
    /// `usage` tells the operator how to name one when neither does.
    pub fn node<'a>(
        &self,
        shared: &Shared<'a>,
        usage: &str,
    ) -> Result<(&'a str, &'a NodeStatus), Message> {
        let cluster = shared.current.ok_or_else(|| Message::info(usage))?;
        let wanted = self.words.get(1).or(self.node.as_ref());
        let wanted = wanted.ok_or_else(|| Message::info(usage))?;
        let nodes = shared
            .fleet
            .cluster(cluster)
            .map(|live| live.status.nodes.as_slice());
        let nodes = nodes.unwrap_or_default();
        let node = node_named_among(cluster, nodes, wanted).map_err(Message::error)?;
        Ok((cluster, node))
    }
}

/// What changed in the fleet model with one poller report.
#[derive(Debug, Clone, Copy)]
pub struct FleetChange<'a> {
    pub cluster: &'a str,
    /// The report was a cluster's certificates.
    pub certificates: bool,
    /// The report was the Cluster API's (of any cluster it owns).
    pub capi: bool,
}

/// One screen of the console as a module: its state, its keys as data, its pure update step
/// (effects out, no IO) and its view. The shell routes to the one on top; screens never see
/// each other.
pub trait ScreenModule: fmt::Debug + Send + Sync + Any + AsScreen {
    fn name(&self) -> ScreenName;
    /// Its section's title in `?`.
    fn title(&self) -> &'static str;
    /// Its own keys, in help and footer order (the shell adds `:`, `?` and quit).
    fn keys(&self) -> Vec<KeyLine>;
    /// Whether one of its keys is `event`: by default, one of the keys it lists.
    fn binds(&self, event: &KeyEvent) -> bool {
        (self.keys().iter()).any(|line| line.bound.iter().any(|k| k.matches(event)))
    }
    /// Brought on screen: the step, or why it cannot show now (it stays closed); by default
    /// it shows as it stands.
    fn open(&mut self, _shared: &Shared) -> Result<Step, Message> {
        Ok(Step::default())
    }
    /// Brought on screen from `opening`; by default as [`ScreenModule::open`].
    fn open_from(&mut self, _opening: &Opening, shared: &Shared) -> Result<Step, Message> {
        self.open(shared)
    }
    /// One of its keys, while it is on top.
    fn on_key(&mut self, event: &KeyEvent, shared: &Shared) -> Step;
    /// News from its IO task; whether it changed what it shows.
    fn on_news(&mut self, _news: &ScreenNews, _shared: &Shared) -> bool {
        false
    }
    /// News from its IO task when it asks something of the shell (a message, effects):
    /// whether it changed what it shows, and the step; the default folds it with `on_news`.
    fn on_news_step(&mut self, news: &ScreenNews, shared: &Shared) -> (bool, Step) {
        (self.on_news(news, shared), Step::default())
    }
    /// A poller report was folded into the model; whether it changed what it shows.
    fn on_fleet_change(&mut self, _change: &FleetChange, _shared: &Shared) -> bool {
        false
    }
    /// Enter on the input line it asked for ([`Ask::Input`]) with `text` typed.
    fn on_input(&mut self, _text: &str, _shared: &Shared) -> Step {
        Step::default()
    }
    /// The dispatcher approved what its Start asked for: the step that runs it, or `None`
    /// when no plan of its own asked for it.
    fn on_approved(&mut self, _approved: &ApprovedAction, _shared: &Shared) -> Option<Step> {
        None
    }
    /// The screen drawn under it, when it is a popup over one.
    fn drawn_over(&self) -> Option<Screen> {
        None
    }
    /// A wall-clock tick; whether it changed what it shows.
    fn on_tick(&mut self, _wall: u64) -> bool {
        false
    }
    /// The text typed on the shell's filter line it opened ([`Step::filter`]).
    fn set_filter(&mut self, _text: &str) {}
    /// The node whose services and events the pollers watch while it is on top.
    fn watched_node(&self) -> Option<&str> {
        None
    }
    /// After each update step, whether it is on top: the effects that start or stop what
    /// runs only while it shows.
    fn settle(&mut self, _on_top: bool) -> Vec<Effect> {
        Vec::new()
    }
    /// Whether its work runs (the loop ticks the clock for it).
    fn busy(&self) -> bool {
        false
    }
    /// The operation run from this console that it follows (running, the last, or one a
    /// journal left): the shell asks whether one runs before it starts or quits.
    fn operation(&self) -> Option<&OperationProgress> {
        None
    }
    /// Whether it shows the cluster in use (the header names it, the pollers focus on it):
    /// every screen but the fleet-wide ones.
    fn of_cluster_in_use(&self) -> bool {
        true
    }
    /// Where Esc leads when it was opened from nowhere else (the shell records where every
    /// screen it opens was opened from): the cluster in use's nodes, by default.
    fn home(&self) -> Screen {
        Screen::Cluster(super::screen::Pane::Nodes)
    }
    fn draw(&self, area: Rect, buf: &mut Buffer, shared: &Shared, look: &Look);
}

/// What the shell needs of every screen module's type, whatever the screen: a copy of it.
/// Every cloneable module has it. (A module is `Any` itself: `Screens::find` looks one up by
/// its type, and `find_mut` lets a test set its scene.)
pub trait AsScreen {
    fn boxed_clone(&self) -> Box<dyn ScreenModule>;
}

impl<T: ScreenModule + Clone + 'static> AsScreen for T {
    fn boxed_clone(&self) -> Box<dyn ScreenModule> {
        Box::new(self.clone())
    }
}

/// Every screen module of the console, and the screen each was opened from.
#[derive(Debug, Default)]
pub struct Screens {
    pub(super) modules: Vec<Box<dyn ScreenModule>>,
    pub(super) opened_from: std::collections::HashMap<ScreenName, Screen>,
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
            opened_from: Default::default(),
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
        (self.modules.iter()).find_map(|m| (m.as_ref() as &dyn Any).downcast_ref())
    }

    /// The module of type `T`, to set a test's scene.
    pub fn find_mut<T: Any>(&mut self) -> Option<&mut T> {
        (self.modules.iter_mut()).find_map(|m| (m.as_mut() as &mut dyn Any).downcast_mut())
    }

    pub fn iter(&self) -> impl Iterator<Item = &dyn ScreenModule> {
        self.modules.iter().map(|m| m.as_ref())
    }

    pub fn busy(&self) -> bool {
        self.modules.iter().any(|m| m.busy())
    }
}
