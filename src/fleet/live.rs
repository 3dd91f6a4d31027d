//! Live fleet data for the console: what pollers report ([`FleetEvent`]) and
//! the model the app's pure update step folds those reports into
//! ([`FleetModel`]). Every report carries the time it was made, so folding is
//! deterministic and ages can be shown without a ticking clock.
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::time::Instant;

use crate::capi::CapiView;
use crate::kube::KubeNode;
use crate::machine_config::DriftMark;
use crate::node_resources::NodeUsage;
use crate::talos::ServiceStatus;

use super::kubernetes::{KubernetesFacts, apply_kube_node, apply_kubernetes};
use super::membership::{Answered, NodePlan, left_the_cluster, still_in_cluster};
use super::status::{ClusterStatus, EtcdReport, NodeStatus};

/// How many recent events are kept per node for the detail view.
pub const EVENTS_PER_NODE: usize = 50;

/// One report from a poller. `cluster` is the cluster's name as discovery
/// gives it; `node` is the node's address (the talosconfig node entry).
#[derive(Debug, Clone)]
pub enum FleetEvent {
    /// A poll round started.
    PollStarted { cluster: String, at: Instant },
    /// The client's role, or why the cluster cannot be asked at all.
    ClusterInfo {
        cluster: String,
        role: String,
        error: Option<String>,
        at: Instant,
    },
    /// One node's Talos-side probe (answered, or with `error` set).
    Node {
        cluster: String,
        node: NodeStatus,
        at: Instant,
    },
    /// etcd as the control planes see it.
    Etcd {
        cluster: String,
        etcd: EtcdReport,
        at: Instant,
    },
    /// The Kubernetes side (boxed: the largest report, which would size every event).
    Kubernetes {
        cluster: String,
        facts: Box<KubernetesFacts>,
        at: Instant,
    },
    /// The round's node list, from every source that answered: nodes keep its
    /// order, and a node no longer listed by a source that answered leaves.
    Membership {
        cluster: String,
        nodes: Vec<NodePlan>,
        answered: Answered,
        at: Instant,
    },
    /// A poll round ended; nodes that did not answer in it are stale.
    PollFinished { cluster: String, at: Instant },
    /// Services of one node (for the node detail view).
    NodeServices {
        cluster: String,
        node: String,
        services: Result<Vec<ServiceStatus>, String>,
        at: Instant,
    },
    /// One machine event of a node, already summarised in one line.
    NodeEvent {
        cluster: String,
        node: String,
        summary: String,
        at: Instant,
        /// When it happened on the node (its id's time), else when it arrived; seconds
        /// since the Unix epoch, shown beside it.
        unix: u64,
        /// The node's id of the event; a replay of one already held (the stream tails
        /// its recent events again when the detail reopens) is not added twice.
        id: Option<String>,
    },
    /// When the cluster's certificates end, read once per poll round.
    Certificates {
        cluster: String,
        certs: Vec<super::cert_expiry::CertExpiry>,
        at: Instant,
    },
    /// One node's CPU, memory and fullest volume, read for the nodes pane while the node is on
    /// screen (`PollerCommand::ReadUsage`).
    NodeUsage {
        cluster: String,
        usage: NodeUsage,
        at: Instant,
    },
    /// How each node's machine configuration stands against the others of its role, by
    /// address (`PollerCommand::ReadConfigDrift`); none for a context that may not read them.
    ConfigDrift {
        cluster: String,
        marks: Vec<(String, DriftMark)>,
        at: Instant,
    },
    /// The management clusters among the kube contexts, read again (fleet-wide: no cluster).
    Capi { view: Box<CapiView>, at: Instant },
}

impl FleetEvent {
    pub fn cluster(&self) -> &str {
        match self {
            FleetEvent::PollStarted { cluster, .. }
            | FleetEvent::ClusterInfo { cluster, .. }
            | FleetEvent::Node { cluster, .. }
            | FleetEvent::Etcd { cluster, .. }
            | FleetEvent::Kubernetes { cluster, .. }
            | FleetEvent::Membership { cluster, .. }
            | FleetEvent::PollFinished { cluster, .. }
            | FleetEvent::NodeServices { cluster, .. }
            | FleetEvent::NodeEvent { cluster, .. }
            | FleetEvent::Certificates { cluster, .. }
            | FleetEvent::NodeUsage { cluster, .. }
            | FleetEvent::ConfigDrift { cluster, .. } => cluster,
            FleetEvent::Capi { .. } => "",
        }
    }

    /// When the report was made.
    pub fn at(&self) -> Instant {
        match self {
            FleetEvent::PollStarted { at, .. }
            | FleetEvent::ClusterInfo { at, .. }
            | FleetEvent::Node { at, .. }
            | FleetEvent::Etcd { at, .. }
            | FleetEvent::Kubernetes { at, .. }
            | FleetEvent::Membership { at, .. }
            | FleetEvent::PollFinished { at, .. }
            | FleetEvent::NodeServices { at, .. }
            | FleetEvent::NodeEvent { at, .. }
            | FleetEvent::Certificates { at, .. }
            | FleetEvent::NodeUsage { at, .. }
            | FleetEvent::ConfigDrift { at, .. }
            | FleetEvent::Capi { at, .. } => *at,
        }
    }
}

/// What the console knows of one cluster, and since when.
#[derive(Debug, Clone, Default)]
pub struct ClusterLive {
    /// The last known status. A node that stops answering keeps its last
    /// known fields, with `error` set: see `node_answered`.
    pub status: ClusterStatus,
    pub kube_nodes: Vec<KubeNode>,
    /// When each node (by address) last answered.
    pub node_answered: HashMap<String, Instant>,
    /// The wall clock (Unix seconds) when the console first saw each node (by address) not
    /// answer since its last answer: "down since". Stamped by [`ClusterLive::note_down_since`].
    pub down_since: HashMap<String, u64>,
    pub etcd_at: Option<Instant>,
    pub kube_at: Option<Instant>,
    pub poll_started: Option<Instant>,
    pub poll_finished: Option<Instant>,
    /// A poll round is under way.
    pub polling: bool,
    pub services: HashMap<String, (Result<Vec<ServiceStatus>, String>, Instant)>,
    pub events: HashMap<String, VecDeque<(Instant, u64, String)>>,
    /// The node's ids of the events in `events`, oldest first.
    pub event_ids: HashMap<String, VecDeque<String>>,
    /// When the cluster's certificates end (the latest round's reading).
    pub certs: Vec<super::cert_expiry::CertExpiry>,
    /// The latest usage read of each node whose usage was read (those on screen), in the
    /// order first read; a node that leaves the cluster leaves it.
    pub usage: Vec<NodeUsage>,
    /// Each node's configuration drift mark (by address), from the latest read.
    pub config_drift: HashMap<String, DriftMark>,
}

impl ClusterLive {
    /// Nothing known yet about the cluster called `name`.
    pub fn named(name: &str) -> ClusterLive {
        ClusterLive {
            status: ClusterStatus {
                name: name.to_string(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// Whether anything was ever heard from the cluster.
    pub fn has_data(&self) -> bool {
        self.poll_finished.is_some() || !self.node_answered.is_empty()
    }

    /// Whether the cluster answered, or failed to: what the fleet's row and the summary lines
    /// of the fleet and the cluster view speak of.
    pub fn answered(&self) -> bool {
        self.has_data() || self.status.error.is_some()
    }

    /// When the node last answered, if it ever did.
    pub fn node_last_answer(&self, address: &str) -> Option<Instant> {
        self.node_answered.get(address).copied()
    }

    /// Stamps "down since" for the node at `address` with the wall clock `wall` if it does
    /// not answer and had no stamp; an answer clears it.
    pub fn note_down_since(&mut self, address: &str, wall: u64) {
        let down = (self.status.nodes.iter()).any(|n| n.address == address && n.error.is_some());
        if !down {
            self.down_since.remove(address);
        } else if !self.down_since.contains_key(address) {
            self.down_since.insert(address.to_string(), wall);
        }
    }

    fn fold_node(&mut self, node: NodeStatus, at: Instant) {
        let answered = node.error.is_none();
        if answered {
            self.node_answered.insert(node.address.clone(), at);
            self.down_since.remove(&node.address);
        }
        match self
            .status
            .nodes
            .iter_mut()
            .find(|n| n.address == node.address)
        {
            Some(known) if !answered => {
                // Keep what was known; say why it is stale.
                known.error = node.error;
                if known.name == known.address && node.name != node.address {
                    known.name = node.name;
                }
                if node.role != super::NodeRole::Unknown {
                    known.role = node.role;
                }
            }
            Some(known) => {
                let kube = (
                    known.kubelet_version.take(),
                    known.k8s_ready,
                    known.cordoned,
                );
                let source = known.source;
                *known = node;
                // Kubernetes facts arrive separately; keep them until they do.
                (known.kubelet_version, known.k8s_ready, known.cordoned) = kube;
                // The round's node list says where a node came from (a watch's re-probe does not know).
                known.source = source;
            }
            None => {
                // Kubernetes may have answered before this node's first probe.
                let mut node = node;
                if self.kube_at.is_some() {
                    apply_kube_node(&mut node, &self.kube_nodes);
                }
                self.status.nodes.push(node);
            }
        }
    }

    /// Drops the nodes that left the cluster and puts the rest in the list's order.
    fn fold_membership(&mut self, list: &[NodePlan], answered: Answered) -> bool {
        let shown = |nodes: &[NodeStatus]| -> Vec<(String, String, super::NodeSource, bool)> {
            nodes
                .iter()
                .map(|n| (n.address.clone(), n.name.clone(), n.source, n.not_a_member))
                .collect()
        };
        let before = shown(&self.status.nodes);
        for node in &mut self.status.nodes {
            if let Some(plan) = list.iter().find(|p| p.address == node.address) {
                node.source = plan.source;
                node.not_a_member = left_the_cluster(node, plan, answered);
                // A node that did not answer was probed before Kubernetes (or a later
                // source) named it: the round's final list names it now.
                if let Some(hostname) = plan.hostname.as_deref().filter(|h| !h.is_empty())
                    && node.name == node.address
                {
                    node.name = hostname.to_string();
                }
            }
        }
        self.status
            .nodes
            .retain(|n| still_in_cluster(n, list, answered));
        let position = |n: &NodeStatus| {
            list.iter()
                .position(|p| p.address == n.address)
                .unwrap_or(usize::MAX)
        };
        self.status.nodes.sort_by_key(position);
        let kept: HashSet<&str> = self
            .status
            .nodes
            .iter()
            .map(|n| n.address.as_str())
            .collect();
        self.node_answered.retain(|a, _| kept.contains(a.as_str()));
        self.usage.retain(|u| kept.contains(u.address.as_str()));
        self.config_drift.retain(|a, _| kept.contains(a.as_str()));
        before != shown(&self.status.nodes)
    }

    /// Folds one report in. Returns whether anything visible changed.
    pub fn apply(&mut self, event: FleetEvent) -> bool {
        match event {
            FleetEvent::PollStarted { at, .. } => {
                self.poll_started = Some(at);
                self.polling = true;
            }
            FleetEvent::ClusterInfo { role, error, .. } => {
                if self.status.role == role && self.status.error == error {
                    return false;
                }
                self.status.role = role;
                self.status.error = error;
            }
            FleetEvent::Node { node, at, .. } => {
                let before = self
                    .status
                    .nodes
                    .iter()
                    .find(|n| n.address == node.address)
                    .cloned();
                self.fold_node(node.clone(), at);
                self.status.reachable = !self.node_answered.is_empty();
                let after = self.status.nodes.iter().find(|n| n.address == node.address);
                return before.as_ref() != after;
            }
            FleetEvent::Etcd { etcd, at, .. } => {
                self.etcd_at = Some(at);
                if self.status.etcd == etcd {
                    return false;
                }
                self.status.etcd = etcd;
            }
            FleetEvent::Kubernetes { facts, at, .. } => {
                self.kube_at = Some(at);
                let seen = |l: &ClusterLive| {
                    (
                        l.status.kubernetes.clone(),
                        l.status.rollout.clone(),
                        l.status.rollout_unread.clone(),
                        l.kube_nodes.clone(),
                    )
                };
                let before = seen(self);
                self.kube_nodes = facts.nodes.clone();
                apply_kubernetes(&mut self.status, *facts);
                return before != seen(self);
            }
            FleetEvent::Membership {
                nodes, answered, ..
            } => return self.fold_membership(&nodes, answered),
            FleetEvent::PollFinished { at, .. } => {
                self.poll_finished = Some(at);
                self.polling = false;
            }
            FleetEvent::NodeServices {
                node, services, at, ..
            } => {
                let same = self
                    .services
                    .get(&node)
                    .is_some_and(|(s, _)| *s == services);
                self.services.insert(node, (services, at));
                return !same;
            }
            FleetEvent::NodeEvent {
                node,
                summary,
                at,
                unix,
                id,
                ..
            } => {
                if let Some(id) = id {
                    let ids = self.event_ids.entry(node.clone()).or_default();
                    if ids.contains(&id) {
                        return false;
                    }
                    if ids.len() == EVENTS_PER_NODE {
                        ids.pop_front();
                    }
                    ids.push_back(id);
                }
                let log = self.events.entry(node).or_default();
                if log.len() == EVENTS_PER_NODE {
                    log.pop_front();
                }
                log.push_back((at, unix, summary));
            }
            FleetEvent::Certificates { certs, .. } => {
                if self.certs == certs {
                    return false;
                }
                self.certs = certs;
            }
            FleetEvent::NodeUsage { usage, .. } => {
                match self.usage.iter_mut().find(|u| u.address == usage.address) {
                    Some(held) if *held == usage => return false,
                    Some(held) => *held = usage,
                    None => self.usage.push(usage),
                }
            }
            FleetEvent::ConfigDrift { marks, .. } => {
                let marks: HashMap<String, DriftMark> = marks.into_iter().collect();
                if self.config_drift == marks {
                    return false;
                }
                self.config_drift = marks;
            }
            // Folded by the fleet model, not a cluster.
            FleetEvent::Capi { .. } => return false,
        }
        true
    }
}

/// Every cluster's live data, by cluster name.
#[derive(Debug, Clone, Default)]
pub struct FleetModel {
    pub clusters: BTreeMap<String, ClusterLive>,
    /// What the management clusters say: who owns which cluster, and their trees.
    pub capi: CapiView,
}

impl FleetModel {
    /// Folds one report in; returns whether anything visible changed.
    pub fn apply(&mut self, event: FleetEvent) -> bool {
        if let FleetEvent::Capi { view, .. } = event {
            let changed = self.capi != *view;
            self.capi = *view;
            return changed;
        }
        let cluster = event.cluster().to_string();
        let live = self
            .clusters
            .entry(cluster.clone())
            .or_insert_with(|| ClusterLive::named(&cluster));
        live.apply(event)
    }

    pub fn cluster(&self, name: &str) -> Option<&ClusterLive> {
        self.clusters.get(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn node(address: &str, version: Option<&str>, error: Option<&str>) -> NodeStatus {
        NodeStatus {
            name: format!("n-{address}"),
            address: address.into(),
            talos_version: version.map(String::from),
            ready: error.is_none(),
            error: error.map(String::from),
            ..Default::default()
        }
    }

    #[test]
    fn a_node_that_stops_answering_keeps_its_last_known_data() {
        let t0 = Instant::now();
        let mut fleet = FleetModel::default();
        let ev = |n: NodeStatus, at| FleetEvent::Node {
            cluster: "c".into(),
            node: n,
            at,
        };
        assert!(fleet.apply(ev(node("127.1.0.1", Some("v1.11.3"), None), t0)));
        let t1 = t0 + Duration::from_secs(30);
        assert!(fleet.apply(ev(node("127.1.0.1", None, Some("unreachable")), t1)));
        let live = fleet.cluster("c").unwrap();
        let n = &live.status.nodes[0];
        assert_eq!(n.talos_version.as_deref(), Some("v1.11.3"));
        assert_eq!(n.error.as_deref(), Some("unreachable"));
        assert_eq!(live.node_last_answer("127.1.0.1"), Some(t0));
    }

    #[test]
    fn down_since_is_the_first_failing_report_and_an_answer_clears_it() {
        let t0 = Instant::now();
        let mut fleet = FleetModel::default();
        let ev = |error: Option<&str>| FleetEvent::Node {
            cluster: "c".into(),
            node: node("127.1.0.1", Some("v1.11.3"), error),
            at: t0,
        };
        let stamp = |fleet: &mut FleetModel, wall| {
            let live = fleet.clusters.get_mut("c").unwrap();
            live.note_down_since("127.1.0.1", wall);
            live.down_since.get("127.1.0.1").copied()
        };
        fleet.apply(ev(None));
        assert_eq!(stamp(&mut fleet, 1_000), None, "it answers");
        fleet.apply(ev(Some("unreachable")));
        assert_eq!(stamp(&mut fleet, 1_005), Some(1_005));
        fleet.apply(ev(Some("unreachable")));
        assert_eq!(stamp(&mut fleet, 1_010), Some(1_005), "still the first");
        fleet.apply(ev(None));
        assert_eq!(
            fleet.cluster("c").unwrap().down_since.get("127.1.0.1"),
            None
        );
    }

    #[test]
    fn an_unchanged_report_changes_nothing_visible() {
        let t0 = Instant::now();
        let mut fleet = FleetModel::default();
        let ev = |at| FleetEvent::Node {
            cluster: "c".into(),
            node: node("127.1.0.1", Some("v1.11.3"), None),
            at,
        };
        assert!(fleet.apply(ev(t0)));
        assert!(!fleet.apply(ev(t0 + Duration::from_secs(5))));
        let etcd = |at| FleetEvent::Etcd {
            cluster: "c".into(),
            etcd: EtcdReport::default(),
            at,
        };
        assert!(!fleet.apply(etcd(t0)));
    }

    #[test]
    fn kubernetes_facts_survive_the_next_talos_probe() {
        let t0 = Instant::now();
        let mut fleet = FleetModel::default();
        fleet.apply(FleetEvent::Node {
            cluster: "c".into(),
            node: node("127.1.0.1", Some("v1.11.3"), None),
            at: t0,
        });
        let kube = KubeNode {
            name: "n-127.1.0.1".into(),
            roles: vec![],
            ready: true,
            conditions: vec![],
            kubelet_version: "v1.34.1".into(),
            internal_ips: vec!["127.1.0.1".into()],
            hostname: None,
            taints: vec![],
            unschedulable: false,
            cordoned_by: None,
        };
        let facts = KubernetesFacts {
            nodes: vec![kube],
            ..Default::default()
        };
        fleet.apply(FleetEvent::Kubernetes {
            cluster: "c".into(),
            facts: Box::new(facts),
            at: t0,
        });
        fleet.apply(FleetEvent::Node {
            cluster: "c".into(),
            node: node("127.1.0.1", Some("v1.12.0"), None),
            at: t0,
        });
        let n = &fleet.cluster("c").unwrap().status.nodes[0];
        assert_eq!(n.talos_version.as_deref(), Some("v1.12.0"));
        assert_eq!(n.kubelet_version.as_deref(), Some("v1.34.1"));
        assert_eq!(n.k8s_ready, Some(true));
    }

    #[test]
    fn a_node_the_round_no_longer_lists_leaves_and_the_rest_keep_its_order() {
        use crate::fleet::membership::{Answered, NodePlan};
        use crate::fleet::{NodeRole, NodeSource};
        let t0 = Instant::now();
        let mut fleet = FleetModel::default();
        for a in ["127.1.0.3", "127.1.0.1", "127.1.0.2"] {
            fleet.apply(FleetEvent::Node {
                cluster: "c".into(),
                node: node(a, Some("v1.11.3"), None),
                at: t0,
            });
        }
        let plan = |a: &str, source| NodePlan {
            address: a.into(),
            role: NodeRole::Worker,
            hostname: None,
            unknown_to_etcd_and_kubernetes: false,
            source,
        };
        let changed = fleet.apply(FleetEvent::Membership {
            cluster: "c".into(),
            nodes: vec![
                plan("127.1.0.1", NodeSource::Talosconfig),
                plan("127.1.0.2", NodeSource::Discovery),
            ],
            answered: Answered {
                members: true,
                ..Default::default()
            },
            at: t0,
        });
        assert!(changed);
        let live = fleet.cluster("c").unwrap();
        let listed: Vec<(&str, NodeSource)> = live
            .status
            .nodes
            .iter()
            .map(|n| (n.address.as_str(), n.source))
            .collect();
        assert_eq!(
            listed,
            [
                ("127.1.0.1", NodeSource::Talosconfig),
                ("127.1.0.2", NodeSource::Discovery)
            ]
        );
        assert_eq!(live.node_last_answer("127.1.0.3"), None);
    }

    #[test]
    fn a_silent_node_probed_before_kubernetes_named_it_is_named_by_the_rounds_list() {
        use crate::fleet::membership::{Answered, NodePlan};
        use crate::fleet::{NodeRole, NodeSource};
        let t0 = Instant::now();
        let mut fleet = FleetModel::default();
        let mut silent = node("127.1.0.2", None, Some("unreachable"));
        silent.name = "127.1.0.2".into();
        fleet.apply(FleetEvent::Node {
            cluster: "c".into(),
            node: silent,
            at: t0,
        });
        let named = |hostname: &str| FleetEvent::Membership {
            cluster: "c".into(),
            nodes: vec![NodePlan {
                address: "127.1.0.2".into(),
                role: NodeRole::Controlplane,
                hostname: Some(hostname.into()),
                source: NodeSource::Talosconfig,
                unknown_to_etcd_and_kubernetes: false,
            }],
            answered: Answered::default(),
            at: t0,
        };
        assert!(fleet.apply(named("cp-2")), "the name is a visible change");
        assert_eq!(fleet.cluster("c").unwrap().status.nodes[0].name, "cp-2");
        // A name the node gave itself is not replaced by another source's.
        assert!(!fleet.apply(named("other")));
        assert_eq!(fleet.cluster("c").unwrap().status.nodes[0].name, "cp-2");
    }

    #[test]
    fn node_events_are_bounded() {
        let t0 = Instant::now();
        let mut fleet = FleetModel::default();
        for i in 0..(EVENTS_PER_NODE + 10) {
            fleet.apply(FleetEvent::NodeEvent {
                cluster: "c".into(),
                node: "a".into(),
                summary: format!("e{i}"),
                at: t0,
                unix: 1_796_052_057,
                id: Some(format!("id-{i}")),
            });
        }
        // The stream replays the newest event: held once.
        let replayed = FleetEvent::NodeEvent {
            cluster: "c".into(),
            node: "a".into(),
            summary: format!("e{}", EVENTS_PER_NODE + 9),
            at: t0,
            unix: 1_796_052_057,
            id: Some(format!("id-{}", EVENTS_PER_NODE + 9)),
        };
        assert!(!fleet.apply(replayed));
        let log = &fleet.cluster("c").unwrap().events["a"];
        assert_eq!(log.len(), EVENTS_PER_NODE);
        assert_eq!(log.back().map(|e| e.2.as_str()), Some("e59"));
    }
}
