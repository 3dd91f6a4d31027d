//! The vocabulary of change: `Action` (what the operator or an IO task asked
//! for), `AppEvent` (data arriving from IO tasks) and `Effect` (what update
//! asks the event loop to do, since update itself never does IO).
use crate::discovery::Discovery;
use crate::fleet::FleetEvent;

use super::message::Message;
use crate::approval::{Answer, ApprovedAction, MutatingAction, PendingConfirmation};

/// The only input to the update step (`update::update`).
#[derive(Debug, Clone)]
pub enum Action {
    /// `q`, Ctrl-C, `:q`: quits, or asks first while work runs here.
    Quit,
    /// `y` to the quit question.
    ConfirmQuit,
    /// A move key: through the rows, a list or a text overlay.
    Move(super::binding::Move),
    /// Enter: open the selected row (a cluster on the fleet, a node on the nodes pane), or use
    /// it (a cluster on the discovery list).
    OpenSelected,
    /// Tab: the next pane.
    NextPane,
    /// `s`: sort by the next column.
    SortNext,
    /// `S`: reverse the sort.
    SortReverse,
    /// `r`: poll the cluster on screen (or every cluster) now.
    Refresh,
    /// `Space`: hold reports, or apply the held ones and go on.
    TogglePause,
    /// `h`/Left (`Up`: the previous node) and Right (`Down`: the next) in the node detail: the
    /// neighbouring row of the nodes pane.
    StepNode(super::binding::Move),
    /// `?`, `e`, `:help`, `:errors`, `:messages`: that overlay over the screen.
    Overlay(super::state::Overlay),
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
    /// The dispatcher wants the operator to type the cluster name.
    AskConfirmation(PendingConfirmation),
    /// Something to tell the operator on the message line.
    Notify(Message),
    Event(AppEvent),
    /// The dispatcher approved a rollout; update decides what to run.
    Approved(ApprovedAction),
    /// Bring a screen module on top (`C` on the fleet: `certs`; `H` on a cluster: `health`;
    /// `a`: `actions`, `u` / `U`: `upgrade-plan` / `kube-plan`, `p`: `provision`), by the
    /// shell's rule for it where opening it reads more of the console (`update::OPENERS`).
    Open(super::screen_io::ScreenName),
    /// Bring a screen module on top with the words naming what to show (`d` in node detail:
    /// `logs` with `dmesg`; `:logs etcd cp-1`; `:upgrade v1.12.0`; `:rollout`: `progress`
    /// with `rollout`).
    OpenWith(super::screen_io::ScreenName, std::borrow::Cow<'static, str>),
    /// `:ctx NAME`: use the cluster of that name, or the cluster one of whose contexts it is.
    UseCluster(String),
    /// `:fleet`, `:contexts`: that screen; `1`/`2`/`3`, `:nodes`, `:etcd`, `:versions`: that
    /// pane of the cluster view (`update_panes::show_pane`).
    Show(super::screen::Screen),
    /// `:reload`: discovery again.
    Reload,
    /// A key the screen module on top binds; it reads the key with its own table.
    ScreenKey(crossterm::event::KeyEvent),
}

/// Data arriving from IO tasks over the app channel; update folds it into
/// state. Every poller reports through the one `Fleet` variant.
#[derive(Debug, Clone)]
pub enum AppEvent {
    /// Discovery ran again (`:reload`); replaces the cluster list.
    Discovered(Box<Discovery>),
    /// A poller's report.
    Fleet(FleetEvent),
    /// Wall-clock seconds since the Unix epoch, once a second while a
    /// rollout runs here: the progress pane's elapsed times count to it.
    Tick(u64),
    /// A screen module's IO task's report.
    Screen(super::screen_io::ScreenNews),
}

impl super::actions::ProgressNews {
    /// As the app event that tells it to the one progress screen (`views::progress`).
    pub fn told(self) -> AppEvent {
        AppEvent::Screen(super::screen_io::ScreenNews::new(
            super::shell::PROGRESS,
            self,
        ))
    }
}

/// Event `event` of the running operation of `kind`, told to the progress screen.
pub fn progress(
    kind: crate::operation::OperationKind,
    event: crate::operation::progress::ProgressEvent,
) -> AppEvent {
    super::actions::ProgressNews::Event(kind, event).told()
}

/// What the console asks of the pollers: the poller's own commands, sent by the loop.
pub use crate::fleet::PollerCommand;

/// Work for the event loop (`console`), which owns the dispatcher and the IO tasks.
#[derive(Debug, Clone)]
pub enum Effect {
    Quit,
    /// Pass a mutating action through the dispatcher's gate.
    Gate(MutatingAction),
    /// The operator answered a confirmation.
    Answer(PendingConfirmation, Answer),
    /// Run discovery again off the render path.
    ReloadDiscovery,
    Poller(PollerCommand),
    /// An approved action that does not run after all (no runner for it, or
    /// the plan changed): audit why and say so.
    NotRun {
        approved: ApprovedAction,
        why: String,
    },
    /// A guard refuses `action` before it is confirmed: audit it and say why.
    Refuse {
        action: MutatingAction,
        why: String,
    },
    /// Run an approved operation on the console's one runner, its progress told to the
    /// progress screen as its news.
    RunAction {
        approved: ApprovedAction,
        run: Box<super::actions::ActionRun>,
        /// The acknowledgements typed on its plan: the runner re-checks the guards with them.
        acks: Vec<String>,
    },
    /// Cancel the running operation after its current step.
    CancelAction,
    /// Hold the running upgrade after its current step (`true`), or let it go on.
    HoldAction(bool),
    /// The operator's answer to question `id` of the operation running on `cluster` (a
    /// create's maintenance certificate fingerprint: `trust` it or not).
    AnswerAction {
        cluster: String,
        id: u64,
        trust: bool,
    },
    /// A screen module's IO, reported back as `AppEvent::Screen`.
    Screen(super::screen_io::ScreenTask),
}

/// The effect of an approved action that does not run after all (the plan changed or a guard
/// blocks now): the dispatcher audits `why` and says so.
pub fn not_run(approved: &ApprovedAction, why: impl Into<String>) -> Vec<Effect> {
    vec![Effect::NotRun {
        approved: approved.clone(),
        why: why.into(),
    }]
}
