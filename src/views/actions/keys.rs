//! The actions screen's own keys: the menu's (move, Enter for the chosen action's plan, Esc or
//! `q` to close); the plan's are the one gate's every plan has (`views::plan`), `r` reading the
//! node's pods and services again too. `a` on the panes opens it (the shell's table).
use super::ActionsScreen;
use crate::app::binding::{Binding, Key, Move, bind};

/// The menu's key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuKey {
    Move(Move),
    Choose,
    Close,
}

#[rustfmt::skip]
static MENU: &[Binding<MenuKey, ActionsScreen>] = &[
    bind(&[Key::char('j'), Key::DOWN], MenuKey::Move(Move::Down), "next action"),
    bind(&[Key::char('k'), Key::UP], MenuKey::Move(Move::Up), "previous action"),
    bind(&[Key::ENTER], MenuKey::Choose, "the chosen action's plan and guards (nothing runs yet)").footer("plan"),
    bind(&[Key::ESC, Key::char('q')], MenuKey::Close, "close the menu").footer("close"),
];

/// The menu's keys while no plan shows.
pub(super) fn of(screen: &ActionsScreen) -> &'static [Binding<MenuKey, ActionsScreen>] {
    if screen.plan.is_none() { MENU } else { &[] }
}
