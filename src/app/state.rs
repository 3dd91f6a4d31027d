//! Everything the console shows, in one plain struct: clusters and discovery
//! errors, the selection, filter, input line, overlay, read-only flag and the
//! message line. Only `update` changes it; views only read it.
use crate::discovery::{Cluster, Discovery, DiscoveryError};

use super::dispatcher::PendingConfirmation;

/// The main pane. Fleet overview, nodes, etcd, versions and the upgrade
/// wizard become further variants; the loop and overlays stay as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Clusters,
}

/// Which text input is open on the bottom line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// `:` commands.
    Command,
    /// `/` filter over the list.
    Filter,
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
    Help { scroll: u16 },
    Errors { scroll: u16 },
    Confirm(ConfirmState),
}

/// The typed confirmation of a mutating action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmState {
    pub pending: PendingConfirmation,
    pub typed: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Error,
}

/// One line for the operator, shown until the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub level: Level,
    pub text: String,
}

impl Message {
    pub fn info(text: impl Into<String>) -> Message {
        Message {
            level: Level::Info,
            text: text.into(),
        }
    }
    pub fn warn(text: impl Into<String>) -> Message {
        Message {
            level: Level::Warn,
            text: text.into(),
        }
    }
    pub fn error(text: impl Into<String>) -> Message {
        Message {
            level: Level::Error,
            text: text.into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppState {
    pub clusters: Vec<Cluster>,
    pub errors: Vec<DiscoveryError>,
    pub readonly: bool,
    pub screen: Screen,
    /// Index into [`AppState::visible_clusters`].
    pub selected: usize,
    /// The cluster in use (`--context`, `:ctx NAME`, Enter).
    pub current: Option<String>,
    /// Case-insensitive substring over name and context names.
    pub filter: String,
    pub input: Option<InputLine>,
    pub overlay: Option<Overlay>,
    pub message: Option<Message>,
    /// Terminal size in cells (width, height).
    pub size: (u16, u16),
}

impl AppState {
    pub fn new(discovery: Discovery, readonly: bool) -> AppState {
        AppState {
            clusters: discovery.clusters,
            errors: discovery.errors,
            readonly,
            screen: Screen::Clusters,
            selected: 0,
            current: None,
            filter: String::new(),
            input: None,
            overlay: None,
            message: None,
            size: (80, 24),
        }
    }

    /// The clusters the filter lets through, in display order.
    pub fn visible_clusters(&self) -> Vec<&Cluster> {
        self.clusters
            .iter()
            .filter(|c| matches_filter(c, &self.filter))
            .collect()
    }

    pub fn selected_cluster(&self) -> Option<&Cluster> {
        self.visible_clusters().get(self.selected).copied()
    }

    pub fn cluster_names(&self) -> Vec<&str> {
        self.clusters.iter().map(|c| c.name.as_str()).collect()
    }

    /// Makes `name` the cluster in use and selects it; false when unknown.
    pub fn use_cluster(&mut self, name: &str) -> bool {
        if !self.clusters.iter().any(|c| c.name == name) {
            return false;
        }
        self.filter.clear();
        self.current = Some(name.to_string());
        self.selected = self
            .visible_clusters()
            .iter()
            .position(|c| c.name == name)
            .unwrap_or(0);
        true
    }

    /// Keeps the selection inside the visible list after it changed.
    pub fn clamp_selection(&mut self) {
        let n = self.visible_clusters().len();
        self.selected = self.selected.min(n.saturating_sub(1));
    }
}

/// Whether the filter lets `cluster` through: case-insensitive substring of
/// its name, talos context or kube context. An empty filter lets all through.
pub fn matches_filter(cluster: &Cluster, filter: &str) -> bool {
    if filter.is_empty() {
        return true;
    }
    let needle = filter.to_lowercase();
    let hit = |s: &str| s.to_lowercase().contains(&needle);
    hit(&cluster.name)
        || cluster.talos.as_ref().is_some_and(|t| hit(&t.name))
        || cluster.kube.as_ref().is_some_and(|k| hit(&k.name))
}
