//! The nodes pane's usage columns: the CPU, memory and fullest volume of the nodes on screen
//! (the app names them, `PollerCommand::ReadUsage`). Each node costs one call per focused
//! interval, counted from when it came on screen, and a Refresh reads them all at once: the
//! call asks for the measure whose turn it is (`node_resources::rolling`), so the columns keep
//! every figure while the nodes answer one call each. A read waits for the cluster's poll
//! round under way (the nodes and their state first), uses the client's bounded concurrency
//! and reports each node as it answers.
use std::collections::HashMap;
use std::time::{Duration, Instant as StdInstant};

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::fleet::live::FleetEvent;
use crate::fleet::round::{Closed, emit};
use crate::node_resources::{NodeIdentity, RollingUsage, read_next_measure};
use crate::talos::TalosClient;

/// What the reads so far learned of each node, by address.
pub(super) type Held = HashMap<String, RollingUsage>;

/// The nodes on screen, when each was last asked, and what their reads learned. A node that
/// leaves the screen is forgotten: back on screen, it starts afresh.
#[derive(Debug, Default)]
pub(super) struct UsageSchedule {
    nodes: Vec<NodeIdentity>,
    held: Held,
    asked_at: HashMap<String, Instant>,
    /// A Refresh asked for every node at once.
    refresh: bool,
}

impl UsageSchedule {
    /// The nodes on screen from now on (none: stop reading).
    pub(super) fn set_nodes(&mut self, nodes: Vec<NodeIdentity>) {
        let on_screen = |address: &String| nodes.iter().any(|n| &n.address == address);
        self.held.retain(|address, _| on_screen(address));
        self.asked_at.retain(|address, _| on_screen(address));
        self.refresh &= !nodes.is_empty();
        self.nodes = nodes;
    }

    /// Reads every node on screen at once, whatever its pace.
    pub(super) fn refresh(&mut self) {
        self.refresh = !self.nodes.is_empty();
    }

    /// When the next read is due (a node not asked yet: `now`); `None` without nodes.
    pub(super) fn due(&self, now: Instant, every: Duration) -> Option<Instant> {
        if self.refresh {
            return Some(now);
        }
        let node_due = |n: &NodeIdentity| self.asked_at.get(&n.address).map_or(now, |t| *t + every);
        self.nodes.iter().map(node_due).min()
    }

    /// The nodes due at `now` (all of them after a Refresh), marked asked, with what their
    /// reads learned so far.
    pub(super) fn take_due(&mut self, now: Instant, every: Duration) -> (Vec<NodeIdentity>, Held) {
        let all = std::mem::take(&mut self.refresh);
        let due: Vec<NodeIdentity> = (self.nodes.iter())
            .filter(|n| {
                all || self
                    .asked_at
                    .get(&n.address)
                    .is_none_or(|t| *t + every <= now)
            })
            .cloned()
            .collect();
        let mut held = Held::new();
        for n in &due {
            self.asked_at.insert(n.address.clone(), now);
            if let Some(h) = self.held.remove(&n.address) {
                held.insert(n.address.clone(), h);
            }
        }
        (due, held)
    }

    /// What a read learned, kept for the nodes still on screen.
    pub(super) fn put_back(&mut self, held: Held) {
        let nodes = &self.nodes;
        let on_screen = |address: &String| nodes.iter().any(|n| &n.address == address);
        self.held
            .extend(held.into_iter().filter(|(address, _)| on_screen(address)));
    }
}

/// Reads `nodes` once, one call each, `concurrency` at a time, sending each as a
/// `FleetEvent::NodeUsage`; returns what the reads learned of them.
pub(super) async fn read_nodes(
    client: TalosClient,
    cluster: String,
    nodes: Vec<NodeIdentity>,
    mut before: Held,
    concurrency: usize,
    tx: mpsc::Sender<FleetEvent>,
) -> Result<Held, Closed> {
    let reads = futures::stream::iter(nodes)
        .map(|id| {
            let client = &client;
            let held = before.remove(&id.address).unwrap_or_default();
            async move {
                let (usage, held) = read_next_measure(client, &id, held).await;
                (id.address, usage, held)
            }
        })
        .buffer_unordered(concurrency.max(1));
    let mut reads = std::pin::pin!(reads);
    let mut after = Held::new();
    while let Some((address, usage, held)) = reads.next().await {
        after.insert(address, held);
        let event = FleetEvent::NodeUsage {
            cluster: cluster.clone(),
            usage,
            at: StdInstant::now(),
        };
        emit(&tx, event).await?;
    }
    Ok(after)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(i: u8) -> NodeIdentity {
        NodeIdentity {
            name: format!("w-{i}"),
            address: format!("127.10.0.{i}"),
            machine_type: "worker".into(),
        }
    }

    const EVERY: Duration = Duration::from_secs(5);

    #[test]
    fn each_node_is_due_once_an_interval_from_when_it_came_on_screen() {
        let mut s = UsageSchedule::default();
        let t0 = Instant::now();
        assert_eq!(s.due(t0, EVERY), None);
        s.set_nodes(vec![node(1), node(2)]);
        assert_eq!(s.due(t0, EVERY), Some(t0));
        let (due, _) = s.take_due(t0, EVERY);
        assert_eq!(due, [node(1), node(2)]);
        assert_eq!(s.due(t0, EVERY), Some(t0 + EVERY));

        // A node scrolled on screen is read at once, the others keep their pace.
        let t1 = t0 + Duration::from_secs(2);
        s.set_nodes(vec![node(2), node(3)]);
        assert_eq!(s.due(t1, EVERY), Some(t1));
        assert_eq!(s.take_due(t1, EVERY).0, [node(3)]);
        assert_eq!(s.due(t1, EVERY), Some(t0 + EVERY));
        assert_eq!(s.take_due(t0 + EVERY, EVERY).0, [node(2)]);
        assert_eq!(s.due(t0 + EVERY, EVERY), Some(t1 + EVERY));
    }

    #[test]
    fn a_refresh_reads_every_node_at_once() {
        let mut s = UsageSchedule::default();
        let t0 = Instant::now();
        s.refresh();
        assert_eq!(s.due(t0, EVERY), None, "nothing on screen: nothing to read");
        s.set_nodes(vec![node(1), node(2)]);
        s.take_due(t0, EVERY);
        s.refresh();
        assert_eq!(s.due(t0, EVERY), Some(t0));
        assert_eq!(s.take_due(t0, EVERY).0, [node(1), node(2)]);
        assert_eq!(s.due(t0, EVERY), Some(t0 + EVERY));
    }

    #[test]
    fn a_node_that_left_the_screen_starts_afresh() {
        let mut s = UsageSchedule::default();
        let t0 = Instant::now();
        s.set_nodes(vec![node(1)]);
        let (_, held) = s.take_due(t0, EVERY);
        assert!(held.is_empty());
        let learned = Held::from([(node(1).address, RollingUsage::default())]);
        s.set_nodes(Vec::new());
        s.put_back(learned.clone());
        s.set_nodes(vec![node(1)]);
        assert_eq!(s.due(t0, EVERY), Some(t0), "asked again at once");
        assert!(s.take_due(t0, EVERY).1.is_empty(), "nothing held");
        s.put_back(learned);
        assert_eq!(s.take_due(t0 + EVERY, EVERY).1.len(), 1);
    }
}
