//! Provisions on the shell's side: `p` / `:provision` opening the wizard (`views::provision`)
//! or the provision running there, and `:provisions` showing a provision's VMs on the one
//! progress screen (`views::progress`). Pure.
use super::action::Effect;
use super::actions::ProgressNews;
use super::message::Message;
use super::screen::{Pane, Screen};
use super::screens::ScreenName;
use super::state::AppState;
use crate::operation::OperationKind;
use crate::operation::progress::OperationProgress;

/// `p` / `:provision`: the wizard (`views::provision`, its screen `wizard`) for the cluster on
/// screen (or selected on the fleet or the discovery list); the progress of its provision
/// instead while one runs there.
pub fn open(state: &mut AppState, wizard: ScreenName) -> Vec<Effect> {
    let selected = |table| super::tables::selected_key(state, table);
    let name = (state.cluster_on_screen().map(str::to_string))
        .or_else(|| state.active_table().and_then(selected));
    let Some(cluster) = name.filter(|n| state.clusters.iter().any(|c| &c.name == n)) else {
        state.message = Some(Message::warn(
            "provision: choose a cluster first (:ctx NAME)",
        ));
        return Vec::new();
    };
    if let Some(progress) = provision_of(state, &cluster).filter(|p| p.running()) {
        state.message = Some(Message::info(format!(
            "a provision of {} is running; its VMs are shown",
            progress.cluster
        )));
        return show_progress(state, cluster);
    }
    let effects = super::shell::open_with(state, wizard, vec![wizard.into(), cluster.clone()]);
    if state.screen == Screen::Module(wizard) {
        state.current = Some(cluster);
    }
    effects
}

/// The progress on the one progress screen when it is a provision of `cluster` (a run names
/// it by its key in taloscope's config).
fn provision_of<'a>(state: &'a AppState, cluster: &str) -> Option<&'a OperationProgress> {
    let key = state
        .clusters
        .iter()
        .find(|c| c.name == cluster)
        .map(|c| crate::provision::cluster::config_key(&state.provision.config, c));
    state.progress().filter(|p| {
        p.kind == OperationKind::Provision
            && (p.cluster == cluster || Some(&p.cluster) == key.as_ref())
    })
}

/// The one progress screen, for `cluster`; Esc leads back to its nodes.
fn show_progress(state: &mut AppState, cluster: String) -> Vec<Effect> {
    state.current = Some(cluster);
    let back = Screen::Cluster(Pane::Nodes);
    super::shell::show_progress(state, ProgressNews::Shown { back })
}

/// `:provisions`: the VMs of the cluster in use, on the progress of its provision.
pub fn show(state: &mut AppState) -> Vec<Effect> {
    let cluster = state.current.clone().unwrap_or_default();
    if provision_of(state, &cluster).is_some() {
        return show_progress(state, cluster);
    }
    state.message = Some(Message::info(format!(
        "no provision of {cluster:?} in this console; p opens the wizard"
    )));
    Vec::new()
}
