//! What the Talos and Kubernetes upgrades read off the event loop: the Talos releases of each
//! discovered cluster, learned as `taloscope upgrade` learns them (its mirrors, the registry,
//! the built-in table when none answers), each sent to the Talos plan screen and the cluster
//! plan screen (its CAPI-way upgrade) as their news; the
//! removed-API count of a Kubernetes plan (its screen's task and news); the journals of
//! rollouts that did not end.
use std::path::Path;

use tokio::sync::mpsc;

use crate::app::action::{Action, AppEvent};
use crate::app::actions::ProgressNews;
use crate::app::message::Message;
use crate::app::state::AppState;
use crate::rollout::RolloutJournal;
use crate::upgrade::kubernetes::{KubernetesUpgradePlan, read_removed};
use crate::upgrade::{ReleaseLookup, ReleasesLearned};
use crate::views::cluster_plan::NAME as CLUSTER_PLAN;
use crate::views::upgrade_plan::{KUBE_PLAN, RemovedApisCounted, TALOS_PLAN};

/// Learns the releases of every discovered cluster in a task of its own (the listing is cached
/// in `state_dir`, so the clusters after the first usually read the cache).
pub(super) fn learn_releases(state: &AppState, state_dir: &Path, app_tx: &mpsc::Sender<AppEvent>) {
    let config = &state.provision.config;
    for cluster in &state.clusters {
        let lookup = ReleaseLookup::for_cluster(config, Some(&cluster.name), state_dir, false);
        let (cluster, app) = (cluster.name.clone(), app_tx.clone());
        tokio::spawn(async move {
            let learned = lookup.learn().await;
            let news = ReleasesLearned { cluster, learned };
            super::tell_screen(&app, CLUSTER_PLAN, news.clone()).await;
            super::tell_screen(&app, TALOS_PLAN, news).await;
        });
    }
}

/// The unfinished rollout journals of the discovered clusters, read once at
/// startup so the console shows them and offers to resume; a journal that
/// cannot be read is said on the message line.
pub(super) fn journal_actions(state: &AppState, dir: &Path) -> Vec<Action> {
    state
        .clusters
        .iter()
        .filter_map(|c| match RolloutJournal::load_unfinished(dir, &c.name) {
            Ok(Some(journal)) => {
                let news = ProgressNews::Journal(Box::new(journal.summary()));
                Some(Action::Event(news.told()))
            }
            Ok(None) => None,
            Err(e) => Some(Action::Notify(Message::error(e.to_string()))),
        })
        .collect()
}

/// Counts the objects stored in API versions `plan`'s target removes, off
/// the event loop; the answer comes back as the Kubernetes plan screen's news.
pub(super) fn count_removed(
    state: &AppState,
    plan: KubernetesUpgradePlan,
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let connecting = super::connect(state, &plan.cluster);
    super::answer(app_tx, KUBE_PLAN, async move {
        let (result, flags) = match connecting.await {
            Ok(observer) => read_removed(&observer, &plan).await,
            Err(e) => (Err(e.clone()), Err(e)),
        };
        RemovedApisCounted {
            cluster: plan.cluster.clone(),
            from: plan.from.to_string(),
            target: plan.target.to_string(),
            result,
            flags,
        }
    });
}
