//! The key tables of the Talos upgrade plan screen and the plans' text fields (installer
//! image, acknowledgement).
use super::action::Action;
use super::binding::{Binding, Key, bind, command_line, quit};

#[rustfmt::skip]
pub(super) static PLAN: &[Binding] = &[
    bind(&[Key::TAB], Action::NextPane, "switch between the node order and the guards").footer("focus"),
    bind(&[Key::char('K')], Action::MoveStepUp, "move the selected node earlier"),
    bind(&[Key::char('J')], Action::MoveStepDown, "move the selected node later").footer("order"),
    bind(&[Key::char('x')], Action::ToggleStep, "leave the selected node out, or include it again").footer("skip"),
    bind(&[Key::char('t')], Action::NextTarget, "next offered target version").footer("target"),
    bind(&[Key::char('T')], Action::PreviousTarget, "previous offered target version"),
    bind(&[Key::char('i')], Action::EditImage, "type a custom or factory installer image"),
    bind(&[Key::char('I')], Action::ResetImage, "back to the default installer image"),
    bind(&[Key::char('S')], Action::ToggleStage, "stage the upgrade (install on the next boot; legacy API only)"),
    bind(&[Key::char('P')], Action::TogglePreserve, "preserve EPHEMERAL (only nodes below Talos 1.8)"),
    bind(&[Key::char('+')], Action::MoreParallel, "more workers at once (max-parallel)"),
    bind(&[Key::char('-')], Action::LessParallel, "fewer workers at once"),
    ACKNOWLEDGE,
    bind(&[Key::char('?')], Action::Explain, "explain the selected guard or node (:help lists keys)").footer("why"),
];

/// The end of the plan's keys: start, poll, close.
#[rustfmt::skip]
pub(super) static PLAN_CLOSE: &[Binding] = &[
    bind(&[Key::char('s')], Action::StartPlan, "start (refused while a guard blocks; asks for the name)").footer("start"),
    bind(&[Key::char('r')], Action::Refresh, "poll the cluster now"),
    bind(&[Key::ESC], Action::Back, "close the plan").footer("back"),
];

#[rustfmt::skip]
pub(super) static PLAN_COMMAND: &[Binding] = &[command_line("command line (:help, :upgrade vX.Y.Z, :q)")];

#[rustfmt::skip]
pub(super) static PLAN_QUIT: &[Binding] = &[quit("quit (a running rollout resumes from its journal)")];

#[rustfmt::skip]
pub(super) static TEXT_FIELD: &[Binding] = &[bind(&[Key::ENTER], Action::Submit, "set").footer("set")];

#[rustfmt::skip]
pub(super) static TEXT_FIELD_CANCEL: &[Binding] = &[bind(&[Key::ESC, Key::ctrl('c')], Action::Back, "cancel").footer("cancel")];

#[rustfmt::skip]
pub(super) static EXPLAIN_CLOSE: &[Binding] = &[bind(&[ Key::ESC, Key::char('?'), Key::char('q'), Key::ENTER, ], Action::Back, "close").footer("close")];

/// `a` on every plan with guards (the Talos upgrade plan and the provision wizard).
#[rustfmt::skip]
pub(super) const ACKNOWLEDGE: Binding = bind(&[Key::char('a')], Action::Acknowledge, "type the acknowledgement a warning needs").footer("ack");
