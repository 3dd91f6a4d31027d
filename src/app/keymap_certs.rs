//! The key tables of the certificates screen: `C` on the fleet opens it; on it the move keys
//! select a certificate and Esc goes back.
use super::action::Action;
use super::binding::{Binding, Key, bind};

/// On the fleet.
#[rustfmt::skip]
pub(super) static FROM_FLEET: &[Binding] = &[bind(&[Key::char('C')], Action::OpenCerts, "every certificate of every cluster, soonest end first, with its fix (:certs)")];

#[rustfmt::skip]
pub(super) static SCREEN: &[Binding] = &[
    bind(&[Key::ESC], Action::Back, "back where the screen was opened").footer("back"),
];
