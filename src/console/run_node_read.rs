//! The IO of the screens of one node's reading (`views::node_read`, their `NodeTask`s): the
//! node read once, or every few seconds while the screen is on top, each read sent to the
//! screen as its `NodeNews`; the screen's Stop, or its next Follow, aborts the reads. The
//! machine config screen reads what `taloscope config show` reads (`read_node_config`,
//! secrets redacted), the resources screen what `taloscope node info` reads (`read_node`).
//! The tasks never touch UI state.

use tokio::sync::mpsc;
use tokio::time::MissedTickBehavior;

use crate::app::action::{Action, AppEvent};
use crate::app::message::Message;
use crate::app::screens::{ScreenName, ScreenNews};
use crate::app::state::AppState;
use crate::kube::KubeClient;
use crate::machine_config::read_node_config;
use crate::node_resources::{DEFAULT_SAMPLE_SPAN, read_node};
use crate::talos::TalosClient;
use crate::views::node_read::{NodeNews, NodeRequest, NodeTask};
use crate::views::{config, resources};

/// Starts what the screen `screen` asks: one read, reads every so often (stopping those
/// before), or their stop.
pub(super) fn perform(
    reads: &mut super::Following,
    state: &AppState,
    (screen, task): (ScreenName, &NodeTask),
    app_tx: &mpsc::Sender<AppEvent>,
) -> Option<Action> {
    let (request, every) = match task {
        NodeTask::Read(request) => (request, None),
        NodeTask::Follow(request, every) => {
            reads.stop();
            (request, Some(*every))
        }
        NodeTask::Stop => {
            reads.stop();
            return None;
        }
    };
    let what = match screen {
        config::NAME => "a machine config",
        _ => "a node's resources",
    };
    let (cluster, talos) = match super::talos_of(state, &request.cluster, what) {
        Ok(found) => found,
        Err(why) => return Some(Action::Notify(Message::error(why))),
    };
    let (kubeconfig, request, tx) = (
        state.provision.kubeconfig.clone(),
        request.clone(),
        app_tx.clone(),
    );
    let reading = tokio::spawn(async move {
        // The kernel version and the containers' restarts come from Kubernetes; without it
        // they stay unknown and the rest is read.
        let kube = match screen {
            resources::NAME => crate::fleet::kube_client_for(&cluster, kubeconfig.as_ref()).await,
            _ => None,
        };
        let kube = kube.and_then(Result::ok);
        let mut ticks = every.map(tokio::time::interval);
        loop {
            if let Some(ticks) = ticks.as_mut() {
                ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
                ticks.tick().await;
            }
            let news = read(screen, &talos, kube.as_ref(), &request).await;
            if tx.send(AppEvent::Screen(news)).await.is_err() || every.is_none() {
                return;
            }
        }
    });
    if every.is_some() {
        reads.tasks.push(reading);
    }
    None
}

/// One read of the node, as the news of the screen `screen`.
async fn read(
    screen: ScreenName,
    talos: &TalosClient,
    kube: Option<&KubeClient>,
    request: &NodeRequest,
) -> ScreenNews {
    let (node, reading) = (&request.node, request.reading);
    match screen {
        config::NAME => {
            let read = read_node_config(talos, &node.name, &node.address, false).await;
            news(screen, reading, read)
        }
        _ => news(
            screen,
            reading,
            read_node(talos, kube, node, DEFAULT_SAMPLE_SPAN).await,
        ),
    }
}

fn news<T: Send + Sync + 'static>(
    screen: ScreenName,
    reading: u64,
    read: Result<T, impl std::error::Error>,
) -> ScreenNews {
    let read = read.map_err(|e| crate::error_chain(&e));
    ScreenNews::new(screen, NodeNews { reading, read })
}
