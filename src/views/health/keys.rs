//! The key tables of the health checklist: `H` on the cluster panes opens it; on the
//! checklist `r` runs the checks again, `c` the client-side ones after the server's stopped,
//! Up/Down and Enter open a check's whole error, and Esc closes it or goes back.
use super::action::Action;
use super::binding::{Binding, Key, bind};
use super::state::AppState;

/// On the cluster panes.
#[rustfmt::skip]
pub(super) static FROM_CLUSTER: &[Binding] = &[bind(&[Key::char('H')], Action::OpenHealth, "health checks of the cluster (a checklist that fills in; :health)")];

#[rustfmt::skip]
pub(super) static CHECKLIST: &[Binding] = &[
    bind(&[Key::char('r')], Action::Refresh, "run the checks again (once the run ended)").footer("re-run").offered(ended),
    bind(&[Key::char('c')], Action::RunClientChecks, "the client-side checks, which go on past a failing one (after the server's stopped)").footer("client checks").offered(server_stopped),
    bind(&[Key::ENTER], Action::OpenSelected, "the selected check's whole error, open or closed").footer("error").offered(has_error),
    bind(&[Key::char('j'), Key::DOWN], Action::MoveDown, "select the next check"),
    bind(&[Key::char('k'), Key::UP], Action::MoveUp, "select the previous check"),
    bind(&[Key::ESC], Action::Back, "close the error, else back to the cluster (a running check goes on)").footer("back"),
];

fn ended(state: &AppState) -> bool {
    state.health.as_ref().is_some_and(|h| !h.running())
}

fn server_stopped(state: &AppState) -> bool {
    state.health.as_ref().is_some_and(|h| h.not_run() > 0)
}

fn has_error(state: &AppState) -> bool {
    state.health.as_ref().is_some_and(|h| {
        let lines = h.lines();
        h.focused()
            .and_then(|i| lines.get(i))
            .is_some_and(|l| !l.message.is_empty())
    })
}
