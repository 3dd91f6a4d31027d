//! Screens that are modules of their own (`views/<screen>/`: state, keys, update step and
//! view in one place): the trait each implements, the context the shell lends them, and the
//! shell's routing of keys, IO news, fleet changes, ticks and drawing to them by name, so
//! nothing below them names their types.
use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::action::Effect;
use super::binding::KeyLine;
use super::message::Message;
use super::screen::Screen;
use super::state::AppState;
use crate::clock::Zone;
use crate::discovery::Cluster;
use crate::fleet::FleetModel;
use crate::tui::Look;

/// A screen module's name: how keys, commands, news and tasks address it.
pub type ScreenName = &'static str;

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
}

impl<'a> Shared<'a> {
    pub fn of(state: &'a AppState) -> Shared<'a> {
        Shared {
            clusters: &state.clusters,
            fleet: &state.fleet,
            current: state.current.as_deref(),
            now: state.now,
            wall_clock: state.wall_clock,
            size: state.size,
            zone: state.zone,
        }
    }
}

/// What a screen's update step asks of the shell: effects for the event loop, a message for
/// the operator, and whether it closes (the screen it was opened from shows again).
#[derive(Debug, Default)]
pub struct Step {
    pub effects: Vec<Effect>,
    pub message: Option<Message>,
    pub close: bool,
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
}

/// What changed in the fleet model with one poller report.
#[derive(Debug, Clone, Copy)]
pub struct FleetChange<'a> {
    pub cluster: &'a str,
    /// The report was a cluster's certificates.
    pub certificates: bool,
}

/// Data a screen's IO task (in `console`) reports to it, typed by the screen.
#[derive(Clone)]
pub struct ScreenNews {
    pub screen: ScreenName,
    pub news: Arc<dyn Any + Send + Sync>,
}

/// IO a screen asks of the event loop, typed by the screen; the console runs it and reports
/// back as [`ScreenNews`].
#[derive(Clone)]
pub struct ScreenTask {
    pub screen: ScreenName,
    pub task: Arc<dyn Any + Send + Sync>,
}

impl ScreenNews {
    pub fn new<T: Any + Send + Sync>(screen: ScreenName, news: T) -> ScreenNews {
        ScreenNews {
            screen,
            news: Arc::new(news),
        }
    }

    pub fn get<T: Any>(&self) -> Option<&T> {
        self.news.downcast_ref()
    }
}

impl ScreenTask {
    pub fn new<T: Any + Send + Sync>(screen: ScreenName, task: T) -> ScreenTask {
        ScreenTask {
            screen,
            task: Arc::new(task),
        }
    }

    pub fn get<T: Any>(&self) -> Option<&T> {
        self.task.downcast_ref()
    }
}

impl fmt::Debug for ScreenNews {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ScreenNews({})", self.screen)
    }
}

impl fmt::Debug for ScreenTask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ScreenTask({})", self.screen)
    }
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
    /// A poller report was folded into the model; whether it changed what it shows.
    fn on_fleet_change(&mut self, _change: &FleetChange, _shared: &Shared) -> bool {
        false
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
}

/// Every screen module of the console, and the screen each was opened from.
#[derive(Debug, Default)]
pub struct Screens {
    modules: Vec<Box<dyn ScreenModule>>,
    opened_from: Vec<(ScreenName, Screen)>,
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

    fn get_mut(&mut self, name: &str) -> Option<&mut Box<dyn ScreenModule>> {
        self.modules.iter_mut().find(|m| m.name() == name)
    }

    /// The module of type `T`, for its own tests and the console's task runner.
    pub fn find<T: Any>(&self) -> Option<&T> {
        self.modules.iter().find_map(|m| m.as_any().downcast_ref())
    }

    pub fn iter(&self) -> impl Iterator<Item = &dyn ScreenModule> {
        self.modules.iter().map(|m| m.as_ref())
    }

    pub fn busy(&self) -> bool {
        self.modules.iter().any(|m| m.busy())
    }
}

/// The module on top, if the screen is one.
fn on_top(state: &AppState) -> Option<ScreenName> {
    match state.screen {
        Screen::Module(name) => Some(name),
        _ => None,
    }
}

/// The screens and what they are lent, borrowed apart.
fn parts(state: &mut AppState) -> (&mut Screens, Shared<'_>) {
    let shared = Shared {
        clusters: &state.clusters,
        fleet: &state.fleet,
        current: state.current.as_deref(),
        now: state.now,
        wall_clock: state.wall_clock,
        size: state.size,
        zone: state.zone,
    };
    (&mut state.screens, shared)
}

/// Brings the screen `name` on top (`Action::Open`, its `:` command), remembering where it
/// was opened from.
pub fn open(state: &mut AppState, name: ScreenName) -> Vec<Effect> {
    let (screens, shared) = parts(state);
    let opened = screens.get_mut(name).map(|module| module.open(&shared));
    match opened {
        None => {
            state.message = Some(Message::error(format!("no screen named {name}")));
            Vec::new()
        }
        Some(Err(why)) => {
            state.message = Some(why);
            Vec::new()
        }
        Some(Ok(step)) => {
            if state.screen != Screen::Module(name) {
                let from = state.screen;
                let opened_from = &mut state.screens.opened_from;
                opened_from.retain(|(n, _)| *n != name);
                opened_from.push((name, from));
            }
            state.screen = Screen::Module(name);
            finish(state, name, step)
        }
    }
}

/// A key of the module on top.
pub fn on_key(state: &mut AppState, event: &KeyEvent) -> Vec<Effect> {
    let Some(name) = on_top(state) else {
        return Vec::new();
    };
    let (screens, shared) = parts(state);
    let Some(module) = screens.get_mut(name) else {
        return Vec::new();
    };
    let step = module.on_key(event, &shared);
    finish(state, name, step)
}

fn finish(state: &mut AppState, name: ScreenName, step: Step) -> Vec<Effect> {
    if let Some(message) = step.message {
        state.message = Some(message);
    }
    if step.close && state.screen == Screen::Module(name) {
        let from = state
            .screens
            .opened_from
            .iter()
            .position(|(n, _)| *n == name)
            .map(|i| state.screens.opened_from.remove(i).1);
        let home = state.screens.get(name).map_or(Screen::Fleet, |m| m.home());
        state.screen = from.unwrap_or(home);
    }
    step.effects
}

/// News for a module; whether the screen on top changed.
pub fn on_news(state: &mut AppState, news: &ScreenNews) -> bool {
    let top = on_top(state);
    let (screens, shared) = parts(state);
    screens
        .get_mut(news.screen)
        .is_some_and(|m| m.on_news(news, &shared))
        && top == Some(news.screen)
}

/// Tells every module of a poller report; whether the one on top changed.
pub fn on_fleet_change(state: &mut AppState, change: &FleetChange) -> bool {
    let top = on_top(state);
    let (screens, shared) = parts(state);
    let mut redraw = false;
    for module in &mut screens.modules {
        redraw |= module.on_fleet_change(change, &shared) && top == Some(module.name());
    }
    redraw
}

/// Tells every module of a tick; whether the one on top changed.
pub fn on_tick(state: &mut AppState, wall: u64) -> bool {
    let top = on_top(state);
    let mut redraw = false;
    for module in &mut state.screens.modules {
        redraw |= module.on_tick(wall) && top == Some(module.name());
    }
    redraw
}

/// Whether the screen on top is a module that shows the cluster in use.
pub fn of_cluster_in_use(state: &AppState) -> bool {
    on_top(state)
        .and_then(|name| state.screens.get(name))
        .is_some_and(|m| m.of_cluster_in_use())
}

/// An action while a module is on top and no overlay or input line is: its keys go to it;
/// `?` and `:` are the shell's.
pub fn on_action(state: &mut AppState, action: super::action::Action) -> Vec<Effect> {
    use super::action::Action;
    match action {
        Action::ScreenKey(event) => return on_key(state, &event),
        Action::Open(name) => return open(state, name),
        Action::OpenHelp => state.overlay = Some(super::state::Overlay::Help { scroll: 0 }),
        Action::OpenCommandLine => {
            state.open_input(super::state::InputKind::Command, String::new());
        }
        _ => {}
    }
    Vec::new()
}
