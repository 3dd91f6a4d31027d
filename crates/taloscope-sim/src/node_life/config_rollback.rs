//! A configuration applied in `TRY` mode going back by itself: when its timer fires and no
//! later apply confirmed it, the node runs the configuration it ran before again
//! (siderolabs/talos internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_runtime.go
//! `RollbackToConfigAfter`: `time.AfterFunc(timeout, SetConfig(previous))`), on the sim's clock.
use std::sync::Arc;
use std::time::Duration;

use crate::model::core::Core;
use crate::model::state::SimNode;

/// Starts the timer of the try `id` on `node`.
pub(crate) fn spawn(core: &Arc<Core>, node: &Arc<SimNode>, id: u64, timeout: Duration) {
    let (core, node) = (core.clone(), node.clone());
    tokio::spawn(async move {
        core.clock.sleep(timeout.as_secs_f64()).await;
        if *core.stop.borrow() {
            return;
        }
        roll_back(&core, &node, id);
    });
}

/// The try `id` is rolled back unless it was confirmed, replaced or ended by a reboot.
fn roll_back(core: &Arc<Core>, node: &Arc<SimNode>, id: u64) {
    let (tried, previous) = {
        let mut m = node.lock();
        if m.config_try.as_ref().map(|t| t.id) != Some(id) {
            return;
        }
        let Some(t) = m.config_try.take() else {
            return;
        };
        let tried = m.applied_config.take();
        m.applied_config = t.previous.clone();
        (tried, t.previous)
    };
    tracing::info!(node = node.name(), "rolling back the configuration");
    let before = tried.unwrap_or_default();
    let after = match previous {
        Some(p) => p,
        None => crate::model::kube_components::current_config(node).into_bytes(),
    };
    super::component_restart::apply_config(core, node, &before, &after);
}
