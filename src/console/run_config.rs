//! The machine configuration screen's IO: one read of the node's running configuration with
//! `machine_config::read_node_config` (its `ConfigTask`: the read `taloscope config show`
//! makes, secrets redacted), and the patch wizard's plan (its `PatchTask`: the patch file
//! read and validated, then `plan_config_patch` on a fresh connection, as `taloscope config
//! patch --plan` reads it), each sent to the screen as its news. The tasks never touch UI
//! state.
use std::time::Duration;

use tokio::sync::mpsc;

use crate::app::action::{Action, AppEvent};
use crate::app::message::Message;
use crate::app::state::AppState;
use crate::cluster_config::{ConfigPatch, PatchTarget};
use crate::machine_config::read_node_config;
use crate::operation::config_patch::{ConfigPatchRequest, plan_config_patch};
use crate::views::config::{ConfigNews, ConfigTask, NAME, PatchNews, PatchTask};

/// Reading a patch's plan: the connection, every target node's configuration and dry run.
const PLAN_BOUND: Duration = Duration::from_secs(60);

/// Starts the read; a cluster that cannot be reached is said on the message line.
pub(super) fn perform(
    state: &AppState,
    task: &ConfigTask,
    app_tx: &mpsc::Sender<AppEvent>,
) -> Option<Action> {
    let request = task.0.clone();
    let talos = match super::run_resources::talos_of(state, &request.cluster, "a machine config") {
        Ok((_, talos)) => talos,
        Err(why) => return Some(Action::Notify(Message::error(why))),
    };
    super::answer(app_tx, NAME, async move {
        let read = read_node_config(&talos, &request.node, &request.address, false).await;
        ConfigNews {
            reading: request.reading,
            read: read.map_err(|e| crate::error_chain(&e)),
        }
    });
    None
}

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
    super::answer(app_tx, NAME, async move {
        PatchNews {
            asked,
            read: super::within(PLAN_BOUND, "the plan", read).await,
        }
    });
}
