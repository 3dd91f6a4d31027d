//! Everything the console shows, in one plain struct: clusters and discovery
//! errors, the live fleet model, the screen and its tables, the input line,
//! overlay, read-only and pause flags and the message line. Only `update`
//! changes it; views only read it.
use std::collections::VecDeque;
use std::time::Instant;

use crate::discovery::{Cluster, Discovery, DiscoveryError};
use crate::fleet::{FleetEvent, FleetModel};

use super::message::{MAX_MESSAGES, Message};
use super::screen::{Screen, TableKind, TableView};
use crate::approval::PendingConfirmation;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tables {
    /// How each table is looked at, in `TableKind` order.
    views: [TableView; 5],
    /// The nodes whose usage the pollers were last asked to read, by cluster.
    pub usage_asked: Option<(String, Vec<crate::node_resources::NodeIdentity>)>,
    /// The nodes (by address) whose configurations the pollers were asked to compare, by
    /// cluster; a configuration change's end forgets its cluster's, to read them again.
    pub drift_asked: std::collections::BTreeMap<String, Vec<String>>,
}

impl Default for Tables {
    /// Each table sorted by its spec's default (the fleet and the nodes pane problems first).
    fn default() -> Tables {
        Tables {
            views: super::rows::SPECS.each_ref().map(|spec| TableView {
                sort: spec.default_sort(),
                ..TableView::default()
            }),
            usage_asked: None,
            drift_asked: Default::default(),
        }
    }
}

impl Tables {
    pub fn get(&self, kind: TableKind) -> &TableView {
        &self.views[kind as usize]
    }

    pub fn get_mut(&mut self, kind: TableKind) -> &mut TableView {
        &mut self.views[kind as usize]
    }
}

/// The smallest terminal the console lays out for; below it the too-small
/// screen shows and only quitting works.
pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

/// Reports held while paused; beyond this the oldest are dropped (the model
/// keeps the latest of everything, so little is lost).
pub const MAX_HELD_EVENTS: usize = 50_000;

/// Which text input is open on the bottom line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// `:` commands.
    Command,
    /// `/` filter over the list.
    Filter,
    /// A screen module's field, its prompt given; Enter gives the text to the module.
    Screen(&'static str),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputLine {
    pub kind: InputKind,
    pub text: String,
    /// Completion candidates shown after an ambiguous Tab.
    pub candidates: Vec<String>,
}

/// A popup over the main pane; it takes the keys while open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    Help {
        scroll: u16,
    },
    Errors {
        scroll: u16,
    },
    /// `:messages`: every message shown so far, newest first.
    Messages {
        scroll: u16,
    },
    Confirm(ConfirmState),
    /// `?` on the plan: what a guard or step does and why.
    Explain {
        title: String,
        text: String,
        scroll: u16,
    },
}

/// The typed confirmation of a mutating action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmState {
    pub pending: PendingConfirmation,
    pub typed: String,
}

#[derive(Debug, Clone, Default)]
pub struct AppState {
    pub clusters: Vec<Cluster>,
    pub errors: Vec<DiscoveryError>,
    pub readonly: bool,
    pub screen: Screen,
    /// The cluster in use (`--context`, `:ctx NAME`, Enter).
    pub current: Option<String>,
    pub input: Option<InputLine>,
    pub overlay: Option<Overlay>,
    pub message: Option<Message>,
    /// Terminal size in cells (width, height).
    pub size: (u16, u16),
    /// What the pollers reported, folded.
    pub fleet: FleetModel,
    /// The time of the latest report: ages of stale data are measured to it,
    /// so they move only when reports arrive, never with a clock.
    pub now: Option<Instant>,
    /// `Space`: reports are held, not applied, until resumed.
    pub paused: bool,
    pub held: VecDeque<FleetEvent>,
    pub tables: Tables,
    /// Bumped on every change a frame could show; what is prepared for the
    /// views is stamped with it.
    pub generation: u64,
    /// Tables, health and findings derived for the views (see `prepared`).
    pub prepared: super::prepared::Prepared,
    /// The latest wall-clock tick (seconds since the Unix epoch).
    pub wall_clock: Option<u64>,
    /// This console's run holder, `user@host/pid-start` (set by the event
    /// loop): a rollout Lease it holds itself is not another run's.
    pub identity: String,
    /// What provisioning reads: the config, OpenNebula's environment, the kubeconfig.
    pub provision: super::provision::ProvisionState,
    /// The operator's place in node detail's recent events (newest first).
    pub node_events: super::scroll::Scroll,
    /// Every message shown, oldest first (bounded): the message line may
    /// shorten one, `:messages` shows it whole.
    pub messages: VecDeque<Message>,
    /// How event and progress times are shown (the console uses the
    /// system's zone; UTC by default, so tests do not depend on the machine).
    pub zone: crate::clock::Zone,
    /// Quit was asked while work runs here: the question shown (y/N).
    pub quit_question: Option<String>,
    /// The demo's fleet runs in this process and stops when it quits.
    pub demo_fleet: bool,
    /// What the node and etcd actions keep (snapshots' directory, contexts, nodes left cordoned).
    pub actions: super::actions::ActionsState,
    /// The screens that are modules of their own (`views/<screen>/`).
    pub screens: super::screens::Screens,
}

impl AppState {
    /// Opens the input line for `kind` with `text` typed, clearing the message line.
    pub fn open_input(&mut self, kind: InputKind, text: String) {
        self.message = None;
        self.input = Some(InputLine {
            kind,
            text,
            candidates: Vec::new(),
        });
    }

    /// The console on the fleet of `discovery`, 80x24 until the terminal says its size; the
    /// rest as it starts (`Default`: nothing in use, open or held, UTC).
    pub fn new(discovery: Discovery, readonly: bool) -> AppState {
        AppState {
            clusters: discovery.clusters,
            errors: discovery.errors,
            readonly,
            size: (80, 24),
            provision: super::provision::ProvisionState {
                kubeconfig: discovery.kubeconfig,
                ..Default::default()
            },
            ..AppState::default()
        }
    }

    /// The console with its screen modules (`views::screens`).
    pub fn with_screens(mut self, screens: super::screens::Screens) -> AppState {
        self.screens = screens;
        self
    }

    /// The operation run from this console (running, the last, or one a journal left), as
    /// the progress screen follows it.
    pub fn progress(&self) -> Option<&crate::operation::progress::OperationProgress> {
        self.screens.iter().find_map(|m| m.operation())
    }

    /// Whether an operation runs from this console now.
    pub fn operation_running(&self) -> bool {
        self.progress().is_some_and(|p| p.running())
    }

    /// Whether the terminal is below [`MIN_WIDTH`] x [`MIN_HEIGHT`].
    pub fn too_small(&self) -> bool {
        self.size.0 < MIN_WIDTH || self.size.1 < MIN_HEIGHT
    }

    /// The cluster the cluster view and node detail show.
    pub fn current_live(&self) -> Option<&crate::fleet::ClusterLive> {
        self.current.as_deref().and_then(|c| self.fleet.cluster(c))
    }

    /// The table the keys and `/` act on, if the screen has one.
    pub fn active_table(&self) -> Option<TableKind> {
        match self.screen {
            Screen::Fleet => Some(TableKind::Fleet),
            Screen::Clusters => Some(TableKind::Clusters),
            Screen::Cluster(pane) => Some(pane.table()),
            Screen::NodeDetail | Screen::Module(_) => None,
        }
    }

    /// The cluster named on screen: the one in use on the cluster screens,
    /// none on the fleet and discovery lists.
    pub fn cluster_on_screen(&self) -> Option<&str> {
        let shown = match self.screen {
            Screen::Module(_) => super::shell::of_cluster_in_use(self),
            main => main.of_cluster_in_use(),
        };
        self.current.as_deref().filter(|_| shown)
    }

    /// What `:ctx` takes and Tab completes: every cluster's name, then every context's (in use
    /// or alternate, talos and kube), each once.
    pub fn ctx_names(&self) -> Vec<&str> {
        let contexts = self.clusters.iter().flat_map(|c| {
            let in_use = c.talos_context().into_iter().chain(c.kube_context());
            in_use.chain(c.alternate_contexts())
        });
        let mut names: Vec<&str> = self.clusters.iter().map(|c| c.name.as_str()).collect();
        for name in contexts {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    /// Makes `name` the cluster in use and selects it on the discovery list; false when
    /// unknown.
    pub fn use_cluster(&mut self, name: &str) -> bool {
        if !self.clusters.iter().any(|c| c.name == name) {
            return false;
        }
        self.tables.get_mut(TableKind::Clusters).filter.clear();
        self.select(TableKind::Clusters, name);
        self.current = Some(name.to_string());
        true
    }

    /// Selects the row keyed `key` on the table `kind`; the selection keeps to the row's
    /// identity (a cluster's name, a node's address, an etcd member's id) as rows move.
    pub fn select(&mut self, kind: TableKind, key: impl Into<String>) {
        self.tables.get_mut(kind).selected = Some(key.into());
    }

    /// Keeps the message on the line in the log, when it is a new one.
    pub fn log_message(&mut self, before: Option<&Message>) {
        let Some(message) = self.message.as_ref().filter(|m| Some(*m) != before) else {
            return;
        };
        if self.messages.len() >= MAX_MESSAGES {
            self.messages.pop_front();
        }
        self.messages.push_back(message.clone());
    }
}
