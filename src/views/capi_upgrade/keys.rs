//! The key table of the CAPI-way upgrade plan screen's own keys: switch between the phases and
//! the guards, explain, acknowledge (start, read again and close are the plan screens' keys).
use super::action::Action;
use super::binding::{Binding, Key, bind};
use super::keymap_upgrade::ACKNOWLEDGE;

#[rustfmt::skip]
pub(super) static CAPI_UPGRADE_PLAN: &[Binding] = &[
    bind(&[Key::TAB], Action::NextPane, "switch between the phases and the guards").footer("focus"),
    ACKNOWLEDGE,
    bind(&[Key::char('?')], Action::Explain, "explain the selected guard or phase (:help lists keys)").footer("why"),
];
