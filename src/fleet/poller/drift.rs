//! The nodes pane's DRIFT column: the configuration of every node of the cluster on screen
//! (the app names them, `PollerCommand::ReadConfigDrift`) read and compared role by role, as
//! `config drift` does (`machine_config::read_cluster_drift`), each node's mark sent in one
//! report. A context without os:admin gets an empty report: nothing to show, not an error.
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::fleet::live::FleetEvent;
use crate::fleet::round::{Closed, emit};
use crate::machine_config::{DriftTarget, read_cluster_drift};
use crate::talos::TalosClient;

/// How often the configurations are read again while the cluster is on screen, beside the
/// reads the app asks for (first show, after a configuration change): a machine
/// configuration changes through an operator's apply, seldom and never on its own.
pub(super) const DRIFT_REREAD: Duration = Duration::from_secs(15 * 60);

/// Reads `targets` once and reports each node's mark, by address.
pub(super) async fn read_drift(
    client: TalosClient,
    cluster: String,
    targets: Vec<DriftTarget>,
    tx: mpsc::Sender<FleetEvent>,
) -> Result<(), Closed> {
    let marks = match read_cluster_drift(&client, &targets).await {
        Ok(drift) => (targets.iter())
            .map(|t| (t.address.clone(), drift.mark(&t.name)))
            .collect(),
        // Its one error: the context lacks os:admin (a reader). Nothing to show.
        Err(e) => {
            tracing::debug!(cluster = %cluster, "configuration drift not read: {e}");
            Vec::new()
        }
    };
    let event = FleetEvent::ConfigDrift {
        cluster,
        marks,
        at: Instant::now(),
    };
    emit(&tx, event).await
}
