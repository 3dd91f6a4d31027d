//! What the Talos and the Kubernetes plan screens do alike with a key: move through the steps or
//! the guards, switch between them, cycle the target, take the acknowledgement, refresh, and
//! open help or the command line. Each screen keeps its own plan and its own edits. Pure.
use super::action::{Action, Effect, PollerRequest};
use super::message::Message;
use super::plan_screen::{PlanFocus, PlanGuards, explain_guard};
use super::state::{AppState, InputKind, Overlay};
use crate::upgrade::Guard;

/// The list that gets the keys after `Tab`.
pub(super) fn other_focus(focus: PlanFocus) -> PlanFocus {
    match focus {
        PlanFocus::Nodes => PlanFocus::Guards,
        PlanFocus::Guards => PlanFocus::Nodes,
    }
}

/// Where a move key takes the selection at `i` of a list of `len` (PgUp/PgDn
/// by `page`); none in an empty list.
pub(super) fn moved(len: usize, i: usize, action: &Action, page: usize) -> Option<usize> {
    let last = len.checked_sub(1)?;
    Some(match action {
        Action::MoveDown => (i + 1).min(last),
        Action::MoveUp => i.saturating_sub(1),
        Action::MoveFirst => 0,
        Action::PageDown => (i + page.max(1)).min(last),
        Action::PageUp => i.saturating_sub(page.max(1)),
        _ => last,
    })
}

/// A move key on a plan's guards: the selection follows it (PgUp/PgDn by `page`).
pub(super) fn move_guard(guards: &mut PlanGuards, action: &Action, page: usize) {
    if let Some(to) = moved(guards.shown.len(), guards.index(), action, page) {
        guards.select(to);
    }
}

/// Enter on the acknowledgement field of the plan whose guards `guards` finds: kept only when
/// it is the text still asked for; true when it was kept (the caller evaluates again).
pub(super) fn acknowledge_into(
    state: &mut AppState,
    text: &str,
    guards: fn(&mut AppState) -> Option<&mut PlanGuards>,
) -> bool {
    let Some(needed) = guards(state).and_then(|g| g.missing_ack().map(String::from)) else {
        return false;
    };
    if !take_ack(state, &needed, text) {
        return false;
    }
    if let Some(g) = guards(state) {
        g.acks.push(needed);
    }
    true
}

/// The target after `current` (or before it, for `PreviousTarget`), wrapping around.
pub(super) fn cycled<'a, T: PartialEq>(
    targets: &'a [T],
    current: &T,
    action: &Action,
) -> Option<&'a T> {
    let n = targets.len().max(1);
    let i = targets.iter().position(|t| t == current).unwrap_or(0);
    let next = if matches!(action, Action::NextTarget) {
        (i + 1) % n
    } else {
        (i + n - 1) % n
    };
    targets.get(next)
}

/// The keys both plan screens answer the same way: `a`, `r`, `?` and `:`.
pub(super) fn shared_key(
    state: &mut AppState,
    action: &Action,
    cluster: String,
    needs_ack: bool,
) -> Vec<Effect> {
    match action {
        Action::Acknowledge if needs_ack => state.open_input(InputKind::Acknowledge, String::new()),
        Action::Acknowledge => state.message = Some(Message::info("no acknowledgement is needed")),
        Action::Refresh => {
            state.message = Some(Message::info(format!("refreshing {cluster}")));
            return vec![Effect::Poller(PollerRequest::Refresh(cluster))];
        }
        Action::OpenHelp => state.overlay = Some(Overlay::Help { scroll: 0 }),
        Action::OpenCommandLine => state.open_input(InputKind::Command, String::new()),
        _ => {}
    }
    Vec::new()
}

/// Checks the typed acknowledgement against the one the plan asks for; true when it was kept.
pub(super) fn take_ack(state: &mut AppState, needed: &str, text: &str) -> bool {
    if text.trim() == needed {
        state.message = Some(Message::info("acknowledged; s starts"));
        true
    } else {
        state.message = Some(Message::error(format!(
            "not acknowledged: type exactly \"{needed}\""
        )));
        false
    }
}

/// `?` on a plan: the selected guard explained, or `step` (the selected step's title and
/// explanation, none with nothing selected), in the explanation overlay.
pub(super) fn explain_selected(
    state: &mut AppState,
    focus: PlanFocus,
    guard: Option<&Guard>,
    step: Option<(String, String)>,
) {
    let explained = match focus {
        PlanFocus::Guards => guard.map(|g| (g.id.title().to_string(), explain_guard(g))),
        PlanFocus::Nodes => step,
    };
    if let Some((title, text)) = explained {
        state.overlay = Some(Overlay::Explain {
            title,
            text,
            scroll: 0,
        });
    }
}
