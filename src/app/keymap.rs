//! The key bindings: one table per key context (fleet, cluster panes, node
//! detail, discovery list, errors, help, command line, filter, confirmation),
//! built from shared pieces (moves, table keys, global keys). The `?` help overlay and the footer hints are
//! generated from these tables, so they cannot drift from what keys do.
use crossterm::event::{KeyEvent, KeyEventKind};

use super::action::Action;
pub use super::binding::{Binding, Key, bind};
use super::binding::{HELP, command_line, intent, quit, typed_char};
use super::keymap_actions as actions;
use super::keymap_overlay as overlay;
use super::keymap_panes as panes;
use super::screen::Screen;
use super::screens::Screens;
use super::state::{AppState, InputKind, Overlay};

/// Where the keys go right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyContext {
    Fleet,
    Cluster,
    NodeDetail,
    Clusters,
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
    /// A screen module (`views/<screen>/`): its own keys, then `:`, `?` and quit.
    Screen(super::screen_io::ScreenName),
}

impl KeyContext {
    pub const ALL: [KeyContext; 13] = [
        KeyContext::Fleet,
        KeyContext::Cluster,
        KeyContext::NodeDetail,
        KeyContext::Clusters,
        KeyContext::Errors,
        KeyContext::CommandLine,
        KeyContext::Filter,
        KeyContext::TextField,
        KeyContext::Confirm,
        KeyContext::Explain,
        KeyContext::Help,
        KeyContext::QuitQuestion,
        KeyContext::TooSmall,
    ];

    pub fn title(self) -> &'static str {
        match self {
            KeyContext::Fleet => "Cluster list (fleet)",
            KeyContext::Cluster => "Cluster panes (nodes, etcd, versions)",
            KeyContext::NodeDetail => "Node detail",
            KeyContext::Clusters => "Discovery (:contexts)",
            KeyContext::Errors => "Discovery errors",
            KeyContext::Help => "Help",
            KeyContext::CommandLine => "Command line (:)",
            KeyContext::Filter => "Filter (/)",
            KeyContext::Confirm => "Confirmation",
            KeyContext::TextField => {
                "Installer image, acknowledgement, VM name pattern, snapshot file"
            }
            KeyContext::Explain => "Explanation (? on the plan), messages (:messages)",
            KeyContext::QuitQuestion => "Quit while a rollout or provision runs",
            KeyContext::TooSmall => "Terminal below 80x24",
            KeyContext::Screen(name) => name,
        }
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

#[rustfmt::skip]
static CLUSTERS: &[Binding] = &[
    bind(&[Key::ENTER], Action::UseSelected, "use the selected cluster").footer("use"),
    bind(&[Key::char('/')], Action::OpenFilter, "filter rows (any visible cell)").footer("filter"),
    command_line("command line (:ctx NAME, :q)").footer("command"),
    bind(&[Key::char('e')], Action::OpenErrors, "show discovery errors").footer("errors"),
    HELP,
    bind(&[Key::ESC], Action::Back, "clear the filter, else back to the fleet"),
    quit("quit").footer("quit"),
];

/// The keys that bring a screen module on top: `C` on the fleet, `H` on the cluster panes.
#[rustfmt::skip]
static OPEN_CERTS: &[Binding] = &[bind(&[Key::char('C')], Action::Open("certs"), "every certificate of every cluster, soonest end first, with its fix (:certs)")];

#[rustfmt::skip]
static OPEN_CREATE: &[Binding] = &[bind(&[Key::char('n')], Action::Open("create"), "create a new cluster (the wizard; or the operation running here)")];

/// `p` on the cluster panes, ahead of their other keys (live data and rollouts pause on
/// `Space`): the provision wizard, or the provision running there (`app::provision`).
#[rustfmt::skip]
static OPEN_PROVISION: &[Binding] = &[bind(&[Key::char('p')], Action::OpenProvision, "provision new nodes (the wizard; or the running provision)").footer("provision")];

#[rustfmt::skip]
static OPEN_HEALTH: &[Binding] = &[bind(&[Key::char('H')], Action::Open("health"), "health checks of the cluster (a checklist that fills in; :health)")];

/// `l` on the nodes pane (the selected node's picker) and the etcd pane (every control plane).
#[rustfmt::skip]
static OPEN_LOGS: &[Binding] = &[bind(&[Key::char('l')], Action::Open("logs"), "logs: the selected node's (nodes pane), etcd of every control plane (etcd pane)").footer("logs").offered(on_a_logs_pane)];

#[rustfmt::skip]
static OPEN_LOGS_OF_NODE: &[Binding] = &[
    bind(&[Key::char('l')], Action::Open("logs"), "logs of one of the node's services (a picker)").footer("logs"),
    bind(&[Key::char('d')], Action::OpenWith("logs", "dmesg"), "the node's kernel log (dmesg)"),
];

#[rustfmt::skip]
static OPEN_RESOURCES: &[Binding] = &[bind(&[Key::char('i')], Action::Open("resources"), "the node's CPU, memory, disks, volumes and network (:resources NODE)").footer("resources").offered(room_for_resources)];

#[rustfmt::skip]
static OPEN_CONFIG: &[Binding] = &[bind(&[Key::char('m')], Action::Open("config"), "the node's machine configuration, secrets redacted (:config NODE)").footer("config").offered(room_for_config)];

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
        Screen::Cluster(super::screen::Pane::Nodes) | Screen::Cluster(super::screen::Pane::Etcd)
    );
    pane && state.size.0 >= 90
}

/// Scrolling a text overlay (errors, help, an explanation).
#[rustfmt::skip]
pub(super) static SCROLL: &[Binding] = &[
    bind(&[Key::char('j'), Key::DOWN], Action::MoveDown, "scroll down").footer("scroll"),
    bind(&[Key::char('k'), Key::UP], Action::MoveUp, "scroll up"),
];

/// Editing a line being typed.
#[rustfmt::skip]
pub(super) static DELETE_CHAR: &[Binding] = &[bind(&[Key::BACKSPACE], Action::DeleteBack, "delete a character")];

/// The bindings of one context, in help and footer order.
pub fn bindings(context: KeyContext) -> Vec<&'static Binding> {
    let parts: &[&'static [Binding]] = match context {
        KeyContext::Fleet => &[
            panes::FLEET_OWN,
            panes::TABLE_KEYS,
            panes::LIVE_KEYS,
            panes::FLEET_TAIL,
            panes::GLOBAL,
            panes::MOVES,
            actions::DELETE_CLUSTER,
            OPEN_CREATE,
            OPEN_CERTS,
        ],
        KeyContext::Cluster => &[
            actions::FROM_PANES,
            panes::CLUSTER_OWN,
            OPEN_PROVISION,
            panes::TABLE_KEYS,
            panes::LIVE_KEYS_BRIEF,
            panes::GLOBAL,
            panes::MOVES,
            OPEN_LOGS,
            OPEN_HEALTH,
            panes::CAPI_FROM_CLUSTER,
            actions::DELETE_CLUSTER,
        ],
        KeyContext::NodeDetail => &[
            actions::FROM_PANES,
            panes::DETAIL_OWN,
            panes::LIVE_KEYS_BRIEF,
            panes::GLOBAL,
            panes::MOVES,
            OPEN_LOGS_OF_NODE,
            OPEN_RESOURCES,
            OPEN_CONFIG,
        ],
        KeyContext::Clusters => &[panes::MOVES, CLUSTERS],
        KeyContext::Errors => &[SCROLL, overlay::ERRORS_CLOSE, overlay::CTRL_C_QUITS],
        KeyContext::Help => &[SCROLL, overlay::HELP_CLOSE, overlay::CTRL_C_QUITS],
        KeyContext::CommandLine => &[overlay::COMMAND_LINE, DELETE_CHAR, overlay::CANCEL],
        KeyContext::Filter => &[overlay::FILTER, DELETE_CHAR, overlay::FILTER_CLEAR],
        KeyContext::Confirm => &[overlay::CONFIRM, DELETE_CHAR, overlay::CONFIRM_CANCEL],
        KeyContext::TextField => &[overlay::TEXT_FIELD, DELETE_CHAR, overlay::CANCEL],
        KeyContext::Explain => &[SCROLL, overlay::EXPLAIN_CLOSE, overlay::CTRL_C_QUITS],
        KeyContext::QuitQuestion => &[overlay::QUIT_QUESTION],
        KeyContext::TooSmall => &[overlay::TOO_SMALL],
        KeyContext::Screen(_) => &[panes::GLOBAL],
    };
    parts.iter().flat_map(|p| p.iter()).collect()
}

/// `ctx`'s bindings with the keys that reach them: under a screen module, less the keys the
/// module binds itself (`q` goes back on the log screen while Ctrl-c still quits).
pub fn shown_bindings(ctx: KeyContext, screens: &Screens) -> Vec<(String, &'static Binding)> {
    let module = match ctx {
        KeyContext::Screen(name) => screens.get(name),
        _ => None,
    };
    let reaches = |k: &&Key| module.is_none_or(|m| !m.binds(&KeyEvent::new(k.code, k.mods)));
    bindings(ctx)
        .into_iter()
        .filter_map(|b| {
            let keys: Vec<String> = b.keys.iter().filter(reaches).map(Key::label).collect();
            (!keys.is_empty()).then(|| (keys.join("/"), b))
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
        None => match state.screen {
            Screen::Fleet => KeyContext::Fleet,
            Screen::Clusters => KeyContext::Clusters,
            Screen::Cluster(_) => KeyContext::Cluster,
            Screen::NodeDetail => KeyContext::NodeDetail,
            Screen::Module(name) => KeyContext::Screen(name),
        },
    }
}

/// The action for a key press in the current context, if any.
pub fn action_for(state: &AppState, event: &KeyEvent) -> Option<Action> {
    if event.kind == KeyEventKind::Release {
        return None;
    }
    let ctx = context(state);
    if let KeyContext::Screen(name) = ctx
        && state.screens.get(name).is_some_and(|m| m.binds(event))
    {
        return Some(Action::ScreenKey(*event));
    }
    let typed = || typed_char(event).filter(|_| ctx.takes_text());
    (intent(bindings(ctx), event).cloned()).or_else(|| typed().map(Action::Insert))
}

/// Footer hints where the keys go now: (keys, label) pairs in table order,
/// only those the state offers.
pub fn footer_hints(state: &AppState) -> Vec<(String, &'static str)> {
    let ctx = context(state);
    let module = match ctx {
        KeyContext::Screen(name) => state.screens.get(name).map(|m| m.keys()),
        _ => None,
    };
    let own: Vec<(String, &'static str)> = (module.into_iter().flatten())
        .filter_map(|line| line.footer.map(|label| (line.keys, label)))
        .collect();
    // A key the module binds is its own, in its words: the shell's label for it goes.
    let bound_here = |keys: &str| {
        let first = keys.split('/').next();
        (own.iter()).any(|(k, _)| k.split('/').any(|k| first == Some(k)))
    };
    let shell: Vec<_> = (footer_of(ctx, state).into_iter())
        .filter(|(keys, _)| !bound_here(keys))
        .collect();
    own.into_iter().chain(shell).collect()
}

/// The footer hints of `ctx`'s own table, only those the state offers.
fn footer_of(ctx: KeyContext, state: &AppState) -> Vec<(String, &'static str)> {
    shown_bindings(ctx, &state.screens)
        .into_iter()
        .filter(|(_, b)| b.offered.is_none_or(|offered| offered(state)))
        .filter_map(|(keys, b)| b.footer.map(|label| (keys, label)))
        .collect()
}

#[cfg(test)]
#[path = "keymap_tests.rs"]
mod tests;
