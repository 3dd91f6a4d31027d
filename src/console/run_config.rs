//! The machine configuration screen's patch wizard's IO (its `PatchTask`): the patch file
//! read and validated, then `plan_config_patch` on a fresh connection, as `taloscope config
//! patch --plan` reads it, sent to the screen as its news (the configuration itself is read
//! as every node reading is, `run_node_read`). The task never touches UI state.
use std::time::Duration;

use tokio::sync::mpsc;

use crate::app::action::AppEvent;
use crate::app::state::AppState;
use crate::cluster_config::{ConfigPatch, PatchTarget};
use crate::operation::config_patch::{ConfigPatchRequest, plan_config_patch};
use crate::views::config::{PATCH, PatchNews, PatchTask};

/// Reading a patch's plan: the connection, every target node's configuration and dry run.
const PLAN_BOUND: Duration = Duration::from_secs(60);

/// Reads the patch file the wizard names (a bad one is named in the error), connects to its
/// cluster and plans the patch from each target node's dry run, within [`PLAN_BOUND`].
pub(super) fn plan_patch(state: &AppState, task: PatchTask, app_tx: &mpsc::Sender<AppEvent>) {
    let (connecting, asked) = (super::connect(state, &task.cluster), task.asked);
    let read = async move {
        let patch = ConfigPatch::load(&task.file, PatchTarget::All)
            .map_err(|e| crate::printable::line(&e.to_string()))?;
        let observer = connecting.await?;
        let status = observer.status().await;
        let request = ConfigPatchRequest {
            patches: vec![patch],
            role: task.role,
            nodes: task.nodes.clone(),
            mode: task.mode,
            try_timeout: task.try_timeout,
        };
        plan_config_patch(&observer.talos, &status, &request)
            .await
            .map_err(|e| crate::printable::line(&e.to_string()))
    };
    super::answer(app_tx, PATCH, async move {
        PatchNews {
            asked,
            read: super::within(PLAN_BOUND, "the plan", read).await,
        }
    });
}
