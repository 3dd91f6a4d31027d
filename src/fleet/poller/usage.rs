//! The nodes pane's usage columns: the CPU, memory and fullest volume of the nodes on screen
//! (the app names them, `PollerCommand::ReadUsage`), read once per focused interval with the
//! client's bounded concurrency, each node reported as it answers. The CPU share is measured
//! between one read's `SystemStat` and the next, so a read costs one `SystemStat`, one
//! `Memory` and one `Mounts` call per node and no wait.
use std::collections::HashMap;
use std::time::Instant;

use futures::StreamExt;
use tokio::sync::mpsc;

use crate::fleet::live::FleetEvent;
use crate::fleet::round::{Closed, emit};
use crate::node_resources::{NodeIdentity, read_usage_since};
use crate::talos::TalosClient;
use crate::talos::machine_reads::SystemStatSample;

/// Each node's `SystemStat` of the read before, by address.
pub(super) type Samples = HashMap<String, SystemStatSample>;

/// Reads `nodes` once, `concurrency` at a time, sending each as a `FleetEvent::NodeUsage`;
/// returns the samples the next read measures CPU against (those of `nodes` only, so a node
/// that left the screen starts afresh).
pub(super) async fn read_nodes(
    client: TalosClient,
    cluster: String,
    nodes: Vec<NodeIdentity>,
    before: Samples,
    concurrency: usize,
    tx: mpsc::Sender<FleetEvent>,
) -> Result<Samples, Closed> {
    let reads = futures::stream::iter(nodes)
        .map(|id| {
            let client = &client;
            let previous = before.get(&id.address);
            async move {
                let (usage, sample) = read_usage_since(client, &id, previous).await;
                (id.address, usage, sample)
            }
        })
        .buffer_unordered(concurrency.max(1));
    let mut reads = std::pin::pin!(reads);
    let mut after = Samples::new();
    while let Some((address, usage, sample)) = reads.next().await {
        if let Some(sample) = sample {
            after.insert(address, sample);
        }
        let event = FleetEvent::NodeUsage {
            cluster: cluster.clone(),
            usage,
            at: Instant::now(),
        };
        emit(&tx, event).await?;
    }
    Ok(after)
}
