//! The machine configuration screen's IO (its `ConfigTask`): one read of the node's running
//! configuration with `machine_config::read_node_config` (the read `taloscope config show`
//! makes, secrets redacted), sent to the screen as its news. The task never touches UI state.
use tokio::sync::mpsc;

use crate::app::action::{Action, AppEvent};
use crate::app::message::Message;
use crate::app::screens::ScreenNews;
use crate::app::state::AppState;
use crate::machine_config::read_node_config;
use crate::views::config::{ConfigNews, ConfigTask, NAME};

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
    let tx = app_tx.clone();
    tokio::spawn(async move {
        let read = read_node_config(&talos, &request.node, &request.address, false).await;
        let news = ConfigNews {
            reading: request.reading,
            read: read.map_err(|e| crate::error_chain(&e)),
        };
        let _ = tx.send(AppEvent::Screen(ScreenNews::new(NAME, news))).await;
    });
    None
}
