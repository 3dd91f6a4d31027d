//! The checklist's keys: `r` runs the checks again, `c` the client-side ones after the
//! server's stopped, Up/Down and Enter open a check's whole error, and Esc closes it or goes
//! back. `H` on the cluster panes opens it (the shell's table).
use super::Checklist;
use crate::app::binding::{Binding, Key, bind};

/// The checklist's own key intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HealthKey {
    Rerun,
    ClientChecks,
    ToggleError,
    Next,
    Previous,
    Back,
}

#[rustfmt::skip]
pub(super) static CHECKLIST: &[Binding<HealthKey, Checklist>] = &[
    bind(&[Key::char('r')], HealthKey::Rerun, "run the checks again (once the run ended)").footer("re-run").offered(ended),
    bind(&[Key::char('c')], HealthKey::ClientChecks, "the client-side checks, which go on past a failing one (after the server's stopped)").footer("client checks").offered(server_stopped),
    bind(&[Key::ENTER], HealthKey::ToggleError, "the selected check's whole error, open or closed").footer("error").offered(has_error),
    bind(&[Key::char('j'), Key::DOWN], HealthKey::Next, "select the next check"),
    bind(&[Key::char('k'), Key::UP], HealthKey::Previous, "select the previous check"),
    bind(&[Key::ESC], HealthKey::Back, "close the error, else back to the cluster (a running check goes on)").footer("back"),
];

fn ended(screen: &Checklist) -> bool {
    screen.latest.as_ref().is_some_and(|h| !h.running())
}

fn server_stopped(screen: &Checklist) -> bool {
    screen.latest.as_ref().is_some_and(|h| h.not_run() > 0)
}

fn has_error(screen: &Checklist) -> bool {
    screen.latest.as_ref().is_some_and(|h| {
        let lines = h.lines();
        h.focused()
            .and_then(|i| lines.get(i))
            .is_some_and(|l| !l.message.is_empty())
    })
}
