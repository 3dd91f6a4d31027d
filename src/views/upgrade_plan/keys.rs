//! The upgrade plan screen's keys: switch between the steps and the guards and the target,
//! then each kind's own (the Talos node order, image and options; the Kubernetes pre-pull),
//! then explain, the one gate's acknowledgement, Start and poll, close; the move keys are
//! every screen's (`MOVE_KEYS`).
use crate::app::binding::{Binding, Key, bind};
use crate::app::plan_keys::GateKey;

/// The key intents every kind of upgrade plan has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PlanKey {
    Focus,
    NextTarget,
    PreviousTarget,
    Explain,
    Gate(GateKey),
    Back,
}

/// The Talos plan's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TalosKey {
    MoveStepUp,
    MoveStepDown,
    ToggleStep,
    EditImage,
    ResetImage,
    ToggleStage,
    TogglePreserve,
    MoreParallel,
    LessParallel,
}

/// The Kubernetes plan's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KubeKey {
    PrePull,
}

#[rustfmt::skip]
pub(super) static TARGET: &[Binding<PlanKey, ()>] = &[
    bind(&[Key::TAB], PlanKey::Focus, "switch between the plan's steps and the guards").footer("focus"),
    bind(&[Key::char('t')], PlanKey::NextTarget, "next offered target version").footer("target"),
    bind(&[Key::char('T')], PlanKey::PreviousTarget, "previous offered target version"),
];

#[rustfmt::skip]
pub(super) static TALOS: &[Binding<TalosKey, ()>] = &[
    bind(&[Key::char('K')], TalosKey::MoveStepUp, "move the selected node earlier"),
    bind(&[Key::char('J')], TalosKey::MoveStepDown, "move the selected node later").footer("order"),
    bind(&[Key::char('x')], TalosKey::ToggleStep, "leave the selected node out, or include it again").footer("skip"),
    bind(&[Key::char('i')], TalosKey::EditImage, "type a custom or factory installer image"),
    bind(&[Key::char('I')], TalosKey::ResetImage, "back to the default installer image"),
    bind(&[Key::char('S')], TalosKey::ToggleStage, "stage the upgrade (install on the next boot; legacy API only)"),
    bind(&[Key::char('P')], TalosKey::TogglePreserve, "preserve EPHEMERAL (only nodes below Talos 1.8)"),
    bind(&[Key::char('+')], TalosKey::MoreParallel, "more workers at once (max-parallel)"),
    bind(&[Key::char('-')], TalosKey::LessParallel, "fewer workers at once"),
];

#[rustfmt::skip]
pub(super) static KUBERNETES: &[Binding<KubeKey, ()>] = &[
    bind(&[Key::char('P')], KubeKey::PrePull, "pull the new images on every node before the first step").footer("pre-pull"),
];

#[rustfmt::skip]
pub(super) static GATE: &[Binding<PlanKey, ()>] = &[
    bind(&[Key::char('a')], PlanKey::Gate(GateKey::Acknowledge), "type the acknowledgement a guard needs").footer("ack"),
    bind(&[Key::char('?')], PlanKey::Explain, "explain the selected guard or step (:help lists keys)").footer("why"),
    bind(&[Key::char('s')], PlanKey::Gate(GateKey::Start), "start (refused while a guard blocks; asks for the name)").footer("start"),
    bind(&[Key::char('r')], PlanKey::Gate(GateKey::Refresh), "poll the cluster now"),
    bind(&[Key::ESC], PlanKey::Back, "close the plan").footer("back"),
];
