//! One key binding as data: the keys, the key intent they give (an `Action`, or a screen
//! module's own), the help line and, where the footer shows it, its label and when it is
//! offered. Every screen's key table is a list of `bind(...)` lines.
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::Action;
use super::state::AppState;

/// One key, as bound and as shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Key {
    pub const ENTER: Key = Key::plain(KeyCode::Enter);
    pub const ESC: Key = Key::plain(KeyCode::Esc);
    pub const TAB: Key = Key::plain(KeyCode::Tab);
    pub const BACKSPACE: Key = Key::plain(KeyCode::Backspace);
    pub const UP: Key = Key::plain(KeyCode::Up);
    pub const DOWN: Key = Key::plain(KeyCode::Down);
    pub const LEFT: Key = Key::plain(KeyCode::Left);
    pub const RIGHT: Key = Key::plain(KeyCode::Right);
    pub const HOME: Key = Key::plain(KeyCode::Home);
    pub const END: Key = Key::plain(KeyCode::End);
    pub const PAGE_UP: Key = Key::plain(KeyCode::PageUp);
    pub const PAGE_DOWN: Key = Key::plain(KeyCode::PageDown);

    pub const fn plain(code: KeyCode) -> Key {
        Key {
            code,
            mods: KeyModifiers::NONE,
        }
    }

    pub const fn char(c: char) -> Key {
        Key::plain(KeyCode::Char(c))
    }

    pub const fn ctrl(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            mods: KeyModifiers::CONTROL,
        }
    }

    /// Whether `event` is this key. Shift is part of the character already
    /// (`G`), so it is ignored for character keys.
    pub fn matches(&self, event: &KeyEvent) -> bool {
        let mods = match event.code {
            KeyCode::Char(_) => event.modifiers - KeyModifiers::SHIFT,
            _ => event.modifiers,
        };
        event.code == self.code && mods == self.mods
    }

    /// The key's name in help and footer; ASCII only.
    pub fn label(&self) -> String {
        let base = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Up => "Up".into(),
            KeyCode::Down => "Down".into(),
            KeyCode::Left => "Left".into(),
            KeyCode::Right => "Right".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::Backspace => "Backspace".into(),
            other => format!("{other:?}"),
        };
        if self.mods.contains(KeyModifiers::CONTROL) {
            format!("Ctrl-{base}")
        } else {
            base
        }
    }
}

/// One key of a screen's table as `?` and the footer show it, its offer answered where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyLine {
    /// The keys' label (`j/Down`).
    pub keys: String,
    /// The keys as bound (none for a line that stands for typed text).
    pub bound: &'static [Key],
    pub help: &'static str,
    /// The footer's label, when the footer shows the key here and now.
    pub footer: Option<&'static str>,
}

/// A binding: keys, the intent they give, the help line and, when it belongs in the footer,
/// its short footer label and when the footer offers it. The shell's tables give an
/// [`Action`] and ask the [`AppState`]; a screen module's give its own intent and ask the
/// screen (`S`).
#[derive(Debug)]
pub struct Binding<A: 'static = Action, S: 'static = AppState> {
    pub keys: &'static [Key],
    pub action: A,
    pub help: &'static str,
    pub footer: Option<&'static str>,
    /// When the footer offers the key (`None`: always), so it never shows a
    /// key that does nothing where you are. The key still reaches update,
    /// which says why it does nothing.
    pub offered: Option<fn(&S) -> bool>,
}

/// A binding of `keys` to `action`, with its help line; not in the footer
/// until [`Binding::footer`] names its label there.
pub const fn bind<A, S>(keys: &'static [Key], action: A, help: &'static str) -> Binding<A, S> {
    Binding {
        keys,
        action,
        help,
        footer: None,
        offered: None,
    }
}

/// The intent `table` binds `event` to.
pub fn intent<'a, A: 'static, S: 'static>(
    table: impl IntoIterator<Item = &'a Binding<A, S>>,
    event: &KeyEvent,
) -> Option<&'a A> {
    (table.into_iter())
        .find(|b| b.keys.iter().any(|k| k.matches(event)))
        .map(|b| &b.action)
}

/// `table`'s keys for `?` and the footer, each offer asked of `on`.
pub fn key_lines<A, S>(table: &[Binding<A, S>], on: &S) -> Vec<KeyLine> {
    table
        .iter()
        .map(|b| KeyLine {
            keys: b.key_labels(),
            bound: b.keys,
            help: b.help,
            footer: b
                .footer
                .filter(|_| b.offered.is_none_or(|offered| offered(on))),
        })
        .collect()
}

impl<A, S> Binding<A, S> {
    /// Shown in the footer as `label`.
    pub const fn footer(mut self, label: &'static str) -> Binding<A, S> {
        self.footer = Some(label);
        self
    }

    /// Offered in the footer only when `offered` holds.
    pub const fn offered(mut self, offered: fn(&S) -> bool) -> Binding<A, S> {
        self.offered = Some(offered);
        self
    }

    pub fn key_labels(&self) -> String {
        self.keys
            .iter()
            .map(Key::label)
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// The character a plain key types into a screen's text field, if it types one.
pub fn typed_char(event: &KeyEvent) -> Option<char> {
    match event.code {
        KeyCode::Char(c) if (event.modifiers - KeyModifiers::SHIFT).is_empty() => Some(c),
        _ => None,
    }
}

/// Moving through a screen's rows, one intent for every screen that has rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    Down,
    Up,
    First,
    Last,
    PageDown,
    PageUp,
}

/// A screen's own keys, then the shared move keys: the lines its help and footer show.
pub fn lines_with_moves<A, S>(table: &[Binding<A, S>], on: &S) -> Vec<KeyLine> {
    let mut lines = key_lines(table, on);
    lines.extend(key_lines(MOVE_KEYS, &()));
    lines
}

/// The move keys, shared by every screen module with rows.
#[rustfmt::skip]
pub static MOVE_KEYS: &[Binding<Move, ()>] = &[
    bind(&[Key::char('j'), Key::DOWN], Move::Down, "move down"),
    bind(&[Key::char('k'), Key::UP], Move::Up, "move up"),
    bind(&[Key::char('g'), Key::HOME], Move::First, "first row"),
    bind(&[Key::char('G'), Key::END], Move::Last, "last row"),
    bind(&[Key::PAGE_DOWN, Key::ctrl('f')], Move::PageDown, "page down"),
    bind(&[Key::PAGE_UP, Key::ctrl('b')], Move::PageUp, "page up"),
];

impl Move {
    /// The row after the move from `at` in rows `0..=last`, `page` rows a page.
    pub fn from(self, at: usize, last: usize, page: usize) -> usize {
        let at = at.min(last);
        match self {
            Move::Down => (at + 1).min(last),
            Move::Up => at.saturating_sub(1),
            Move::First => 0,
            Move::Last => last,
            Move::PageDown => (at + page).min(last),
            Move::PageUp => at.saturating_sub(page),
        }
    }
}
