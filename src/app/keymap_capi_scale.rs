//! The key that scales the CAPI way on `:capi`: `s` asks for the new replica count of the
//! selected MachineDeployment, else of the TalosControlPlane.
use super::action::Action;
use super::keymap::{Binding, Key};

/// On the `:capi` screen, after its other keys.
pub(super) static FROM_CAPI: &[Binding] = &[Binding {
    keys: &[Key::char('s')],
    action: Action::ScaleCapi,
    help: "scale the selected MachineDeployment (any other row: the TalosControlPlane): replicas, plan, guards",
    footer: Some("scale"),
    offered: Some(super::capi_scale::offers_scale),
}];
