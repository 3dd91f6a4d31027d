//! The log screen's keys: the view's (filter, pause, scrolling, time, wrap, search) and the
//! picker's (Enter, with the shared move keys); Esc and q go back on both. The keys that open
//! the screen are the shell's (`l`, `d` on the cluster panes and node detail).
use super::LogsScreen;
use crate::app::binding::{Binding, Key, Move, bind};

/// The log screen's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LogsKey {
    Filter,
    Pause,
    Timestamps,
    Scroll(Move),
    /// Left / Right: the text sideways.
    Left,
    Right,
    /// `n` / `N`: the next or previous occurrence of the filter text.
    NextMatch,
    PreviousMatch,
    Wrap,
    /// `f`: follow the newest lines, or hold the screen where it is.
    Follow,
    /// Enter on the picker: follow the selected log.
    Pick,
    Back,
}

#[rustfmt::skip]
pub(super) static VIEW: &[Binding<LogsKey, LogsScreen>] = &[
    bind(&[Key::char('/')], LogsKey::Filter, "show only lines containing a text (node names too); Esc clears").footer("filter"),
    bind(&[Key::char(' ')], LogsKey::Pause, "pause: hold the screen, keep receiving; again to follow").footer("pause"),
    bind(&[Key::char('t')], LogsKey::Timestamps, "show the time each line arrived").footer("time"),
    bind(&[Key::char('j'), Key::DOWN], LogsKey::Scroll(Move::Down), "scroll down"),
    bind(&[Key::char('k'), Key::UP], LogsKey::Scroll(Move::Up), "scroll up (stops following)"),
    bind(&[Key::PAGE_DOWN, Key::ctrl('f')], LogsKey::Scroll(Move::PageDown), "page down"),
    bind(&[Key::PAGE_UP, Key::ctrl('b')], LogsKey::Scroll(Move::PageUp), "page up"),
    bind(&[Key::char('g'), Key::HOME], LogsKey::Scroll(Move::First), "the oldest line kept"),
    bind(&[Key::char('G'), Key::END], LogsKey::Scroll(Move::Last), "the newest lines, following again").footer("follow").offered(not_following),
    bind(&[Key::LEFT], LogsKey::Left, "scroll the text left"),
    bind(&[Key::RIGHT], LogsKey::Right, "scroll the text right, up to the longest line's end"),
    bind(&[Key::char('n')], LogsKey::NextMatch, "the next occurrence of the filter text, scrolled into view").footer("next").offered(filtered),
    bind(&[Key::char('N')], LogsKey::PreviousMatch, "the previous occurrence of the filter text"),
    bind(&[Key::char('w')], LogsKey::Wrap, "wrap long lines, or cut them at the edge").footer("wrap"),
    bind(&[Key::char('f')], LogsKey::Follow, "follow the newest lines, or hold the screen where it is"),
];

/// The picker's own key; it moves with the shared move keys.
#[rustfmt::skip]
pub(super) static PICKER: &[Binding<LogsKey, LogsScreen>] = &[bind(&[Key::ENTER], LogsKey::Pick, "follow the selected log").footer("follow")];

/// Esc and q go back (Ctrl-c still quits, the shell's).
#[rustfmt::skip]
pub(super) static BACK: &[Binding<LogsKey, LogsScreen>] = &[bind(&[Key::ESC, Key::char('q')], LogsKey::Back, "clear the filter, else back where the logs were opened").footer("back")];

fn filtered(screen: &LogsScreen) -> bool {
    screen.view.as_ref().is_some_and(|v| !v.filter.is_empty())
}

fn not_following(screen: &LogsScreen) -> bool {
    screen.view.as_ref().is_some_and(|v| !v.following())
}
