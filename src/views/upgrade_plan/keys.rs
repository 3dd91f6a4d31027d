//! The upgrade plan screen's own keys: the target, then each kind's own (the Talos node order, image and options; the Kubernetes pre-pull); the
//! one gate's keys, Tab between the steps and the guards and the move keys are every plan's
//! (`views::plan`).
use super::{KubePlanModule, TalosPlanModule};
use crate::app::binding::{Binding, Key, bind};

/// The key intents of an upgrade plan: every kind's, then the kind's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RolloutKey<K> {
    NextTarget,
    PreviousTarget,
    Own(K),
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

use RolloutKey::{NextTarget, Own, PreviousTarget};

#[rustfmt::skip]
pub(super) static TALOS: &[Binding<RolloutKey<TalosKey>, TalosPlanModule>] = &[
    bind(&[Key::char('t')], NextTarget, "next offered target version").footer("target"),
    bind(&[Key::char('T')], PreviousTarget, "previous offered target version"),
    bind(&[Key::char('K')], Own(TalosKey::MoveStepUp), "move the selected node earlier"),
    bind(&[Key::char('J')], Own(TalosKey::MoveStepDown), "move the selected node later").footer("order"),
    bind(&[Key::char('x')], Own(TalosKey::ToggleStep), "leave the selected node out, or include it again").footer("skip"),
    bind(&[Key::char('i')], Own(TalosKey::EditImage), "type a custom or factory installer image"),
    bind(&[Key::char('I')], Own(TalosKey::ResetImage), "back to the default installer image"),
    bind(&[Key::char('S')], Own(TalosKey::ToggleStage), "stage the upgrade (install on the next boot; legacy API only)"),
    bind(&[Key::char('P')], Own(TalosKey::TogglePreserve), "preserve EPHEMERAL (only nodes below Talos 1.8)"),
    bind(&[Key::char('+')], Own(TalosKey::MoreParallel), "more workers at once (max-parallel)"),
    bind(&[Key::char('-')], Own(TalosKey::LessParallel), "fewer workers at once"),
];

#[rustfmt::skip]
pub(super) static KUBERNETES: &[Binding<RolloutKey<KubeKey>, KubePlanModule>] = &[
    bind(&[Key::char('t')], NextTarget, "next offered target version").footer("target"),
    bind(&[Key::char('T')], PreviousTarget, "previous offered target version"),
    bind(&[Key::char('P')], Own(KubeKey::PrePull), "pull the new images on every node before the first step").footer("pre-pull"),
];
