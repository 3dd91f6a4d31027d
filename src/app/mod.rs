//! The application core: state, actions and the pure update step, the one
//! dispatcher for mutating actions, the keymap, the `:` command line and the
//! event loop that ties them to the terminal.
pub mod action;
pub mod command;
pub mod dispatcher;
pub mod health;
pub mod keymap;
mod keymap_panes;
pub mod prepared;
pub mod rows;
pub mod run;
pub mod state;
pub mod tables;
pub mod update;
mod update_panes;

pub use action::{Action, AppEvent, Effect, PollerRequest};
pub use dispatcher::{Dispatcher, MutatingAction};
pub use state::AppState;
pub use update::{Outcome, apply, update};
