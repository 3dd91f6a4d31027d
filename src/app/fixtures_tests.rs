//! Fixtures the app's unit tests share: a discovered cluster with only a Talos context, a
//! console on one cluster's screen with that cluster's status known, a rollout of the `healthy`
//! fixture cluster and an action approved for it.
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::app::screen::{Pane, Screen};
use crate::app::state::AppState;
use crate::approval::{
    Answer, ApprovedAction, AuditLog, Dispatcher, Gate, MutatingAction, Verdict,
};
use crate::discovery::{Cluster, Discovery, TalosContext};
use crate::fleet::{ClusterLive, ClusterStatus};
use crate::rollout::{RolloutKind, RolloutSummary, StepProgress};

/// A cluster discovery found in a talosconfig alone (no kube context), named `name`.
pub(crate) fn discovered(name: &str) -> Cluster {
    Cluster {
        name: name.into(),
        talos: Some(TalosContext {
            name: name.into(),
            file: PathBuf::from("/t"),
            endpoints: vec!["127.10.0.2".into()],
            nodes: vec![],
            ca_pem: String::new(),
            crt_pem: String::new(),
            key_pem: String::new(),
        }),
        kube: None,
        paired_by: None,
        ..Default::default()
    }
}

/// A console (not read-only) that discovered `clusters`.
pub(crate) fn console_of(clusters: Vec<Cluster>) -> AppState {
    let discovery = Discovery {
        clusters,
        ..Discovery::default()
    };
    AppState::new(discovery, false).with_screens(crate::views::screens())
}

/// A key pressed where the state is: its action through the keymap, folded in.
pub(crate) fn press(state: &mut AppState, code: crossterm::event::KeyCode) -> Vec<super::Effect> {
    let event = crossterm::event::KeyEvent::from(code);
    match super::keymap::action_for(state, &event) {
        Some(action) => super::update(state, action),
        None => Vec::new(),
    }
}

/// The `pane` of `status`'s cluster, its status known from a finished poll.
pub(crate) fn cluster_screen(status: ClusterStatus, pane: Pane) -> AppState {
    let name = status.name.clone();
    let mut state = console_of(vec![discovered(&name)]);
    let live = ClusterLive {
        status,
        poll_finished: Some(Instant::now()),
        ..ClusterLive::default()
    };
    state.fleet.clusters.insert(name.clone(), live);
    state.use_cluster(&name);
    state.screen = Screen::Cluster(pane);
    state
}

/// A rollout of the `healthy` fixture cluster to `target`, held by `op@jump1`, not paused, not
/// ended.
pub(crate) fn healthy_rollout(
    kind: RolloutKind,
    target: &str,
    steps: Vec<StepProgress>,
) -> RolloutSummary {
    RolloutSummary {
        cluster: "healthy".into(),
        kind,
        target: target.into(),
        holder: "op@jump1".into(),
        steps,
        paused: false,
        outcome: None,
    }
}

/// `action` through a dispatcher that is not read-only (auditing under `dir`), its confirmation
/// answered with the `healthy` fixture cluster's name.
pub(crate) fn approved_on_healthy(dir: &Path, action: MutatingAction) -> ApprovedAction {
    let d = Dispatcher::new(false, AuditLog::new(dir.join("audit.log")));
    let Gate::Confirm(pending) = d.request(action) else {
        panic!("expected a confirmation");
    };
    let Verdict::Proceed(approved) = d.answer(pending, Answer::Typed("healthy".into())) else {
        panic!("the typed name matched");
    };
    approved
}

/// The operation the one progress screen shows, to set a test's scene.
pub(crate) fn progress_mut(
    state: &mut AppState,
) -> &mut Option<crate::operation::progress::OperationProgress> {
    let screen = state
        .screens
        .find_mut::<crate::views::progress::ProgressScreen>();
    &mut screen.expect("the progress screen").progress
}

impl AppState {
    /// Selects the node `node` (by name or address) of the cluster in use on the nodes pane;
    /// false when its status names no such node.
    pub(crate) fn select_node(&mut self, node: &str) -> bool {
        let address = self.current_live().and_then(|live| live.status.node(node));
        let Some(address) = address.map(|n| n.address.clone()) else {
            return false;
        };
        self.select(crate::app::screen::TableKind::Nodes, address);
        true
    }

    /// Selects the etcd member `member` (by id or hostname) of the cluster in use on the
    /// etcd pane; false when its status names no such member.
    pub(crate) fn select_member(&mut self, member: &str) -> bool {
        let members = self.current_live().map(|live| &live.status.etcd.members);
        let found = members.and_then(|m| m.iter().find(|m| m.id == member || m.hostname == member));
        let Some(id) = found.map(|m| m.id.clone()) else {
            return false;
        };
        self.select(crate::app::screen::TableKind::Etcd, id);
        true
    }
}
