//! The status model of a fleet: clusters, their nodes, etcd and a rollout in
//! progress. These structs
//! are the JSON contract of `taloscope status --output json` (field names and
//! shapes are fixed; etcd member ids are 16-digit hex strings like talosctl's).
use serde::{Deserialize, Serialize};

use super::collect::is_alarm_report;
use super::quorum::Quorum;
use crate::printable::line as printable;
use crate::rollout::{LeaseReading, RolloutInProgress, RolloutKind};
use crate::talos::{MachineStage, UnmetCondition};

/// The rollout a cluster's Lease shows: `rollout::lease` decodes it.
pub use crate::rollout::RolloutStatus;

/// Every cluster asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct FleetStatus {
    pub clusters: Vec<ClusterStatus>,
}

impl FleetStatus {
    /// True when every node of every cluster answered.
    pub fn every_node_answered(&self) -> bool {
        self.clusters.iter().all(ClusterStatus::every_node_answered)
    }
}

/// One cluster (one talosconfig context).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ClusterStatus {
    pub name: String,
    /// Whether any node answered.
    pub reachable: bool,
    /// The client certificate's role(s), e.g. `os:admin` (comma-separated if several).
    pub role: String,
    pub nodes: Vec<NodeStatus>,
    pub etcd: EtcdReport,
    /// The Kubernetes side; `null` when the cluster has no kube context.
    #[serde(default)]
    pub kubernetes: Option<KubernetesReport>,
    /// A rollout some console holds the rollout Lease for; absent when there
    /// is none, its lease expired, or Kubernetes was not asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutStatus>,
    /// Why the rollout Lease could not be read (the Kubernetes API down, the read forbidden);
    /// absent when it was read or not asked. Then `rollout` says nothing either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_unread: Option<String>,
    /// Why the cluster could not be asked at all (certificates, endpoints).
    /// Absent when the cluster was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ClusterStatus {
    /// Whether the cluster and every node of it answered; a node the talosconfig names that
    /// is no longer a member is not one of its nodes.
    pub fn every_node_answered(&self) -> bool {
        self.error.is_none() && (self.nodes.iter()).all(|n| n.error.is_none() || n.not_a_member)
    }

    pub fn node(&self, name: &str) -> Option<&NodeStatus> {
        self.nodes
            .iter()
            .find(|n| n.name == name || n.address == name)
    }

    /// The node `wanted` names (its name or address) when it has an address to ask, else
    /// why not, in words that name the cluster and its nodes: what an operator's node name
    /// finds, on the command line and in the console alike.
    pub fn node_named(&self, wanted: &str) -> Result<&NodeStatus, String> {
        node_named_among(&self.name, &self.nodes, wanted)
    }

    /// The id of `node`'s etcd member (the member whose hostname is its name or address).
    pub fn etcd_member_of(&self, node: &NodeStatus) -> Option<String> {
        let names = [node.name.as_str(), node.address.as_str()];
        self.etcd
            .members
            .iter()
            .find(|m| names.contains(&m.hostname.as_str()))
            .map(|m| m.id.clone())
    }

    /// A rollout held by another console than `me` (`user@host`), for the
    /// upgrade guard; our own lease (a resumed rollout) is not "other".
    pub fn other_rollout(&self, me: &str) -> Option<RolloutInProgress> {
        self.rollout
            .as_ref()
            .filter(|r| r.holder != me)
            .map(RolloutStatus::as_in_progress)
    }

    /// [`ClusterStatus::other_rollout`], or why the Lease could not be read.
    pub fn other_rollout_read(&self, me: &str) -> LeaseReading {
        match &self.rollout_unread {
            Some(why) => Err(why.clone()),
            None => Ok(self.other_rollout(me)),
        }
    }
}

impl RolloutStatus {
    fn what(&self) -> &'static str {
        self.kind.map_or("rollout", RolloutKind::describe)
    }

    /// The holder as it can be drawn on any terminal.
    pub fn holder_shown(&self) -> String {
        printable(&self.holder)
    }

    /// The node being worked on and its phase, when the lease says:
    /// "cp-3, rebooting".
    pub fn current_shown(&self) -> Option<String> {
        let node = self.current_node.as_deref().map(printable);
        let phase = self.phase.as_deref().map(printable);
        match (node, phase) {
            (Some(n), Some(p)) => Some(format!("{n}, {p}")),
            (Some(one), None) | (None, Some(one)) => Some(one),
            (None, None) => None,
        }
    }

    /// "upgrade in progress by bob@jump2, node 3 of 5".
    pub fn describe(&self) -> String {
        self.describe_by(&self.holder_shown())
    }

    /// `describe` with the holder as given, e.g. cut to fit a line.
    pub fn describe_by(&self, holder: &str) -> String {
        format!(
            "{} in progress by {holder}, node {} of {}",
            self.what(),
            self.node_index,
            self.node_count
        )
    }

    /// For a narrow cell: "upgrade 3/5 by bob@jump2", the holder without the process
    /// (`user@host/pid-start`: the selected cluster's line names it in full).
    pub fn brief(&self) -> String {
        let holder = self.holder_shown();
        let who = holder
            .split_once('/')
            .map_or(holder.as_str(), |(who, _)| who);
        format!(
            "{} {}/{} by {who}",
            self.what(),
            self.node_index,
            self.node_count,
        )
    }
}

/// Control plane or worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NodeRole {
    Controlplane,
    Worker,
    /// Nothing could be learned about the node (it never answered and no
    /// other node knew it).
    #[default]
    Unknown,
}

impl NodeRole {
    pub fn as_str(&self) -> &'static str {
        match self {
            NodeRole::Controlplane => "controlplane",
            NodeRole::Worker => "worker",
            NodeRole::Unknown => "unknown",
        }
    }
}

/// Where the node list learned of a node: the talosconfig context names it, or
/// Talos discovery (COSI `Members`), the etcd member list or the Kubernetes
/// node list found it. The first source that names a node is the one shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NodeSource {
    #[default]
    Talosconfig,
    Discovery,
    Etcd,
    Kubernetes,
}

impl NodeSource {
    pub fn as_str(&self) -> &'static str {
        match self {
            NodeSource::Talosconfig => "talosconfig",
            NodeSource::Discovery => "discovery",
            NodeSource::Etcd => "etcd",
            NodeSource::Kubernetes => "kubernetes",
        }
    }
}

/// One node. Fields the node could not tell are `null`; `error` says why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct NodeStatus {
    /// Hostname, else the address.
    pub name: String,
    /// The address the node is reached at (the talosconfig node entry, or the
    /// address the source that found it gives).
    pub address: String,
    pub role: NodeRole,
    /// Which source put the node in the list.
    #[serde(default)]
    pub source: NodeSource,
    pub talos_version: Option<String>,
    pub stage: Option<MachineStage>,
    pub ready: bool,
    pub unmet_conditions: Vec<UnmetCondition>,
    pub error: Option<String>,
    /// From the Kubernetes node matched by address or hostname; `null` when
    /// Kubernetes was not asked, did not answer, or has no such node.
    #[serde(default)]
    pub kubelet_version: Option<String>,
    /// The Kubernetes node's Ready condition.
    #[serde(default)]
    pub k8s_ready: Option<bool>,
    /// `spec.unschedulable` of the Kubernetes node.
    #[serde(default)]
    pub cordoned: Option<bool>,
    /// The talosconfig names it, it does not answer, and neither the etcd member list nor
    /// the Kubernetes nodes (both read) know it: a node removed from the cluster whose
    /// address the talosconfig kept. Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_a_member: bool,
}

impl NodeStatus {
    /// Who the node is to a usage read: name, address and role (the console's nodes pane,
    /// its resources screen and `top` read the same figures of it).
    pub fn identity(&self) -> crate::node_resources::NodeIdentity {
        crate::node_resources::NodeIdentity {
            name: self.name.clone(),
            address: self.address.clone(),
            machine_type: self.role.as_str().to_string(),
        }
    }

    /// Who the node is to a drift read: its configuration is compared with its role's (the
    /// console's DRIFT column and `config drift` alike).
    pub fn drift_target(&self) -> crate::machine_config::DriftTarget {
        crate::machine_config::DriftTarget {
            name: self.name.clone(),
            address: self.address.clone(),
            role: self.role.as_str().to_string(),
        }
    }

    /// A node that could not be asked at all, named by its address.
    pub fn failed(address: &str, error: String) -> NodeStatus {
        NodeStatus {
            name: address.to_string(),
            address: address.to_string(),
            error: Some(error),
            ..Default::default()
        }
    }

    /// The names of the conditions that keep Talos from being ready, in reported order.
    pub fn unmet_names(&self) -> Vec<&str> {
        self.unmet_conditions
            .iter()
            .map(|c| c.name.as_str())
            .collect()
    }
}

/// The Kubernetes side of a cluster, from its paired kube context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct KubernetesReport {
    /// The API server's `gitVersion`; `null` when it did not answer.
    pub server_version: Option<String>,
    /// kube-apiserver, kube-controller-manager and kube-scheduler per control plane.
    pub components: Vec<ComponentReport>,
    /// The kube-proxy DaemonSet's image tag, when it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_proxy_version: Option<String>,
    /// Why the Kubernetes API could not be asked (unreachable, credentials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One control-plane component on one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ComponentReport {
    pub node: String,
    /// `kube-apiserver`, `kube-controller-manager` or `kube-scheduler`.
    pub name: String,
    /// Image tag, e.g. `v1.34.1`.
    pub version: String,
    pub ready: bool,
}

/// etcd as seen from the control planes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct EtcdReport {
    pub members: Vec<EtcdMemberReport>,
    pub alarms: Vec<EtcdAlarmReport>,
    pub quorum: Quorum,
}

impl EtcdReport {
    pub fn leader(&self) -> Option<&EtcdMemberReport> {
        self.members.iter().find(|m| m.leader)
    }

    /// Whether too few voting members answer for a majority (alarms aside: an alarmed
    /// member still votes, but NOSPACE and CORRUPT stop writes).
    pub fn votes_lost(&self) -> bool {
        let alarmed = |id: &str| self.alarms.iter().any(|a| a.member_id == id);
        let voting = Quorum::of_members(
            self.members
                .iter()
                .map(|m| (m.is_learner, m.healthy || alarmed(&m.id))),
        );
        voting.members > 0 && !voting.has_quorum()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct EtcdMemberReport {
    /// Member id, 16 lower-case hex digits (`talosctl etcd members` prints the same).
    pub id: String,
    pub hostname: String,
    pub is_learner: bool,
    pub leader: bool,
    /// The member's node answered EtcdStatus, reported no errors and has no
    /// active alarm (NOSPACE and CORRUPT stop its writes).
    pub healthy: bool,
    /// Bytes; `null` when the member did not answer.
    pub db_size: Option<i64>,
    /// Bytes of the database actually in use (the rest is free pages);
    /// absent when the member did not answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_size_in_use: Option<i64>,
    pub raft_term: Option<u64>,
    /// The member's raft index; absent when the member did not answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raft_index: Option<u64>,
    pub errors: Vec<String>,
}

impl EtcdMemberReport {
    /// A member that answers: healthy, or unhealthy only by its own alarm. A disarm and its
    /// defragments repair the alarm, and an alarmed member still answers, votes and streams a
    /// snapshot, so the alarm does not stop them.
    pub fn answers(&self) -> bool {
        self.healthy
            || (self.db_size.is_some()
                && !self.errors.is_empty()
                && self.errors.iter().all(|e| is_alarm_report(e)))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct EtcdAlarmReport {
    /// Member id, 16 hex digits.
    pub member_id: String,
    /// The member's hostname, when known.
    pub hostname: Option<String>,
    /// `NOSPACE`, `CORRUPT`.
    pub alarm: String,
}

/// [`ClusterStatus::node_named`] among `nodes` of the cluster `cluster` (none when its
/// status is not known yet).
pub fn node_named_among<'a>(
    cluster: &str,
    nodes: &'a [NodeStatus],
    wanted: &str,
) -> Result<&'a NodeStatus, String> {
    let found = nodes
        .iter()
        .find(|n| n.name == wanted || n.address == wanted);
    match found {
        Some(n) if !n.address.is_empty() => Ok(n),
        _ => {
            let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
            Err(printable(&format!(
                "cluster {cluster} has no node named {wanted:?}; its nodes: {}",
                names.join(", ")
            )))
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape_matches_the_contract() {
        let fleet = FleetStatus {
            clusters: vec![ClusterStatus {
                name: "healthy".into(),
                reachable: true,
                role: "os:admin".into(),
                nodes: vec![NodeStatus {
                    name: "cp-1".into(),
                    address: "127.10.0.2".into(),
                    role: NodeRole::Controlplane,
                    source: NodeSource::Discovery,
                    talos_version: Some("v1.11.3".into()),
                    stage: Some(MachineStage::ShuttingDown),
                    ready: true,
                    unmet_conditions: vec![],
                    error: None,
                    kubelet_version: Some("v1.34.1".into()),
                    k8s_ready: Some(true),
                    cordoned: Some(false),
                    not_a_member: false,
                }],
                etcd: EtcdReport {
                    members: vec![EtcdMemberReport {
                        id: "000000000000000a".into(),
                        hostname: "cp-1".into(),
                        leader: true,
                        healthy: true,
                        db_size: Some(1),
                        raft_term: Some(2),
                        ..Default::default()
                    }],
                    alarms: vec![],
                    quorum: Quorum::from_counts(1, 1),
                },
                kubernetes: Some(KubernetesReport {
                    server_version: Some("v1.34.1".into()),
                    components: vec![ComponentReport {
                        node: "cp-1".into(),
                        name: "kube-apiserver".into(),
                        version: "v1.34.1".into(),
                        ready: true,
                    }],
                    ..Default::default()
                }),
                rollout: None,
                rollout_unread: None,
                error: None,
            }],
        };
        let json = serde_json::to_value(&fleet).expect("serializes");
        let cluster = &json["clusters"][0];
        let keys = |v: &serde_json::Value| {
            let mut k: Vec<String> = v
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            k.sort();
            k
        };
        assert_eq!(
            keys(cluster),
            ["etcd", "kubernetes", "name", "nodes", "reachable", "role"]
        );
        assert_eq!(
            keys(&cluster["kubernetes"]),
            ["components", "server_version"]
        );
        assert_eq!(
            keys(&cluster["kubernetes"]["components"][0]),
            ["name", "node", "ready", "version"]
        );
        assert_eq!(
            keys(&cluster["nodes"][0]),
            [
                "address",
                "cordoned",
                "error",
                "k8s_ready",
                "kubelet_version",
                "name",
                "ready",
                "role",
                "source",
                "stage",
                "talos_version",
                "unmet_conditions"
            ]
        );
        assert_eq!(cluster["nodes"][0]["role"], "controlplane");
        assert_eq!(cluster["nodes"][0]["source"], "discovery");
        assert_eq!(cluster["nodes"][0]["stage"], "shutting down");
        assert_eq!(
            keys(&cluster["etcd"]["members"][0]),
            [
                "db_size",
                "errors",
                "healthy",
                "hostname",
                "id",
                "is_learner",
                "leader",
                "raft_term"
            ]
        );
        assert_eq!(
            keys(&cluster["etcd"]["quorum"]),
            ["healthy", "members", "needed", "tolerates"]
        );
        let back: FleetStatus = serde_json::from_value(json).expect("round trip");
        assert_eq!(back, fleet);
    }

    fn rollout(holder: &str) -> RolloutStatus {
        RolloutStatus {
            holder: holder.into(),
            kind: Some(RolloutKind::TalosUpgrade),
            target: Some("v1.12.0".into()),
            node_index: 3,
            node_count: 5,
            current_node: Some("cp-3".into()),
            phase: None,
        }
    }

    #[test]
    fn a_rollout_is_in_the_json_only_when_there_is_one() {
        let mut cluster = ClusterStatus {
            name: "healthy".into(),
            ..Default::default()
        };
        let json = serde_json::to_value(&cluster).expect("serializes");
        assert!(json.get("rollout").is_none(), "{json}");
        cluster.rollout = Some(rollout("bob@jump2"));
        let json = serde_json::to_value(&cluster).expect("serializes");
        let mut keys: Vec<&String> = json["rollout"]
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        keys.sort();
        assert_eq!(
            keys,
            [
                "current_node",
                "holder",
                "kind",
                "node_count",
                "node_index",
                "target"
            ]
        );
        assert_eq!(json["rollout"]["kind"], "talos-upgrade");
        let back: ClusterStatus = serde_json::from_value(json).expect("round trip");
        assert_eq!(back, cluster);
    }

    #[test]
    fn a_rollout_reads_in_the_operators_words() {
        let r = rollout("bob@jump2");
        assert_eq!(
            r.describe(),
            "upgrade in progress by bob@jump2, node 3 of 5"
        );
        assert_eq!(r.brief(), "upgrade 3/5 by bob@jump2");
        let with_process = rollout("root@vm/12252-1796511617");
        assert_eq!(with_process.brief(), "upgrade 3/5 by root@vm");
        assert_eq!(r.current_shown().as_deref(), Some("cp-3"));
        let unknown = RolloutStatus {
            kind: None,
            phase: Some("rebooting".into()),
            ..r
        };
        assert_eq!(
            unknown.describe(),
            "rollout in progress by bob@jump2, node 3 of 5"
        );
        assert_eq!(unknown.current_shown().as_deref(), Some("cp-3, rebooting"));
        let odd = RolloutStatus {
            holder: "b\u{1b}[2Jöb@jump2".into(),
            ..unknown
        };
        assert_eq!(odd.brief(), "rollout 3/5 by b?[2Jöb@jump2");
    }

    #[test]
    fn our_own_rollout_is_not_another() {
        let cluster = ClusterStatus {
            rollout: Some(rollout("bob@jump2")),
            ..Default::default()
        };
        assert_eq!(cluster.other_rollout("bob@jump2"), None);
        let other = cluster.other_rollout("alice@jump1").expect("bob's rollout");
        assert_eq!(other.holder, "bob@jump2");
        assert_eq!((other.node_index, other.node_count), (3, 5));
        assert_eq!(ClusterStatus::default().other_rollout("alice@jump1"), None);
    }

    #[test]
    fn a_node_is_named_by_name_or_address_and_an_unknown_one_lists_the_nodes() {
        let node = |name: &str, address: &str| NodeStatus {
            name: name.into(),
            address: address.into(),
            ..Default::default()
        };
        let cluster = ClusterStatus {
            name: "lab".into(),
            nodes: vec![node("cp-1", "127.10.0.2"), node("w-1", "")],
            ..Default::default()
        };
        assert_eq!(
            cluster.node_named("cp-1").map(|n| n.address.as_str()),
            Ok("127.10.0.2")
        );
        assert_eq!(
            cluster.node_named("127.10.0.2").map(|n| n.name.as_str()),
            Ok("cp-1")
        );
        let no_address = "cluster lab has no node named \"w-1\"; its nodes: cp-1, w-1";
        assert_eq!(
            cluster.node_named("w-1").map(|_| ()),
            Err(no_address.into())
        );
        let odd = cluster.node_named("w\u{1b}[2J").expect_err("no such node");
        assert!(!odd.contains('\u{1b}'), "{odd}");
    }
}
