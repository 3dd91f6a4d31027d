//! A whole cluster's delete plan for the event loop, read off the UI thread with
//! `prepare_delete` (the function `taloscope delete` calls); the approved delete runs on the
//! console's one runner (`run_operation`).
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::run::Console;
use crate::app::action::AppEvent;
use crate::app::actions::ActionUpdate;
use crate::cluster_lifecycle::{DeleteSources, prepare_delete};
use crate::discovery::Discovery;

/// Reading the create journal, the provider's VMs and the Lease.
const PLAN_BOUND: Duration = Duration::from_secs(60);

fn send(app: &mpsc::Sender<AppEvent>, update: ActionUpdate) -> impl Future<Output = ()> {
    let app = app.clone();
    async move {
        let _ = app.send(AppEvent::Action(Box::new(update))).await;
    }
}

/// Reads the delete plan of `cluster`; it comes back as `ActionUpdate::DeletePlanned`.
pub(super) fn plan(console: &Console, cluster: String, app_tx: &mpsc::Sender<AppEvent>) {
    let state = &console.state;
    let config = Arc::clone(&state.provision.config);
    let one_env = Arc::clone(&state.provision.one_env);
    let discovery = Discovery {
        clusters: state.clusters.clone(),
        kubeconfig: state.provision.kubeconfig.clone(),
        ..Discovery::default()
    };
    let state_dir = console.paths.state_dir.clone();
    let app = app_tx.clone();
    tokio::spawn(async move {
        let sources = DeleteSources {
            config: &config,
            discovery: &discovery,
            one_env: &one_env,
            state_dir: &state_dir,
        };
        let read = tokio::time::timeout(PLAN_BOUND, prepare_delete(&sources, &cluster, &[]))
            .await
            .unwrap_or_else(|_| Err(format!("the plan was not read within {PLAN_BOUND:?}")))
            .map(|p| (p.plan, p.warnings));
        send(
            &app,
            ActionUpdate::DeletePlanned {
                cluster,
                plan: read,
            },
        )
        .await;
    });
}
