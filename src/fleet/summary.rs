//! One cluster summed up in words: node states, stale ages measured to the latest report,
//! etcd quorum, version skew and upgrade targets (`VersionFindings`), certificates near their
//! end and the one-line problems the fleet row, the cluster summary and the nodes pane show.
//! Pure: the model's reading, below the console and the commands that show it.
use std::time::Instant;

use super::problems::{NodeState, Problem, Readings, Severity, cluster_problems, node_state};
use super::{ClusterLive, ClusterStatus, EtcdReport, NodeRole, NodeStatus, Quorum};
use crate::clock::age_text;
use crate::versions::{
    ControlPlaneComponent, KubeVersion, Minor, NodeVersions, SkewWarning, TalosVersion, Version,
    fleet_talos_upgrade_targets, kubernetes_upgrade_targets, skew_warnings,
};

pub fn role_word(role: NodeRole) -> &'static str {
    match role {
        NodeRole::Controlplane => "cp",
        NodeRole::Worker => "worker",
        NodeRole::Unknown => "?",
    }
}

/// "stale 35s" for a node that did not answer the last probe, measured from
/// its last answer to the latest report; "no answer" when it never did;
/// `None` for a node that answered.
pub fn node_staleness(
    live: &ClusterLive,
    node: &NodeStatus,
    now: Option<Instant>,
) -> Option<String> {
    node.error.as_ref()?;
    Some(match (live.node_last_answer(&node.address), now) {
        (Some(at), Some(now)) => format!("stale {}", age_text(now.saturating_duration_since(at))),
        (Some(_), None) => "stale".to_string(),
        (None, _) => "no answer".to_string(),
    })
}

/// The etcd pane's first line: [`quorum_line`], where a quorum lost only to
/// alarms (an alarmed member still votes, but NOSPACE and CORRUPT stop
/// writes) names the alarm instead of a lost quorum.
pub fn etcd_line(etcd: &EtcdReport) -> String {
    let alarm = (!etcd.votes_lost())
        .then(|| etcd.alarms.first().map(|a| a.alarm.as_str()))
        .flatten();
    quorum_line(&etcd.quorum, alarm)
}

/// "3 members, 2 healthy, quorum 2, can lose 0" ("1 member"), and why writes stop when a
/// majority is not healthy: quorum lost, or `alarm`.
pub fn quorum_line(q: &Quorum, alarm: Option<&str>) -> String {
    if q.members == 0 {
        return "no etcd members known".to_string();
    }
    let noun = if q.members == 1 { "member" } else { "members" };
    let mut line = format!(
        "{} {noun}, {} healthy, quorum {}, can lose {}",
        q.members, q.healthy, q.needed, q.tolerates
    );
    match alarm {
        _ if q.has_quorum() => {}
        Some(alarm) => line.push_str(&format!(": alarm {alarm}, writes stop")),
        None => line.push_str(": QUORUM LOST, writes stop"),
    }
    line
}

fn component(name: &str) -> Option<ControlPlaneComponent> {
    ControlPlaneComponent::ALL
        .into_iter()
        .find(|c| c.name() == name)
}

/// What each node runs, for the skew rules and the versions pane.
pub fn node_versions(status: &ClusterStatus) -> Vec<NodeVersions> {
    let parse = |v: &Option<String>| v.as_deref().and_then(|t| t.parse::<Version>().ok());
    status
        .nodes
        .iter()
        .map(|n| NodeVersions {
            node: n.name.clone(),
            talos: parse(&n.talos_version),
            kubelet: parse(&n.kubelet_version),
            control_plane: status
                .kubernetes
                .iter()
                .flat_map(|k| &k.components)
                .filter(|c| c.node == n.name || c.node == n.address)
                .filter_map(|c| Some((component(&c.name)?, c.version.parse().ok()?)))
                .collect(),
        })
        .collect()
}

/// The Kubernetes version upgrades start from: the lowest kube-apiserver,
/// else the API server's own answer.
pub fn running_kubernetes(status: &ClusterStatus) -> Option<KubeVersion> {
    let kube = status.kubernetes.as_ref()?;
    let apiservers: Vec<Version> = kube
        .components
        .iter()
        .filter(|c| c.name == ControlPlaneComponent::ApiServer.name())
        .filter_map(|c| c.version.parse().ok())
        .collect();
    Version::lowest(&apiservers)
        .cloned()
        .or_else(|| kube.server_version.as_deref()?.parse().ok())
}

/// One cluster, summed up for the fleet row and the cluster summary.
#[derive(Debug, Clone, Default)]
pub struct ClusterHealth {
    pub has_data: bool,
    pub reachable: bool,
    pub nodes_ready: usize,
    pub nodes_total: usize,
    pub quorum: Quorum,
    pub talos_min: Option<TalosVersion>,
    pub talos_max: Option<TalosVersion>,
    pub kubernetes: Option<String>,
    pub skew: Vec<SkewWarning>,
    /// What is wrong, most serious first, each naming the node or member: the warnings only.
    pub problems: Vec<String>,
    /// What is said, not warned about (a cordon, a node no longer a member).
    pub notes: Vec<String>,
    /// The worst severity among problems and notes.
    pub worst: Option<Severity>,
    /// Every problem and note, most severe first, for the nodes' own rows.
    pub all: Vec<Problem>,
    /// The stalest node's age ("stale 35s"), when any node is stale.
    pub stale: Option<String>,
    /// How old the newest data of the cluster is ("4s"): its latest answer or finished
    /// round, to the latest report; `None` before any.
    pub updated: Option<String>,
}

impl ClusterHealth {
    /// Skew warnings and problems together (information is not counted).
    pub fn warning_count(&self) -> usize {
        self.problems.len()
    }
}

/// Skew warnings, valid upgrade targets and the Talos minors of one cluster.
#[derive(Debug, Clone, Default)]
pub struct VersionFindings {
    pub warnings: Vec<SkewWarning>,
    pub talos_targets: Vec<TalosVersion>,
    /// `None` when the running Kubernetes version is unknown.
    pub kubernetes_targets: Option<Vec<KubeVersion>>,
    /// Distinct Talos minors running, in order.
    pub talos_minors: Vec<Minor>,
}

impl VersionFindings {
    pub fn of(status: &ClusterStatus) -> VersionFindings {
        let versions = node_versions(status);
        let warnings = skew_warnings(&versions);
        let talos: Vec<Version> = versions.into_iter().filter_map(|n| n.talos).collect();
        let mut talos_minors: Vec<Minor> = talos.iter().map(Version::minor_key).collect();
        talos_minors.sort();
        talos_minors.dedup();
        VersionFindings {
            warnings,
            talos_targets: fleet_talos_upgrade_targets(&talos, false),
            kubernetes_targets: running_kubernetes(status)
                .map(|k| kubernetes_upgrade_targets(&k, &talos)),
            talos_minors,
        }
    }
}

/// The age of the cluster's newest data (its latest node answer or finished round) at `now`.
fn data_age(live: &ClusterLive, now: Option<Instant>) -> Option<String> {
    let newest = (live.node_answered.values().copied())
        .chain(live.poll_finished)
        .max()?;
    Some(age_text(now?.saturating_duration_since(newest)))
}

pub fn cluster_health(live: &ClusterLive, now: Option<Instant>) -> ClusterHealth {
    let status = &live.status;
    let versions = node_versions(status);
    let skew = skew_warnings(&versions);
    let staleness = |node: &NodeStatus| node_staleness(live, node, now);
    let readings = Readings {
        certs: &live.certs,
        skew: &skew,
        usage: &live.usage,
    };
    let all = cluster_problems(status, readings, &staleness);
    // How stale the cluster's data is: a node that never answered has no data to be stale
    // (the cluster answered; its problem says "no answer").
    let stalest = (status.nodes.iter())
        .filter(|n| node_state(n) == NodeState::Down)
        .filter_map(|n| Some((live.node_last_answer(&n.address)?, staleness(n)?)))
        .min_by_key(|(last, _)| *last);
    let ready = (status.nodes.iter())
        .filter(|n| node_state(n) == NodeState::Ready)
        .count();
    let (warnings, notes): (Vec<&Problem>, Vec<&Problem>) =
        all.iter().partition(|p| p.severity.is_warning());
    let talos: Vec<TalosVersion> = versions.into_iter().filter_map(|n| n.talos).collect();
    ClusterHealth {
        has_data: live.has_data(),
        reachable: status.reachable,
        nodes_ready: ready,
        nodes_total: status.nodes.iter().filter(|n| !n.not_a_member).count(),
        quorum: status.etcd.quorum,
        talos_min: Version::lowest(&talos).cloned(),
        talos_max: Version::highest(&talos).cloned(),
        kubernetes: status
            .kubernetes
            .as_ref()
            .and_then(|k| k.server_version.clone()),
        skew,
        problems: warnings.iter().map(|p| p.text.clone()).collect(),
        notes: notes.iter().map(|p| p.text.clone()).collect(),
        worst: all.first().map(|p| p.severity),
        stale: stalest.map(|(_, age)| age),
        updated: data_age(live, now),
        all,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn quorum_line_says_what_is_left() {
        assert_eq!(
            quorum_line(&Quorum::from_counts(3, 3), None),
            "3 members, 3 healthy, quorum 2, can lose 1"
        );
        assert_eq!(
            quorum_line(&Quorum::from_counts(3, 2), None),
            "3 members, 2 healthy, quorum 2, can lose 0"
        );
        assert!(quorum_line(&Quorum::from_counts(3, 1), None).contains("QUORUM LOST"));
        assert_eq!(
            quorum_line(&Quorum::from_counts(1, 1), None),
            "1 member, 1 healthy, quorum 1, can lose 0"
        );
        assert_eq!(
            quorum_line(&Quorum::from_counts(1, 0), Some("NOSPACE")),
            "1 member, 0 healthy, quorum 1, can lose 0: alarm NOSPACE, writes stop"
        );
    }

    #[test]
    fn a_down_node_is_a_problem_with_its_age() {
        let t0 = Instant::now();
        let mut live = ClusterLive::default();
        let node = |error: Option<&str>| NodeStatus {
            name: "cp-2".into(),
            address: "127.10.0.2".into(),
            ready: error.is_none(),
            error: error.map(String::from),
            ..Default::default()
        };
        live.apply(crate::fleet::FleetEvent::Node {
            cluster: "c".into(),
            node: node(None),
            at: t0,
        });
        live.apply(crate::fleet::FleetEvent::Node {
            cluster: "c".into(),
            node: node(Some("connection refused")),
            at: t0 + Duration::from_secs(30),
        });
        let h = cluster_health(&live, Some(t0 + Duration::from_secs(35)));
        assert_eq!(h.problems, vec!["cp-2 DOWN (stale 35s)"]);
        // Its newest data: the answer 35 s ago.
        assert_eq!(h.updated.as_deref(), Some("35s"));
        assert_eq!(h.stale.as_deref(), Some("stale 35s"));
        assert_eq!((h.nodes_ready, h.nodes_total), (0, 1));
    }

    #[test]
    fn a_cordon_is_said_but_is_not_a_warning() {
        let mut live = ClusterLive::default();
        live.apply(crate::fleet::FleetEvent::Node {
            cluster: "prod".into(),
            node: NodeStatus {
                name: "w-2".into(),
                address: "127.10.0.5".into(),
                ready: true,
                k8s_ready: Some(true),
                cordoned: Some(true),
                ..Default::default()
            },
            at: Instant::now(),
        });
        let h = cluster_health(&live, None);
        assert_eq!(h.warning_count(), 0);
        assert!(h.problems.is_empty(), "{:?}", h.problems);
        assert_eq!(h.notes, vec!["w-2 cordoned"]);
        assert_eq!(h.worst, Some(Severity::Info));
    }

    #[test]
    fn a_node_that_never_answered_does_not_make_the_cluster_unanswered() {
        let t0 = Instant::now();
        let mut live = ClusterLive::default();
        for (name, address, error) in [
            ("cp-1", "127.10.0.1", None),
            ("w-1", "127.10.0.2", Some("connection refused")),
        ] {
            live.apply(crate::fleet::FleetEvent::Node {
                cluster: "c".into(),
                node: NodeStatus {
                    name: name.into(),
                    address: address.into(),
                    ready: error.is_none(),
                    error: error.map(String::from),
                    ..Default::default()
                },
                at: t0,
            });
        }
        let h = cluster_health(&live, Some(t0));
        assert_eq!(h.problems, vec!["w-1 DOWN (no answer)"]);
        assert_eq!(
            h.stale, None,
            "the cluster answered: UPDATED is not \"no answer\""
        );
    }
}
