//! The shell's key bindings as data: one place per key context (fleet, cluster panes, node
//! detail, discovery list, errors, help, command line, filter, confirmation...), its title
//! in `?` and its table, built from shared pieces (the move keys every screen with rows
//! shares, table keys, live-data keys, the global keys). The `?` help overlay and the footer
//! hints are generated from these tables, so they cannot drift from what keys do; a screen
//! module brings its own table (`ScreenModule::keys`) and the shell adds `:`, `?` and quit.
use std::borrow::Cow;

use crossterm::event::{KeyEvent, KeyEventKind};

use super::action::Action;
use super::binding::typed_char;
pub use super::binding::{Binding, Key, bind};
use super::binding::{KeyLine, MOVE_KEYS, Move, intent, key_lines};
use super::screen::{Pane, Screen};
use super::screens::{ScreenModule, Screens};
use super::state::{AppState, InputKind, Overlay};

/// Where the keys go right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyContext {
    Errors,
    Help,
    CommandLine,
    Filter,
    Confirm,
    /// A text field being typed (an acknowledgement, a screen module's field).
    TextField,
    Explain,
    /// Quit was asked while a rollout or provision runs here: y/N.
    QuitQuestion,
    /// The terminal is below the minimum size: only quitting works.
    TooSmall,
    /// A screen by its name: a main screen's keys (`Screen::name`: `fleet`, `contexts`,
    /// `cluster`, `node`), or a screen module's (`views/<screen>/`) own keys, then `:`, `?`
    /// and quit.
    Screen(super::screen_io::ScreenName),
}

/// One piece of a place's table: the shell's bindings, or the shared move keys.
enum Part {
    Keys(&'static [Binding]),
    Moves,
}

use Part::{Keys, Moves};

/// A key context as `?` lists it: its title and its table, in help and footer order.
struct Place {
    context: KeyContext,
    title: &'static str,
    parts: &'static [Part],
}

/// Every key context of the shell, in the order `?` lists them.
#[rustfmt::skip]
static PLACES: &[Place] = &[
    Place { context: KeyContext::Screen("fleet"), title: "Cluster list (fleet)",
        parts: &[Keys(FLEET_OWN), Keys(TABLE_KEYS), Keys(LIVE_KEYS), Keys(FLEET_TAIL), Keys(GLOBAL), Moves, Keys(FLEET_OPENS)] },
    Place { context: KeyContext::Screen("cluster"), title: "Cluster panes (nodes, etcd, versions)",
        parts: &[Keys(CLUSTER_OWN), Keys(TABLE_KEYS), Keys(LIVE_KEYS), Keys(GLOBAL), Moves, Keys(CLUSTER_OPENS)] },
    Place { context: KeyContext::Screen("node"), title: "Node detail",
        parts: &[Keys(DETAIL_OWN), Keys(LIVE_KEYS), Keys(GLOBAL), Moves, Keys(DETAIL_OPENS)] },
    Place { context: KeyContext::Screen("contexts"), title: "Discovery (:contexts)", parts: &[Moves, Keys(CLUSTERS)] },
    Place { context: KeyContext::Errors, title: "Discovery errors", parts: &[Keys(SCROLL), Keys(ERRORS_CLOSE), Keys(CTRL_C_QUITS)] },
    Place { context: KeyContext::CommandLine, title: "Command line (:)", parts: &[Keys(COMMAND_LINE), Keys(DELETE_CHAR), Keys(CANCEL)] },
    Place { context: KeyContext::Filter, title: "Filter (/)", parts: &[Keys(FILTER), Keys(DELETE_CHAR), Keys(FILTER_CLEAR)] },
    Place { context: KeyContext::TextField, title: "Installer image, acknowledgement, VM name pattern, snapshot file",
        parts: &[Keys(TEXT_FIELD), Keys(DELETE_CHAR), Keys(CANCEL)] },
    Place { context: KeyContext::Confirm, title: "Confirmation", parts: &[Keys(CONFIRM), Keys(DELETE_CHAR), Keys(CONFIRM_CANCEL)] },
    Place { context: KeyContext::Explain, title: "Explanation (? on the plan), messages (:messages)",
        parts: &[Keys(SCROLL), Keys(EXPLAIN_CLOSE), Keys(CTRL_C_QUITS)] },
    Place { context: KeyContext::Help, title: "Help", parts: &[Keys(SCROLL), Keys(HELP_CLOSE), Keys(CTRL_C_QUITS)] },
    Place { context: KeyContext::QuitQuestion, title: "Quit while a rollout or provision runs", parts: &[Keys(QUIT_QUESTION)] },
    Place { context: KeyContext::TooSmall, title: "Terminal below 80x24", parts: &[Keys(TOO_SMALL)] },
];

/// Under a screen module, the shell's keys after the module's own.
static ON_A_MODULE: Place = Place {
    context: KeyContext::Screen(""),
    title: "Screen module",
    parts: &[Keys(GLOBAL)],
};

impl KeyContext {
    /// The shell's own contexts, in the order `?` lists them.
    pub fn all() -> impl Iterator<Item = KeyContext> {
        PLACES.iter().map(|p| p.context)
    }

    /// The screen module whose own keys come first here.
    pub fn module(self, screens: &Screens) -> Option<&dyn ScreenModule> {
        match self {
            KeyContext::Screen(name) => screens.get(name),
            _ => None,
        }
    }

    fn place(self) -> &'static Place {
        (PLACES.iter().find(|p| p.context == self)).unwrap_or(&ON_A_MODULE)
    }

    pub fn title(self) -> &'static str {
        self.place().title
    }

    /// Contexts where unbound printable keys are typed text.
    fn takes_text(self) -> bool {
        matches!(
            self,
            KeyContext::CommandLine
                | KeyContext::Filter
                | KeyContext::Confirm
                | KeyContext::TextField
        )
    }
}

/// `q` and Ctrl-c: quit, on every screen without typed text.
const QUIT: &[Key] = &[Key::char('q'), Key::ctrl('c')];

/// `?`: the help overlay, listing the keys of the screen under it.
#[rustfmt::skip]
const HELP: Binding = bind(&[Key::char('?')], Action::Overlay(Overlay::Help { scroll: 0 }), "help").footer("help");

/// The fleet, cluster panes and node detail: moving through rows, filter and sort, live data.
#[rustfmt::skip]
static FLEET_OWN: &[Binding] = &[
    bind(&[Key::ENTER], Action::OpenSelected, "open the selected cluster").footer("open"),
    bind(&[Key::char('u')], Action::Open("upgrade-plan"), "plan a Talos upgrade of the selected cluster"),
    bind(&[Key::char('U')], Action::Open("kube-plan"), "plan a Kubernetes upgrade of the selected cluster"),
];

#[rustfmt::skip]
static CLUSTER_OWN: &[Binding] = &[
    OPEN_ACTIONS,
    bind(&[Key::char('1')], Action::Show(Screen::Cluster(Pane::Nodes)), "nodes pane"),
    bind(&[Key::char('2')], Action::Show(Screen::Cluster(Pane::Etcd)), "etcd pane"),
    bind(&[Key::char('3')], Action::Show(Screen::Cluster(Pane::Versions)), "versions pane"),
    bind(&[Key::TAB], Action::NextPane, "next pane").footer("pane"),
    bind(&[Key::ENTER], Action::OpenSelected, "node detail (nodes pane)").footer("node").offered(on_the_nodes_pane),
    bind(&[Key::char('u')], Action::Open("upgrade-plan"), "plan a Talos upgrade (or show the running one)"),
    bind(&[Key::char('U')], Action::Open("kube-plan"), "plan a Kubernetes upgrade (the versions pane shows what runs)"),
    bind(&[Key::ESC], Action::Back, "clear the filter, else back to the fleet"),
    // Ahead of the live keys: live data and rollouts pause on `Space`.
    bind(&[Key::char('p')], Action::Open("provision"), "provision new nodes (the wizard; or the running provision)").footer("provision"),
];

#[rustfmt::skip]
static TABLE_KEYS: &[Binding] = &[
    bind(&[Key::char('/')], Action::OpenFilter, "filter rows (any visible cell)").footer("filter"),
    bind(&[Key::char('s')], Action::SortNext, "sort by the next column"),
    bind(&[Key::char('S')], Action::SortReverse, "reverse the sort"),
];

/// The live keys; where the footer is full (cluster panes, node detail) pause is in help only.
#[rustfmt::skip]
static LIVE_KEYS: &[Binding] = &[
    bind(&[Key::char('r')], Action::Refresh, "refresh now").footer("refresh"),
    bind(&[Key::char(' ')], Action::TogglePause, "pause or resume live data").footer("pause").offered(on_the_fleet),
];

fn on_the_fleet(state: &AppState) -> bool {
    state.screen == Screen::Fleet
}

/// Enter opens a node only from the nodes pane.
fn on_the_nodes_pane(state: &AppState) -> bool {
    state.screen == Screen::Cluster(Pane::Nodes)
}

#[rustfmt::skip]
static FLEET_TAIL: &[Binding] = &[
    bind(&[Key::char('e')], Action::Overlay(Overlay::Errors { scroll: 0 }), "show discovery errors"),
    bind(&[Key::ESC], Action::Back, "clear the filter"),
];

#[rustfmt::skip]
static DETAIL_OWN: &[Binding] = &[
    OPEN_ACTIONS,
    bind(&[Key::char('h'), Key::LEFT], Action::StepNode(Move::Up), "previous node").footer("prev"),
    bind(&[Key::RIGHT], Action::StepNode(Move::Down), "next node").footer("next"),
    bind(&[Key::ESC], Action::Back, "back to the nodes pane").footer("back"),
];

#[rustfmt::skip]
static GLOBAL: &[Binding] = &[
    bind(&[Key::char(':')], Action::OpenCommandLine, "command line (:nodes, :etcd, :ctx NAME, :q)"),
    HELP,
    bind(QUIT, Action::Quit, "quit").footer("quit"),
];

#[rustfmt::skip]
static CLUSTERS: &[Binding] = &[
    bind(&[Key::ENTER], Action::OpenSelected, "use the selected cluster").footer("use"),
    bind(&[Key::char('/')], Action::OpenFilter, "filter rows (any visible cell)").footer("filter"),
    bind(&[Key::char(':')], Action::OpenCommandLine, "command line (:ctx NAME, :q)").footer("command"),
    bind(&[Key::char('e')], Action::Overlay(Overlay::Errors { scroll: 0 }), "show discovery errors").footer("errors"),
    HELP,
    bind(&[Key::ESC], Action::Back, "clear the filter, else back to the fleet"),
    bind(QUIT, Action::Quit, "quit").footer("quit"),
];

/// The screens the fleet opens, after its other keys.
#[rustfmt::skip]
static FLEET_OPENS: &[Binding] = &[
    DELETE_CLUSTER,
    bind(&[Key::char('n')], Action::Open("create"), "create a new cluster (the wizard; or the operation running here)"),
    bind(&[Key::char('C')], Action::Open("certs"), "every certificate of every cluster, soonest end first, with its fix (:certs)"),
];

/// The screens the cluster panes open, after their other keys: `l` the selected node's log
/// picker (nodes pane) or etcd of every control plane (etcd pane).
#[rustfmt::skip]
static CLUSTER_OPENS: &[Binding] = &[
    bind(&[Key::char('l')], Action::Open("logs"), "logs: the selected node's (nodes pane), etcd of every control plane (etcd pane)").footer("logs").offered(on_a_logs_pane),
    bind(&[Key::char('H')], Action::Open("health"), "health checks of the cluster (a checklist that fills in; :health)"),
    bind(&[Key::char('C')], Action::Open("capi"), "the cluster's Cluster API tree and stuck states (:capi)"),
    DELETE_CLUSTER,
];

/// The screens node detail opens, after its other keys.
#[rustfmt::skip]
static DETAIL_OPENS: &[Binding] = &[
    bind(&[Key::char('l')], Action::Open("logs"), "logs of one of the node's services (a picker)").footer("logs"),
    bind(&[Key::char('d')], Action::OpenWith("logs", Cow::Borrowed("dmesg")), "the node's kernel log (dmesg)"),
    bind(&[Key::char('i')], Action::Open("resources"), "the node's CPU, memory, disks, volumes and network (:resources NODE)").footer("resources").offered(room_for_resources),
    bind(&[Key::char('m')], Action::Open("config"), "the node's machine configuration, secrets redacted (:config NODE)").footer("config").offered(room_for_config),
];

/// On the cluster panes and node detail, ahead of their other keys.
#[rustfmt::skip]
const OPEN_ACTIONS: Binding = bind(&[Key::char('a')], Action::Open("actions"), "actions on the selected node (reboot, drain, restart a service...) or etcd member");

/// On the fleet and the cluster panes, after their other keys.
#[rustfmt::skip]
const DELETE_CLUSTER: Binding = bind(&[Key::char('D')], Action::OpenWith("cluster-plan", Cow::Borrowed("delete")), "delete the cluster: its plan and guards (VMs, contexts, journals; nothing runs yet)");

/// At 80 columns node detail's own keys fill the footer, and `?` lists `m` there.
fn room_for_config(state: &AppState) -> bool {
    state.size.0 >= 104
}

/// At 80 columns node detail's own keys fill the footer, and `?` lists `i` there.
fn room_for_resources(state: &AppState) -> bool {
    state.size.0 >= 92
}

/// Offered on the nodes and etcd panes where the footer has room for it: at 80 columns the
/// pane's own keys fill it, and `?` lists `l` there.
fn on_a_logs_pane(state: &AppState) -> bool {
    let pane = matches!(
        state.screen,
        Screen::Cluster(Pane::Nodes) | Screen::Cluster(Pane::Etcd)
    );
    pane && state.size.0 >= 90
}

/// Scrolling a text overlay (errors, help, an explanation).
#[rustfmt::skip]
static SCROLL: &[Binding] = &[
    bind(&[Key::char('j'), Key::DOWN], Action::Move(Move::Down), "scroll down").footer("scroll"),
    bind(&[Key::char('k'), Key::UP], Action::Move(Move::Up), "scroll up"),
];

/// Editing a line being typed.
#[rustfmt::skip]
static DELETE_CHAR: &[Binding] = &[bind(&[Key::BACKSPACE], Action::DeleteBack, "delete a character")];

#[rustfmt::skip]
static TEXT_FIELD: &[Binding] = &[bind(&[Key::ENTER], Action::Submit, "set").footer("set")];

/// Esc and Ctrl-c leave the command line and a text field unchanged.
#[rustfmt::skip]
static CANCEL: &[Binding] = &[bind(&[Key::ESC, Key::ctrl('c')], Action::Back, "cancel").footer("cancel")];

#[rustfmt::skip]
static EXPLAIN_CLOSE: &[Binding] = &[bind(&[ Key::ESC, Key::char('?'), Key::char('q'), Key::ENTER, ], Action::Back, "close").footer("close")];

/// Ctrl-C quits from the overlays too (q closes them); on the too-small
/// screen q quits as well.
#[rustfmt::skip]
static CTRL_C_QUITS: &[Binding] = &[bind(&[Key::ctrl('c')], Action::Quit, "quit (asks first while a rollout or provision runs)")];

#[rustfmt::skip]
static TOO_SMALL: &[Binding] = &[bind(QUIT, Action::Quit, "quit; every other key waits for a larger terminal").footer("quit")];

#[rustfmt::skip]
static QUIT_QUESTION: &[Binding] = &[
    bind(&[Key::char('y')], Action::ConfirmQuit, "quit now (a rollout's journal resumes it on the next start)").footer("quit"),
    bind(&[ Key::char('n'), Key::ESC, Key::char('q'), Key::ctrl('c'), ], Action::Back, "stay (the default)").footer("stay"),
];

#[rustfmt::skip]
static ERRORS_CLOSE: &[Binding] = &[bind(&[Key::ESC, Key::char('e'), Key::char('q')], Action::Back, "close").footer("close")];

#[rustfmt::skip]
static HELP_CLOSE: &[Binding] = &[bind(&[Key::ESC, Key::char('?'), Key::char('q')], Action::Back, "close help").footer("close")];

#[rustfmt::skip]
static COMMAND_LINE: &[Binding] = &[
    bind(&[Key::TAB], Action::Complete, "complete command or cluster name").footer("complete"),
    bind(&[Key::ENTER], Action::Submit, "run the command").footer("run"),
];

#[rustfmt::skip]
static FILTER: &[Binding] = &[bind(&[Key::ENTER], Action::Submit, "keep the filter").footer("keep")];

#[rustfmt::skip]
static FILTER_CLEAR: &[Binding] = &[bind(&[Key::ESC, Key::ctrl('c')], Action::Back, "clear the filter").footer("clear")];

#[rustfmt::skip]
static CONFIRM: &[Binding] = &[bind(&[Key::ENTER], Action::Submit, "go ahead if the typed name matches, else cancel").footer("confirm")];

#[rustfmt::skip]
static CONFIRM_CANCEL: &[Binding] = &[bind(&[Key::ESC, Key::ctrl('c')], Action::Back, "cancel (the default)").footer("cancel")];

/// `ctx`'s keys as `?` and the footer show them, with the keys that reach them: under a
/// screen module, less the keys the module binds itself (`q` goes back on the log screen
/// while Ctrl-c still quits).
pub fn shown(ctx: KeyContext, state: &AppState) -> Vec<KeyLine> {
    let module = ctx.module(&state.screens);
    let reaches = |k: &&Key| module.is_none_or(|m| !m.binds(&KeyEvent::new(k.code, k.mods)));
    (ctx.place().parts.iter())
        .flat_map(|part| match part {
            Keys(table) => key_lines(table, state),
            Moves => key_lines(MOVE_KEYS, &()),
        })
        .filter_map(|mut line| {
            let keys: Vec<String> = line.bound.iter().filter(reaches).map(Key::label).collect();
            line.keys = keys.join("/");
            (!keys.is_empty()).then_some(line)
        })
        .collect()
}

/// Which context gets the keys: the quit question, the too-small screen
/// (nothing else is visible to act on), the overlay, then the input line,
/// then the main pane.
pub fn context(state: &AppState) -> KeyContext {
    if state.quit_question.is_some() {
        return KeyContext::QuitQuestion;
    }
    if state.too_small() {
        return KeyContext::TooSmall;
    }
    match &state.overlay {
        Some(Overlay::Confirm(_)) => KeyContext::Confirm,
        Some(Overlay::Help { .. }) => KeyContext::Help,
        Some(Overlay::Errors { .. }) => KeyContext::Errors,
        Some(Overlay::Explain { .. } | Overlay::Messages { .. }) => KeyContext::Explain,
        None => screen_context(state),
    }
}

/// Where the keys go under any overlay: the input line, then the main pane
/// (the help shows these keys first).
pub fn screen_context(state: &AppState) -> KeyContext {
    match &state.input {
        Some(line) => match line.kind {
            InputKind::Command => KeyContext::CommandLine,
            InputKind::Filter => KeyContext::Filter,
            InputKind::Screen(_) => KeyContext::TextField,
        },
        None => KeyContext::Screen(state.screen.name()),
    }
}

/// The action for a key press in the current context, if any.
pub fn action_for(state: &AppState, event: &KeyEvent) -> Option<Action> {
    if event.kind == KeyEventKind::Release {
        return None;
    }
    let ctx = context(state);
    if ctx.module(&state.screens).is_some_and(|m| m.binds(event)) {
        return Some(Action::ScreenKey(*event));
    }
    let own = ctx.place().parts.iter().find_map(|part| match part {
        Keys(table) => intent(*table, event).cloned(),
        Moves => intent(MOVE_KEYS, event).map(|to| Action::Move(*to)),
    });
    let typed = || typed_char(event).filter(|_| ctx.takes_text());
    own.or_else(|| typed().map(Action::Insert))
}

/// Footer hints where the keys go now: (keys, label) pairs in table order, only those the
/// state offers; a screen module's own first, then the shell's that reach past it.
pub fn footer_hints(state: &AppState) -> Vec<(String, &'static str)> {
    let ctx = context(state);
    let own = ctx.module(&state.screens).map(|m| m.keys());
    (own.into_iter().flatten().chain(shown(ctx, state)))
        .filter_map(|line| line.footer.map(|label| (line.keys, label)))
        .collect()
}

#[cfg(test)]
#[path = "keymap_tests.rs"]
mod tests;
