//! The key tables of the health checklist: `H` on the cluster panes opens it; on the
//! checklist `r` runs the checks again and Esc goes back.
use super::action::Action;
use super::binding::{Binding, Key, bind};

/// On the cluster panes.
#[rustfmt::skip]
pub(super) static FROM_CLUSTER: &[Binding] = &[bind(&[Key::char('H')], Action::OpenHealth, "health checks of the cluster (a checklist that fills in; :health)")];

#[rustfmt::skip]
pub(super) static CHECKLIST: &[Binding] = &[
    bind(&[Key::char('r')], Action::Refresh, "run the checks again (once the run ended)").footer("re-run").offered(ended),
    bind(&[Key::ESC], Action::Back, "back to the cluster (a running check goes on)").footer("back"),
];

fn ended(state: &super::state::AppState) -> bool {
    state.health.as_ref().is_some_and(|h| !h.running())
}
