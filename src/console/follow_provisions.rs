//! Provisions a killed console left unfinished: the provision journals of the discovered
//! clusters read once at startup (`provision::follow::left_in_journals`), their unfinished VMs
//! followed again (reading only, so no approval: `provision::follow`), told as one provision's
//! progress whose VMs are its steps; failed VMs shown there too, offering their terminate.
use std::path::Path;

use tokio::sync::mpsc;

use super::run_provision_wizard::provider;
use crate::app::action::progress;
use crate::app::action::{Action, AppEvent};
use crate::app::actions::ProgressNews;
use crate::app::message::Message;
use crate::app::provision::JournalVms;
use crate::app::state::AppState;
use crate::operation::OperationKind;
use crate::operation::progress::ProgressEvent;
use crate::operation::runner_events::ProvisionSteps;
use crate::provision::follow::{FollowGroup, left_in_journals};

/// Every discovered cluster's provision journal read; the followers of their unfinished VMs
/// started, and the action that puts them and the failed ones on the progress screen.
pub(super) fn startup(state: &AppState, dir: &Path, app: &mpsc::Sender<AppEvent>) -> Vec<Action> {
    let left = left_in_journals(dir, &state.clusters, &state.provision.config);
    let mut actions: Vec<Action> = (left.errors.into_iter())
        .map(|e| Action::Notify(Message::error(e)))
        .collect();
    if left.vms.is_empty() {
        return actions;
    }
    if !left.groups.is_empty() {
        let names = left
            .vms
            .iter()
            .map(|(_, e)| e.progress.name.clone())
            .collect();
        follow_all(state, dir, left.groups, names, app.clone());
    }
    let (clusters, vms) = (left.clusters, left.vms);
    let from_journals = Box::new(JournalVms { clusters, vms });
    actions.push(Action::Event(
        ProgressNews::Provisions(from_journals).told(),
    ));
    actions
}

/// Every group followed at once, each VM (of all `names`) a step of the one progress, then
/// how they ended.
fn follow_all(
    state: &AppState,
    dir: &Path,
    groups: Vec<FollowGroup>,
    names: Vec<String>,
    app: mpsc::Sender<AppEvent>,
) {
    let follows: Vec<_> = (groups.into_iter())
        .map(|group| {
            let (config, one_env) = (&state.provision.config, &state.provision.one_env);
            let provider = provider(config, one_env, &group.provider);
            let mut steps = ProvisionSteps::new(&group.key, &group.provider, names.clone());
            let (events, mut rx) = mpsc::channel(64);
            let kubeconfig = state.provision.kubeconfig.clone();
            let run = tokio::spawn(group.follow(provider, kubeconfig, dir.to_path_buf(), events));
            let app = app.clone();
            async move {
                while let Some(event) = rx.recv().await {
                    for told in steps.events(&event) {
                        let _ = app.send(progress(OperationKind::Provision, told)).await;
                    }
                }
                (run.await).unwrap_or_else(|e| {
                    Err(format!("following the journal's VMs ended abnormally: {e}"))
                })
            }
        })
        .collect();
    tokio::spawn(async move {
        let results = futures::future::join_all(follows).await;
        let failed: Vec<String> = results.iter().filter_map(|r| r.clone().err()).collect();
        let end = if failed.is_empty() {
            let joined: Vec<String> = results.into_iter().filter_map(Result::ok).collect();
            Ok(joined.join("; "))
        } else {
            Err(failed.join("; "))
        };
        let end = ProgressEvent::Finished(end);
        let _ = app.send(progress(OperationKind::Provision, end)).await;
    });
}
