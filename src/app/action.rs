//! The vocabulary of change: `Action` (what the operator or an IO task asked
//! for), `AppEvent` (data arriving from IO tasks) and `Effect` (what update
//! asks the event loop to do, since update itself never does IO).
use crate::discovery::Discovery;

use super::dispatcher::{Answer, MutatingAction, PendingConfirmation};
use super::state::Message;

/// The only input to [`super::update::update`].
#[derive(Debug, Clone)]
pub enum Action {
    Quit,
    MoveUp,
    MoveDown,
    MoveFirst,
    MoveLast,
    PageUp,
    PageDown,
    /// Use the selected cluster (Enter on the list).
    UseSelected,
    OpenHelp,
    OpenErrors,
    OpenCommandLine,
    OpenFilter,
    /// Esc: close the overlay, cancel the input line, or clear the filter.
    Back,
    /// A character typed into the command line, filter or confirmation.
    Insert(char),
    /// Bracketed paste into whichever text input is open.
    Paste(String),
    DeleteBack,
    /// Tab on the command line.
    Complete,
    /// Enter on the command line, filter or confirmation.
    Submit,
    Resize(u16, u16),
    /// Ask for a mutating action; it goes to the dispatcher, never straight
    /// to a runner.
    Request(MutatingAction),
    /// The dispatcher wants the operator to type the cluster name.
    AskConfirmation(PendingConfirmation),
    /// Something to tell the operator on the message line.
    Notify(Message),
    Event(AppEvent),
}

/// Data arriving from IO tasks over the app channel. Pollers for nodes, etcd
/// and versions add their variants here; update folds them into state.
#[derive(Debug, Clone)]
pub enum AppEvent {
    /// Discovery ran again (`:reload`); replaces the cluster list.
    Discovered(Box<Discovery>),
}

/// Work for the event loop, which owns the dispatcher and the IO tasks.
#[derive(Debug, Clone)]
pub enum Effect {
    Quit,
    /// Pass a mutating action through the dispatcher's gate.
    Gate(MutatingAction),
    /// The operator answered a confirmation.
    Answer(PendingConfirmation, Answer),
    /// Run discovery again off the render path.
    ReloadDiscovery,
}
