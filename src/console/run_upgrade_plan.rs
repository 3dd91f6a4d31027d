//! What the Talos and Kubernetes plan screens read off the event loop: the Talos releases of
//! each discovered cluster, learned as `taloscope upgrade` learns them (its mirrors, the
//! registry, the built-in table when none answers), each sent back as `AppEvent::Releases`.
use std::path::Path;

use tokio::sync::mpsc;

use crate::app::action::AppEvent;
use crate::app::state::AppState;
use crate::upgrade::ReleaseLookup;

/// Learns the releases of every discovered cluster in a task of its own (the listing is cached
/// in `state_dir`, so the clusters after the first usually read the cache).
pub(super) fn learn_releases(state: &AppState, state_dir: &Path, app_tx: &mpsc::Sender<AppEvent>) {
    let config = &state.provision.config;
    for cluster in &state.clusters {
        let lookup = ReleaseLookup::for_cluster(config, Some(&cluster.name), state_dir, false);
        let (name, app) = (cluster.name.clone(), app_tx.clone());
        tokio::spawn(async move {
            let learned = lookup.learn().await;
            let _ = app.send(AppEvent::Releases(name, Box::new(learned))).await;
        });
    }
}
