//! What the views draw from, derived once per change of the state instead of
//! once per frame: the shaped tables of the screen, each cluster's health and
//! the version findings of the cluster on screen. The event loop prepares
//! before it draws; views use what is prepared for exactly this state and
//! derive anything else themselves, so a stale cache can never be drawn.
use std::borrow::Cow;
use std::collections::HashMap;

use super::screen::{Screen, TableKind};
use super::state::AppState;
use super::tables::{self, TableData};
use crate::fleet::ClusterLive;
use crate::fleet::summary::{ClusterHealth, VersionFindings, cluster_health};

/// What a prepared cache was made for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    generation: u64,
    screen: Screen,
    current: Option<String>,
}

impl Stamp {
    fn of(state: &AppState) -> Stamp {
        Stamp {
            generation: state.generation,
            screen: state.screen,
            current: state.current.clone(),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Prepared {
    stamp: Option<Stamp>,
    tables: HashMap<TableKind, TableData>,
    health: HashMap<String, ClusterHealth>,
    versions: Option<VersionFindings>,
}

impl Prepared {
    fn fresh(&self, state: &AppState) -> bool {
        self.stamp.as_ref().is_some_and(|s| *s == Stamp::of(state))
    }
}

/// Derives what the current screen draws, unless it already is.
pub fn prepare(state: &mut AppState) {
    if state.prepared.fresh(state) {
        return;
    }
    let health = state
        .fleet
        .clusters
        .iter()
        .map(|(name, live)| (name.clone(), cluster_health(live, state.now)))
        .collect();
    // Stamped first: the tables read each cluster's health through it.
    state.prepared = Prepared {
        stamp: Some(Stamp::of(state)),
        health,
        ..Prepared::default()
    };
    let screen = state.screen;
    let kinds: &[TableKind] = match screen {
        Screen::Fleet => &[TableKind::Fleet],
        Screen::Cluster(_) => &[TableKind::Nodes, TableKind::Etcd, TableKind::Versions],
        Screen::NodeDetail => &[TableKind::Nodes],
        Screen::Clusters => &[TableKind::Clusters],
        Screen::Module(_) => &[],
    };
    let built: Vec<(TableKind, TableData)> = kinds
        .iter()
        .map(|k| (*k, tables::table(state, *k)))
        .collect();
    state.prepared.tables.extend(built);
    if matches!(screen, Screen::Cluster(_)) {
        state.prepared.versions = state
            .current_live()
            .map(|live| VersionFindings::of(&live.status));
    }
}

/// What was prepared for exactly this state, else `derive`d now.
fn as_prepared<'a, T: Clone>(
    state: &'a AppState,
    prepared: Option<&'a T>,
    derive: impl FnOnce() -> T,
) -> Cow<'a, T> {
    match prepared.filter(|_| state.prepared.fresh(state)) {
        Some(value) => Cow::Borrowed(value),
        None => Cow::Owned(derive()),
    }
}

/// The table as prepared for this state, else derived now.
pub fn table(state: &AppState, kind: TableKind) -> Cow<'_, TableData> {
    let prepared = state.prepared.tables.get(&kind);
    as_prepared(state, prepared, || tables::table(state, kind))
}

/// A cluster's health as prepared for this state, else derived now.
pub fn health<'a>(state: &'a AppState, name: &str, live: &ClusterLive) -> Cow<'a, ClusterHealth> {
    let prepared = state.prepared.health.get(name);
    as_prepared(state, prepared, || cluster_health(live, state.now))
}

/// The current cluster's version findings, as prepared or derived now.
pub fn version_findings<'a>(state: &'a AppState, live: &ClusterLive) -> Cow<'a, VersionFindings> {
    let prepared = state.prepared.versions.as_ref();
    as_prepared(state, prepared, || VersionFindings::of(&live.status))
}
