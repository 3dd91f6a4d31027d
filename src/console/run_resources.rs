//! The node resources screen's IO (its `ResourcesTask`): one task reading the node with
//! `node_resources::read_node` (the reads `taloscope node info` makes) every 2 s while the
//! screen is on top, each read sent to the screen as its news; the screen's Stop, or another
//! Follow, aborts it. The task never touches UI state.
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;

use crate::app::action::{Action, AppEvent};
use crate::app::message::Message;
use crate::app::state::AppState;
use crate::discovery::Cluster;
use crate::node_resources::{DEFAULT_SAMPLE_SPAN, read_node};
use crate::talos::{ClientOptions, TalosClient};
use crate::views::resources::{NAME, REFRESH, ResourcesNews, ResourcesRequest, ResourcesTask};

/// Starts reading a node (stopping the reads before), or stops.
pub(super) fn perform(
    reads: &mut super::Following,
    state: &AppState,
    task: &ResourcesTask,
    app_tx: &mpsc::Sender<AppEvent>,
) -> Option<Action> {
    reads.stop();
    let ResourcesTask::Follow(request) = task else {
        return None;
    };
    match start(state, request.clone(), app_tx) {
        Ok(task) => {
            reads.tasks.push(task);
            None
        }
        Err(why) => Some(Action::Notify(Message::error(why))),
    }
}

/// The discovered cluster `name` and a Talos client on its talosconfig context; the error
/// says that `what` needs the Talos API.
pub(super) fn talos_of(
    state: &AppState,
    name: &str,
    what: &str,
) -> Result<(Cluster, TalosClient), String> {
    let cluster = super::cluster(state, name)?;
    let context = cluster.talos.as_ref().ok_or_else(|| {
        format!("cluster {name} has no talosconfig context: {what} needs the Talos API")
    })?;
    let talos = TalosClient::new(context, ClientOptions::default())
        .map_err(|e| format!("cluster {name}: {e}"))?;
    Ok((cluster, talos))
}

fn start(
    state: &AppState,
    request: ResourcesRequest,
    app_tx: &mpsc::Sender<AppEvent>,
) -> Result<JoinHandle<()>, String> {
    let (cluster, talos) = talos_of(state, &request.cluster, "a node's resources")?;
    let kubeconfig = state.provision.kubeconfig.clone();
    let tx = app_tx.clone();
    Ok(tokio::spawn(async move {
        // The kernel version and the containers' restarts come from Kubernetes; without it
        // they stay unknown and the rest is read.
        let kube = match crate::fleet::kube_client_for(&cluster, kubeconfig.as_ref()).await {
            Some(Ok(client)) => Some(client),
            _ => None,
        };
        let mut ticks = tokio::time::interval(REFRESH);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let read = read_node(&talos, kube.as_ref(), &request.node, DEFAULT_SAMPLE_SPAN).await;
            let news = ResourcesNews {
                reading: request.reading,
                read: read.map_err(|e| crate::error_chain(&e)),
            };
            if !super::tell_screen(&tx, NAME, news).await {
                return;
            }
        }
    }))
}
