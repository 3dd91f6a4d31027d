//! The overlays' part of the update step: help, errors and messages scrolled, a guard's
//! explanation scrolled, and the typed confirmation the dispatcher asked for.
use super::action::{Action, Effect};
use super::keymap;
use super::state::{AppState, Overlay};
use crate::approval::Answer;

pub(super) fn on_overlay(state: &mut AppState, overlay: Overlay, action: Action) -> Vec<Effect> {
    match overlay {
        Overlay::Help { scroll } | Overlay::Errors { scroll } => {
            let is_help = matches!(overlay, Overlay::Help { .. });
            // Two lines per error; help as long as it is laid out at this size.
            let max = if is_help {
                super::help::max_scroll(keymap::screen_context(state), &state.screens, state.size)
            } else {
                state.errors.len().saturating_mul(2).saturating_sub(1)
            };
            let max = u16::try_from(max).unwrap_or(u16::MAX);
            let scroll = match action {
                Action::Back => return Vec::new(),
                Action::MoveDown => scroll.saturating_add(1).min(max),
                Action::MoveUp => scroll.saturating_sub(1),
                _ => scroll,
            };
            state.overlay = Some(if is_help {
                Overlay::Help { scroll }
            } else {
                Overlay::Errors { scroll }
            });
            Vec::new()
        }
        Overlay::Messages { scroll } => {
            // Up to three lines a message on the narrowest screen.
            let max = u16::try_from(state.messages.len() * 3).unwrap_or(u16::MAX);
            let scroll = match action {
                Action::Back | Action::Explain | Action::Submit => return Vec::new(),
                Action::MoveDown => scroll.saturating_add(1).min(max),
                Action::MoveUp => scroll.saturating_sub(1),
                _ => scroll,
            };
            state.overlay = Some(Overlay::Messages { scroll });
            Vec::new()
        }
        Overlay::Explain {
            title,
            text,
            scroll,
        } => {
            let scroll = match action {
                Action::Back | Action::Explain | Action::Submit => return Vec::new(),
                Action::MoveDown => scroll.saturating_add(1).min(40),
                Action::MoveUp => scroll.saturating_sub(1),
                _ => scroll,
            };
            state.overlay = Some(Overlay::Explain {
                title,
                text,
                scroll,
            });
            Vec::new()
        }
        Overlay::Confirm(mut confirm) => match action {
            // Esc, or Enter with the wrong name, cancels: Cancel is the default.
            Action::Back => vec![Effect::Answer(confirm.pending, Answer::Cancel)],
            Action::Submit => vec![Effect::Answer(
                confirm.pending,
                Answer::Typed(confirm.typed),
            )],
            Action::Insert(c) => {
                confirm.typed.push(c);
                state.overlay = Some(Overlay::Confirm(confirm));
                Vec::new()
            }
            Action::Paste(text) => {
                confirm.typed.push_str(text.lines().next().unwrap_or(""));
                state.overlay = Some(Overlay::Confirm(confirm));
                Vec::new()
            }
            Action::DeleteBack => {
                confirm.typed.pop();
                state.overlay = Some(Overlay::Confirm(confirm));
                Vec::new()
            }
            _ => {
                state.overlay = Some(Overlay::Confirm(confirm));
                Vec::new()
            }
        },
    }
}
