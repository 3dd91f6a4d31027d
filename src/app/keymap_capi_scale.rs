//! The key that scales the CAPI way on `:capi`: `s` asks for the new replica count of the
//! selected MachineDeployment, else of the TalosControlPlane.
use super::action::Action;
use super::binding::{Binding, Key, bind};

/// On the `:capi` screen, after its other keys.
#[rustfmt::skip]
pub(super) static FROM_CAPI: &[Binding] = &[bind(&[Key::char('s')], Action::ScaleCapi, "scale the selected MachineDeployment (any other row: the TalosControlPlane): replicas, plan, guards").footer("scale").offered(super::capi_scale::offers_scale)];
