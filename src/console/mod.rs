//! The interactive console's IO side: the event loop that feeds the terminal
//! and app events into app's pure update step, and the effect runner that
//! starts log streams, health checks and the provision wizard's reads, and every
//! operation on its one runner (`run_operation`: node and etcd actions, CAPI fixes, cluster
//! creates and deletes, CAPI scales, the Talos, Kubernetes and CAPI-way upgrades, provisions
//! and VM terminates). Sits above `app` and `views`.
mod follow_provisions;
pub mod run;
mod run_actions;
mod run_config;
pub mod run_create;
mod run_health;
mod run_logs;
mod run_node_read;
mod run_operation;
mod run_provision_wizard;
mod run_upgrade_plan;
// The plans of a delete, a CAPI scale and a CAPI-way upgrade, read for their plan screens.
mod read_plans;

use std::any::Any;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::app::action::AppEvent;
use crate::app::screens::{ScreenName, ScreenNews};
use crate::app::state::AppState;
use crate::discovery::Cluster;
use crate::talos::{ClientOptions, TalosClient};
use crate::upgrade::RunOptions;
use crate::upgrade::observe::ClusterObserver;

/// The discovered cluster `name`, or that it is gone.
fn cluster(state: &AppState, name: &str) -> Result<Cluster, String> {
    let found = state.clusters.iter().find(|c| c.name == name).cloned();
    found.ok_or_else(|| format!("cluster {name} is no longer discovered"))
}

/// The discovered cluster `name` and a Talos client on its talosconfig context; the error
/// says that `what` needs the Talos API.
fn talos_of(state: &AppState, name: &str, what: &str) -> Result<(Cluster, TalosClient), String> {
    let cluster = cluster(state, name)?;
    let context = cluster.talos.as_ref().ok_or_else(|| {
        format!("cluster {name} has no talosconfig context: {what} needs the Talos API")
    })?;
    let talos = TalosClient::new(context, ClientOptions::default())
        .map_err(|e| format!("cluster {name}: {e}"))?;
    Ok((cluster, talos))
}

/// Connects to the discovered cluster `name` as the rollouts do: its talosconfig context, its
/// kube context through the operator's kubeconfig.
fn connect(
    state: &AppState,
    name: &str,
) -> impl Future<Output = Result<ClusterObserver, String>> + Send + 'static {
    let cluster = cluster(state, name);
    let options = RunOptions {
        kubeconfig: state.provision.kubeconfig.clone(),
        ..RunOptions::default()
    };
    async move { crate::upgrade::launch::connect(&cluster?, &options).await }
}

/// Sends `news` to the screen `screen`; false once the console is gone.
async fn tell_screen<N: Any + Send + Sync>(
    app: &mpsc::Sender<AppEvent>,
    screen: ScreenName,
    news: N,
) -> bool {
    let news = AppEvent::Screen(ScreenNews::new(screen, news));
    app.send(news).await.is_ok()
}

/// Reads `read` in a task of its own, off the event loop; what it gives is the news of the
/// screen `screen`.
fn answer<N: Any + Send + Sync>(
    app: &mpsc::Sender<AppEvent>,
    screen: ScreenName,
    read: impl Future<Output = N> + Send + 'static,
) {
    let app = app.clone();
    tokio::spawn(async move { tell_screen(&app, screen, read.await).await });
}

/// `read` within `bound`, or why not (`what` was not read).
async fn within<T>(
    bound: Duration,
    what: &str,
    read: impl Future<Output = Result<T, String>>,
) -> Result<T, String> {
    (tokio::time::timeout(bound, read).await)
        .unwrap_or_else(|_| Err(format!("{what} was not read within {bound:?}")))
}

/// The IO tasks of a screen while it is on top (a log view's streams, the resources screen's
/// reads); stopping them, or dropping them, aborts them.
#[derive(Default)]
pub struct Following {
    /// The view they serve, when the screen tells its views apart.
    view: Option<u64>,
    tasks: Vec<JoinHandle<()>>,
}

impl Following {
    fn stop(&mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
        self.view = None;
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        self.stop();
    }
}
