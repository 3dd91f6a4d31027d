//! The Kubernetes upgrade plan screen's keys: switch between the steps and the guards, the
//! target, pre-pull, explain, the one gate's acknowledgement, Start and poll, close; the move
//! keys are every screen's (`MOVE_KEYS`).
use super::KubePlanModule;
use crate::app::binding::{Binding, Key, bind};
use crate::app::plan_keys::GateKey;

/// The screen's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KubePlanKey {
    Focus,
    NextTarget,
    PreviousTarget,
    PrePull,
    Explain,
    Gate(GateKey),
    Back,
}

#[rustfmt::skip]
pub(super) static KEYS: &[Binding<KubePlanKey, KubePlanModule>] = &[
    bind(&[Key::TAB], KubePlanKey::Focus, "switch between the steps and the guards").footer("focus"),
    bind(&[Key::char('t')], KubePlanKey::NextTarget, "next offered Kubernetes version").footer("target"),
    bind(&[Key::char('T')], KubePlanKey::PreviousTarget, "previous offered Kubernetes version"),
    bind(&[Key::char('P')], KubePlanKey::PrePull, "pull the new images on every node before the first step").footer("pre-pull"),
    bind(&[Key::char('a')], KubePlanKey::Gate(GateKey::Acknowledge), "type the acknowledgement a guard needs").footer("ack"),
    bind(&[Key::char('?')], KubePlanKey::Explain, "explain the selected guard or step (:help lists keys)").footer("why"),
    bind(&[Key::char('s')], KubePlanKey::Gate(GateKey::Start), "start (refused while a guard blocks; asks for the name)").footer("start"),
    bind(&[Key::char('r')], KubePlanKey::Gate(GateKey::Refresh), "poll the cluster now"),
    bind(&[Key::ESC], KubePlanKey::Back, "close the plan").footer("back"),
];
