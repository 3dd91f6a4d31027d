//! The actions screen's keys: the menu's (move, Enter for the chosen action's plan, Esc or
//! `q` to close) and the plan's, the one gate's keys (`app::plan_keys::GateKey`) with `r`
//! reading the node's pods and services again and Esc back. `a` on the panes opens it (the
//! shell's table).
use super::ActionsScreen;
use crate::app::binding::{Binding, Key, Move, bind};
use crate::app::plan_keys::GateKey;

/// The screen's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ActionsKey {
    Menu(Move),
    Choose,
    Gate(GateKey),
    /// Poll the cluster, and read a node plan's survey again.
    Refresh,
    Back,
}

#[rustfmt::skip]
pub(super) static MENU: &[Binding<ActionsKey, ActionsScreen>] = &[
    bind(&[Key::char('j'), Key::DOWN], ActionsKey::Menu(Move::Down), "next action"),
    bind(&[Key::char('k'), Key::UP], ActionsKey::Menu(Move::Up), "previous action"),
    bind(&[Key::ENTER], ActionsKey::Choose, "the chosen action's plan and guards (nothing runs yet)").footer("plan"),
    bind(&[Key::ESC, Key::char('q')], ActionsKey::Back, "close the menu").footer("close"),
];

#[rustfmt::skip]
pub(super) static PLAN: &[Binding<ActionsKey, ActionsScreen>] = &[
    bind(&[Key::char('j'), Key::DOWN], ActionsKey::Gate(GateKey::Move(Move::Down)), "next guard"),
    bind(&[Key::char('k'), Key::UP], ActionsKey::Gate(GateKey::Move(Move::Up)), "previous guard"),
    bind(&[Key::char('?')], ActionsKey::Gate(GateKey::Explain), "why: what the selected guard checks").footer("why"),
    bind(&[Key::char('a')], ActionsKey::Gate(GateKey::Acknowledge), "type the acknowledgement a guard needs").footer("ack").offered(ack_needed),
    bind(&[Key::char('s')], ActionsKey::Gate(GateKey::Start), "run it (through the typed confirmation)").footer("start"),
    bind(&[Key::char('r')], ActionsKey::Refresh, "read the cluster (and the node's pods and services) again").footer("refresh"),
    bind(&[Key::ESC], ActionsKey::Back, "close the plan").footer("back"),
];

fn ack_needed(screen: &ActionsScreen) -> bool {
    (screen.plan.as_ref()).is_some_and(|p| p.guards.ack_prompt().is_some())
}
