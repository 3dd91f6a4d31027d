//! The overlays' part of the update step: help, errors and messages scrolled, a guard's
//! explanation scrolled, and the typed confirmation the dispatcher asked for.
use super::action::{Action, Effect};
use super::binding::Move;
use super::keymap;
use super::state::{AppState, ConfirmState, Overlay};
use crate::approval::Answer;

pub(super) fn on_overlay(state: &mut AppState, overlay: Overlay, action: Action) -> Vec<Effect> {
    let mut overlay = match overlay {
        Overlay::Confirm(confirm) => return on_confirm(state, confirm, action),
        scrolled => scrolled,
    };
    let (max, scroll) = match &mut overlay {
        // Help as long as it is laid out at this size.
        Overlay::Help { scroll } => {
            let here = keymap::screen_context(state);
            (super::help::max_scroll(here, state), scroll)
        }
        // Two lines per error.
        Overlay::Errors { scroll } => (
            state.errors.len().saturating_mul(2).saturating_sub(1),
            scroll,
        ),
        // Up to three lines a message on the narrowest screen.
        Overlay::Messages { scroll } => (state.messages.len().saturating_mul(3), scroll),
        Overlay::Explain { scroll, .. } => (40, scroll),
        Overlay::Confirm(_) => unreachable!("answered above"),
    };
    let max = u16::try_from(max).unwrap_or(u16::MAX);
    match action {
        Action::Back => return Vec::new(),
        Action::Move(Move::Down) => *scroll = scroll.saturating_add(1).min(max),
        Action::Move(Move::Up) => *scroll = scroll.saturating_sub(1),
        _ => {}
    }
    state.overlay = Some(overlay);
    Vec::new()
}

/// The typed confirmation: Esc, or Enter with the wrong name, cancels (Cancel is the default).
fn on_confirm(state: &mut AppState, mut confirm: ConfirmState, action: Action) -> Vec<Effect> {
    match action {
        Action::Back => return vec![Effect::Answer(confirm.pending, Answer::Cancel)],
        Action::Submit => {
            return vec![Effect::Answer(
                confirm.pending,
                Answer::Typed(confirm.typed),
            )];
        }
        Action::Insert(c) => confirm.typed.push(c),
        Action::Paste(text) => confirm.typed.push_str(text.lines().next().unwrap_or("")),
        Action::DeleteBack => _ = confirm.typed.pop(),
        _ => {}
    }
    state.overlay = Some(Overlay::Confirm(confirm));
    Vec::new()
}
