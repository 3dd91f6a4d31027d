//! The CAPI-way upgrade plan screen's keys: switch between the phases and the guards, explain,
//! the one gate's acknowledgement and Start, read the plan again, close; the move keys are
//! every screen's (`MOVE_KEYS`).
use super::CapiUpgradeScreen;
use crate::app::binding::{Binding, Key, bind};
use crate::app::plan_keys::GateKey;

/// The screen's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CapiUpgradeKey {
    Focus,
    Explain,
    Gate(GateKey),
    /// Read the plan from the management cluster again.
    Reread,
    Back,
}

#[rustfmt::skip]
pub(super) static KEYS: &[Binding<CapiUpgradeKey, CapiUpgradeScreen>] = &[
    bind(&[Key::TAB], CapiUpgradeKey::Focus, "switch between the phases and the guards").footer("focus"),
    bind(&[Key::char('a')], CapiUpgradeKey::Gate(GateKey::Acknowledge), "type the acknowledgement a warning needs").footer("ack"),
    bind(&[Key::char('?')], CapiUpgradeKey::Explain, "explain the selected guard or phase (:help lists keys)").footer("why"),
    bind(&[Key::char('s')], CapiUpgradeKey::Gate(GateKey::Start), "start (refused while a guard blocks; asks for the name)").footer("start"),
    bind(&[Key::char('r')], CapiUpgradeKey::Reread, "read the plan from the management cluster again"),
    bind(&[Key::ESC], CapiUpgradeKey::Back, "close the plan").footer("back"),
];
