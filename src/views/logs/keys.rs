//! The key tables of the log view and its service picker, and the keys that open them from
//! the cluster panes (`l`) and node detail (`l` the picker, `d` the kernel log).
use super::action::Action;
use super::binding::{Binding, HELP, Key, bind, command_line};
use super::logs::LogKey;
use super::screen::{Pane, Screen};
use super::state::AppState;

/// `l` on the nodes pane (the selected node's picker) and the etcd pane (every control plane).
#[rustfmt::skip]
pub(super) static FROM_CLUSTER: &[Binding] = &[bind(&[Key::char('l')], Action::Logs(LogKey::Open), "logs: the selected node's (nodes pane), etcd of every control plane (etcd pane)").footer("logs").offered(on_a_logs_pane)];

/// Offered on the nodes and etcd panes where the footer has room for it: at 80 columns the
/// pane's own keys fill it, and `?` lists `l` there.
fn on_a_logs_pane(state: &AppState) -> bool {
    let pane = matches!(
        state.screen,
        Screen::Cluster(Pane::Nodes) | Screen::Cluster(Pane::Etcd)
    );
    pane && state.size.0 >= FOOTER_ROOM
}

/// The width from which the cluster panes' footer has room for `l logs`.
const FOOTER_ROOM: u16 = 90;

#[rustfmt::skip]
pub(super) static FROM_DETAIL: &[Binding] = &[
    bind(&[Key::char('l')], Action::Logs(LogKey::Open), "logs of one of the node's services (a picker)").footer("logs"),
    bind(&[Key::char('d')], Action::Logs(LogKey::Dmesg), "the node's kernel log (dmesg)"),
];

#[rustfmt::skip]
pub(super) static VIEW: &[Binding] = &[
    bind(&[Key::char('/')], Action::OpenFilter, "show only lines containing a text (node names too); Esc clears").footer("filter"),
    bind(&[Key::char(' ')], Action::TogglePause, "pause: hold the screen, keep receiving; again to follow").footer("pause"),
    bind(&[Key::char('t')], Action::Logs(LogKey::Timestamps), "show the time each line arrived").footer("time"),
    bind(&[Key::char('j'), Key::DOWN], Action::MoveDown, "scroll down"),
    bind(&[Key::char('k'), Key::UP], Action::MoveUp, "scroll up (stops following)"),
    bind(&[Key::PAGE_DOWN, Key::ctrl('f')], Action::PageDown, "page down"),
    bind(&[Key::PAGE_UP, Key::ctrl('b')], Action::PageUp, "page up"),
    bind(&[Key::char('g'), Key::HOME], Action::MoveFirst, "the oldest line kept"),
    bind(&[Key::char('G'), Key::END], Action::MoveLast, "the newest lines, following again").footer("follow").offered(not_following),
    bind(&[Key::LEFT], Action::Logs(LogKey::Left), "scroll the text left"),
    bind(&[Key::RIGHT], Action::Logs(LogKey::Right), "scroll the text right, up to the longest line's end"),
    bind(&[Key::char('n')], Action::Logs(LogKey::NextMatch), "the next occurrence of the filter text, scrolled into view").footer("next").offered(filtered),
    bind(&[Key::char('N')], Action::Logs(LogKey::PreviousMatch), "the previous occurrence of the filter text"),
    bind(&[Key::char('w')], Action::Logs(LogKey::Wrap), "wrap long lines, or cut them at the edge").footer("wrap"),
    bind(&[Key::char('f')], Action::Logs(LogKey::Follow), "follow the newest lines, or hold the screen where it is"),
];

fn filtered(state: &AppState) -> bool {
    state
        .logs
        .view
        .as_ref()
        .is_some_and(|v| !v.filter.is_empty())
}

fn not_following(state: &AppState) -> bool {
    state.logs.view.as_ref().is_some_and(|v| !v.following())
}

/// The picker's own key; it moves with the shared move keys.
#[rustfmt::skip]
pub(super) static PICKER: &[Binding] = &[bind(&[Key::ENTER], Action::OpenSelected, "follow the selected log").footer("follow")];

/// Esc and q go back (Ctrl-C still quits); `?` and `:` as everywhere.
#[rustfmt::skip]
pub(super) static BACK: &[Binding] = &[
    bind(&[Key::ESC, Key::char('q')], Action::Back, "clear the filter, else back where the logs were opened").footer("back"),
    command_line("command line (:logs SERVICE [NODE...], :dmesg NODE)"),
    HELP,
    bind(&[Key::ctrl('c')], Action::Quit, "quit"),
];
