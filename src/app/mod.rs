//! The application core: state, actions and the pure update step that returns
//! effects, the keymap and the `:` command line. No IO: the event loop and the
//! effect runner live in `console`, the gate for mutating actions in `approval`.
pub mod action;
pub mod actions;
pub mod binding;
pub mod command;
pub mod help;
pub mod keymap;
pub mod message;
pub mod plan_screen;
pub mod prepared;
pub mod provision;
pub mod rows;
pub mod screen;
pub mod screen_io;
pub mod screens;
pub mod scroll;
pub mod shell;
pub mod state;
pub mod tables;
#[cfg(test)]
#[path = "fixtures_tests.rs"]
pub(crate) mod test_fixtures;
pub mod update;
pub mod update_actions;
mod update_overlay;
mod update_panes;
mod update_provision;
mod update_upgrade;

pub use action::{Action, AppEvent, Effect, PollerCommand};
pub use state::AppState;
pub use update::{Outcome, apply, update};
pub use update_panes::{drift_request, usage_request};
