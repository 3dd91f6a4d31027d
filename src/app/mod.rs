//! The application core: state, actions and the pure update step, the one
//! dispatcher for mutating actions, the keymap, the `:` command line and the
//! event loop that ties them to the terminal.
pub mod action;
pub mod command;
pub mod dispatcher;
pub mod keymap;
pub mod run;
pub mod state;
pub mod update;

pub use action::{Action, AppEvent, Effect};
pub use dispatcher::{Dispatcher, MutatingAction};
pub use state::AppState;
pub use update::update;
