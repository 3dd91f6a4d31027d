//! The shell's side of the screen modules: brings one on top and back, and routes keys, IO
//! news, poller reports and ticks to them with the context they are lent. Pure.
use crossterm::event::KeyEvent;

use super::action::Effect;
use super::actions::ProgressNews;
use super::message::Message;
use super::screen::Pane;
use super::screen::{Screen, TableKind};
use super::screens::{Ask, FleetChange, Opening, ScreenModule, ScreenName, ScreenNews};
use super::screens::{Screens, Shared, Step};
use super::state::{AppState, InputKind, Overlay};
use crate::approval::ApprovedAction;

/// What the screen modules are lent of `state`.
pub fn shared(state: &AppState) -> Shared<'_> {
    Shared {
        clusters: &state.clusters,
        fleet: &state.fleet,
        current: state.current.as_deref(),
        now: state.now,
        wall_clock: state.wall_clock,
        size: state.size,
        zone: state.zone,
        readonly: state.readonly,
        guards: state,
        config: &state.provision.config,
    }
}

/// The module on top, if the screen is one.
fn on_top(state: &AppState) -> Option<ScreenName> {
    match state.screen {
        Screen::Module(name) => Some(name),
        _ => None,
    }
}

/// The module on top itself.
fn top_module(state: &AppState) -> Option<&dyn ScreenModule> {
    state.screens.get(on_top(state)?)
}

/// Runs `f` on the screens with what they are lent of the rest of `state`.
fn lent<R>(state: &mut AppState, f: impl FnOnce(&mut Screens, &Shared) -> R) -> R {
    let mut screens = std::mem::take(&mut state.screens);
    let out = f(&mut screens, &shared(state));
    state.screens = screens;
    out
}

/// Brings the screen `name` on top (`Action::Open`, its `:` command), remembering where it
/// was opened from, with the words that name what to show (`Action::OpenWith`, a `:`
/// command's words); the screen starts with a clear message line unless it says something.
pub fn open_with(state: &mut AppState, name: ScreenName, words: Vec<String>) -> Vec<Effect> {
    if RUN_HERE.contains(&name) && shows_running(state) {
        return Vec::new();
    }
    let cluster = match state.screen {
        Screen::Fleet => super::tables::selected_key(state, TableKind::Fleet),
        screen => state.current.clone().filter(|_| screen.of_cluster_in_use()),
    };
    let node = match state.screen {
        Screen::Cluster(Pane::Nodes) | Screen::NodeDetail => {
            super::tables::selected_key(state, TableKind::Nodes)
        }
        _ => None,
    };
    let opening = Opening {
        from: state.screen,
        cluster,
        node,
        words,
    };
    let opened = lent(state, |screens, shared| {
        screens
            .get_mut(name)
            .map(|module| module.open_from(&opening, shared))
    });
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
                state.screens.opened_from.insert(name, state.screen);
            }
            state.screen = Screen::Module(name);
            state.message = None;
            finish(state, name, step)
        }
    }
}

/// The screens whose plans run on this console's one action runner (the actions', the
/// cluster plan's, the create's): none opens a new plan while an action runs here.
pub const RUN_HERE: [ScreenName; 3] = ["actions", "cluster-plan", "create"];

/// The one progress screen's name (`views::progress`): the operation run from this console.
pub const PROGRESS: ScreenName = "progress";

/// While an action runs here, its progress is shown instead of a new one; true when it was.
pub fn shows_running(state: &mut AppState) -> bool {
    if !state.operation_running() {
        return false;
    }
    state.message = Some(Message::info(
        "an action runs from this console: its progress is shown",
    ));
    state.screen = Screen::Module(PROGRESS);
    true
}

/// Tells the progress screen `news` and brings it on top; the effects it asks for.
pub fn show_progress(state: &mut AppState, news: ProgressNews) -> Vec<Effect> {
    let (_, effects) = on_news(state, &ScreenNews::new(PROGRESS, news));
    state.screen = Screen::Module(PROGRESS);
    effects
}

/// The step `f` takes of the module on top, finished: the effects it asks for, or `None`
/// when no module is on top or it takes none.
fn to_top(
    state: &mut AppState,
    f: impl FnOnce(&mut dyn ScreenModule, &Shared) -> Option<Step>,
) -> Option<Vec<Effect>> {
    let name = on_top(state)?;
    let step = lent(state, |screens, shared| {
        f(screens.get_mut(name)?.as_mut(), shared)
    })?;
    Some(finish(state, name, step))
}

/// A key of the module on top.
pub fn on_key(state: &mut AppState, event: &KeyEvent) -> Vec<Effect> {
    to_top(state, |m, shared| Some(m.on_key(event, shared))).unwrap_or_default()
}

/// Enter on the input line a module asked for: the text to the module on top.
pub fn on_input(state: &mut AppState, text: &str) -> Vec<Effect> {
    to_top(state, |m, shared| Some(m.on_input(text, shared))).unwrap_or_default()
}

/// The dispatcher's approval, for the module on top: the effects that run it, or `None` when
/// no plan of that module asked for it.
pub fn on_approved(state: &mut AppState, approved: &ApprovedAction) -> Option<Vec<Effect>> {
    to_top(state, |m, shared| m.on_approved(approved, shared))
}

fn finish(state: &mut AppState, name: ScreenName, step: Step) -> Vec<Effect> {
    if let Some(message) = step.message {
        state.message = Some(message);
    }
    if let Some(text) = step.filter {
        state.open_input(InputKind::Filter, text);
    }
    // What the step asks shows over the screen: the input line of its prompt, an
    // explanation or the help.
    match step.ask {
        Some(Ask::Input { prompt, text }) => state.open_input(InputKind::Screen(prompt), text),
        Some(Ask::Explain { title, text }) => {
            state.overlay = Some(Overlay::Explain {
                title,
                text,
                scroll: 0,
            });
        }
        Some(Ask::Help) => state.overlay = Some(Overlay::Help { scroll: 0 }),
        None => {}
    }
    if step.close && state.screen == Screen::Module(name) {
        let from = state.screens.opened_from.remove(name);
        let home = state.screens.get(name).map_or(Screen::Fleet, |m| m.home());
        state.screen = from.unwrap_or(home);
    }
    let mut effects = step.effects;
    if let Some((other, words)) = step.open {
        effects.extend(open_with(state, other, words));
    }
    effects
}

/// News for a module: whether the screen on top changed, and the effects it asks for (a
/// step that says or asks something changes the screen).
pub fn on_news(state: &mut AppState, news: &ScreenNews) -> (bool, Vec<Effect>) {
    let top = on_top(state);
    let answered = lent(state, |screens, shared| {
        screens
            .get_mut(news.screen)
            .map(|m| m.on_news_step(news, shared))
    });
    let Some((changed, mut step)) = answered else {
        return (false, Vec::new());
    };
    // A quit question stays on the message line until it is answered.
    if state.quit_question.is_some() {
        step.message = None;
    }
    let asks = step.message.is_some() || step.ask.is_some() || step.close;
    let redraw = (changed && top == Some(news.screen)) || asks;
    (redraw, finish(state, news.screen, step))
}

/// The filter typed on the line a module on top opened; whether one took it.
pub fn set_filter(state: &mut AppState, text: &str) -> bool {
    let module = on_top(state).and_then(|name| state.screens.get_mut(name));
    module.map(|m| m.set_filter(text)).is_some()
}

/// The node whose services the module on top has the pollers watch.
pub fn watched_node(state: &AppState) -> Option<String> {
    top_module(state)?.watched_node().map(String::from)
}

/// After an update step: each module told whether it is on top, for what runs only while it
/// shows.
pub fn settle(state: &mut AppState) -> Vec<Effect> {
    let top = on_top(state);
    let modules = &mut state.screens.modules;
    modules
        .iter_mut()
        .flat_map(|m| {
            let shown = top == Some(m.name());
            m.settle(shown)
        })
        .collect()
}

/// Tells every module of a poller report; whether the one on top changed.
pub fn on_fleet_change(state: &mut AppState, change: &FleetChange) -> bool {
    let top = on_top(state);
    lent(state, |screens, shared| {
        let mut redraw = false;
        for module in &mut screens.modules {
            redraw |= module.on_fleet_change(change, shared) && top == Some(module.name());
        }
        redraw
    })
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
    top_module(state).is_some_and(|m| m.of_cluster_in_use())
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyCode;

    use super::*;
    use crate::app::Action;
    use crate::app::keymap::{KeyContext, action_for, context, footer_hints};
    use crate::app::screen::Pane;
    use crate::app::test_fixtures::{cluster_screen, press};
    use crate::fleet::ClusterStatus;

    fn lab() -> AppState {
        let status = ClusterStatus {
            name: "lab".into(),
            ..Default::default()
        };
        cluster_screen(status, Pane::Versions)
    }

    #[test]
    fn a_module_on_top_gets_its_keys_and_the_shell_keeps_help_and_the_command_line() {
        let mut s = lab();
        press(&mut s, KeyCode::Char('H'));
        assert_eq!(s.screen, Screen::Module("health"));
        assert_eq!(context(&s), KeyContext::Screen("health"));
        let r = KeyEvent::from(KeyCode::Char('r'));
        assert!(matches!(action_for(&s, &r), Some(Action::ScreenKey(_))));
        let footer: Vec<&str> = footer_hints(&s).into_iter().map(|(_, l)| l).collect();
        assert!(
            footer.contains(&"back") && footer.contains(&"quit"),
            "{footer:?}"
        );
        press(&mut s, KeyCode::Char('?'));
        assert!(matches!(s.overlay, Some(Overlay::Help { .. })));
        press(&mut s, KeyCode::Esc);
        press(&mut s, KeyCode::Char(':'));
        assert!(s.input.is_some());
        press(&mut s, KeyCode::Esc);
        // Esc on the module: back where it was opened from.
        press(&mut s, KeyCode::Esc);
        assert_eq!(s.screen, Screen::Cluster(Pane::Versions));
    }

    #[test]
    fn a_module_that_cannot_open_says_why_and_the_screen_stays() {
        let mut s = lab();
        s.current = None;
        s.screen = Screen::Fleet;
        assert!(open_with(&mut s, "health", Vec::new()).is_empty());
        assert_eq!(s.screen, Screen::Fleet);
        let text = s.message.as_ref().map(|m| m.text.as_str());
        assert_eq!(
            text,
            Some("no cluster in use: Enter on the fleet or :ctx NAME")
        );
        open_with(&mut s, "nothing", Vec::new());
        assert_eq!(s.screen, Screen::Fleet);
        let text = s.message.as_ref().map(|m| m.text.as_str());
        assert_eq!(text, Some("no screen named nothing"));
    }

    #[test]
    fn every_module_key_label_is_ascii_and_named_once() {
        let s = lab();
        let mut names = Vec::new();
        for module in s.screens.iter() {
            assert!(!names.contains(&module.name()), "{}", module.name());
            names.push(module.name());
            for line in module.keys() {
                assert!(line.keys.is_ascii(), "{}: {}", module.name(), line.keys);
            }
        }
        assert_eq!(
            names,
            [
                "progress",
                "actions",
                "capi",
                "certs",
                "cluster-plan",
                "config",
                "config-patch",
                "create",
                "health",
                "kube-plan",
                "logs",
                "provision",
                "resources",
                "upgrade-plan"
            ]
        );
    }
}
