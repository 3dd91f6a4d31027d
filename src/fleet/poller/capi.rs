//! The poller's Cluster API task: reads the management clusters among the kube contexts at
//! the background interval (or at once on a refresh of every cluster) and reports what they
//! say only when it changed, so an idle console stays idle.
use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::config::Kubeconfig;
use tokio::sync::{Notify, mpsc};

use crate::capi::{CapiView, candidate_contexts, read_view};
use crate::discovery::Cluster;
use crate::fleet::FleetEvent;

pub(super) async fn watch_capi(
    clusters: Vec<Cluster>,
    kubeconfig: Option<Arc<Kubeconfig>>,
    interval: Duration,
    refresh: Arc<Notify>,
    events: mpsc::Sender<FleetEvent>,
) {
    let Some(kubeconfig) = kubeconfig else {
        return;
    };
    if candidate_contexts(&clusters).is_empty() {
        return;
    }
    let mut last = CapiView::default();
    loop {
        let view = read_view(&kubeconfig, &clusters).await;
        if view != last {
            last = view.clone();
            let event = FleetEvent::Capi {
                view: Box::new(view),
                at: Instant::now(),
            };
            if events.send(event).await.is_err() {
                return;
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = refresh.notified() => {}
        }
    }
}
