//! A CAPI scale's plan for the event loop, read off the UI thread with `prepare_scale` (the
//! function `taloscope scale` calls), and the connection to both sides of the cluster that the
//! plan and the run (on the console's one runner, `run_operation`) share.
use std::pin::Pin;
use std::time::Duration;

use tokio::sync::mpsc;

use super::run::Console;
use crate::app::action::AppEvent;
use crate::app::actions::ActionUpdate;
use crate::app::capi_scale::CapiScaleAsk;
use crate::capi_scale::{ScaleSources, prepare_scale};
use crate::fleet::CollectOptions;

/// Reading both sides for a plan.
const PLAN_BOUND: Duration = Duration::from_secs(60);

fn send(app: &mpsc::Sender<AppEvent>, update: ActionUpdate) -> impl Future<Output = ()> {
    let app = app.clone();
    async move {
        let _ = app.send(AppEvent::Action(Box::new(update))).await;
    }
}

/// Both sides of a cluster being connected to.
pub(super) type Connecting = Pin<Box<dyn Future<Output = Result<ScaleSources, String>> + Send>>;

/// What connecting to both sides of `cluster` needs, taken from the console's state.
pub(super) fn connect(console: &Console, cluster: &str) -> Result<Connecting, String> {
    let state = &console.state;
    let found = state
        .clusters
        .iter()
        .find(|c| c.name == cluster)
        .cloned()
        .ok_or_else(|| format!("cluster {cluster} is no longer discovered"))?;
    let owner = state
        .fleet
        .capi
        .owner(cluster)
        .cloned()
        .ok_or_else(|| format!("{cluster} is no longer owned by Cluster API"))?;
    let kubeconfig = state.provision.kubeconfig.clone().ok_or_else(|| {
        "no kubeconfig was read: the management cluster cannot be reached".to_string()
    })?;
    Ok(Box::pin(async move {
        ScaleSources::connect(&found, &owner, &kubeconfig, CollectOptions::default()).await
    }))
}

/// Reads the plan of `ask`; it comes back as `ActionUpdate::CapiScalePlanned`.
pub(super) fn plan(console: &Console, ask: CapiScaleAsk, app_tx: &mpsc::Sender<AppEvent>) {
    let sources = connect(console, &ask.cluster);
    let me = console.state.identity.clone();
    let app = app_tx.clone();
    tokio::spawn(async move {
        let read = async {
            let sources = sources?.await?;
            prepare_scale(&sources, &ask.request, &me)
                .await
                .map_err(|e| e.to_string())
        };
        let read = tokio::time::timeout(PLAN_BOUND, read)
            .await
            .unwrap_or_else(|_| Err(format!("the plan was not read within {PLAN_BOUND:?}")));
        let cluster = ask.cluster;
        let read = Box::new(read);
        send(&app, ActionUpdate::CapiScalePlanned { cluster, read }).await;
    });
}
