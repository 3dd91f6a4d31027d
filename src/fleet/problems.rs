//! What is wrong with a cluster and each of its nodes, in the one severity order the fleet,
//! the nodes pane, the cluster banner and `taloscope status` all rank by: down or not
//! answering, then etcd, then not Ready, a certificate near its end, version skew; a cordon
//! and a talosconfig node that is no longer a member are information, not warnings. Pure.
use super::cert_expiry::{CertExpiry, ExpiryVerdict, expiry_problem};
use super::status::{ClusterStatus, EtcdReport, NodeStatus};
use crate::node_resources::{Gauge, Level, NodeUsage};
use crate::talos::MachineStage;
use crate::versions::SkewWarning;

/// How bad a problem is; the derived order is the severity order (`Down` worst).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Said, not warned about: a cordon (a deliberate state), a talosconfig node that is no
    /// longer a member. Never makes a cluster ✗ nor counts as a warning.
    Info,
    VersionSkew,
    CertificateExpiring,
    /// A node's memory or a volume past its gauge's failing threshold (memory ≥ 90% used, a
    /// volume ≥ 95% full).
    Pressure,
    NotReady,
    /// An etcd member unhealthy, an alarm, quorum lost or at risk.
    Etcd,
    /// A node or an API that does not answer.
    Down,
}

impl Severity {
    /// Whether it counts as a warning (WARN, ✗): everything but information.
    pub fn is_warning(self) -> bool {
        self > Severity::Info
    }

    /// A number that sorts the same way (0 for nothing wrong, 1 for information).
    pub fn rank(self) -> u8 {
        self as u8 + 1
    }
}

/// One thing wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub severity: Severity,
    /// The nodes it concerns, by name; empty for the cluster as a whole.
    pub nodes: Vec<String>,
    /// In the cluster's words, naming the node: `cp-1 etcd alarm NOSPACE`.
    pub text: String,
    /// In the node's own row, without its name: `etcd alarm NOSPACE`.
    pub on_node: String,
}

impl Problem {
    fn of_node(severity: Severity, node: &str, what: String) -> Problem {
        Problem {
            severity,
            nodes: vec![node.to_string()],
            text: format!("{node} {what}"),
            on_node: what,
        }
    }

    fn of_cluster(severity: Severity, nodes: Vec<String>, text: String) -> Problem {
        Problem {
            severity,
            nodes,
            on_node: text.clone(),
            text,
        }
    }

    pub fn concerns(&self, node: &NodeStatus) -> bool {
        self.nodes
            .iter()
            .any(|n| *n == node.name || *n == node.address)
    }
}

/// A node's state as a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeState {
    Ready,
    NotReady,
    /// It did not answer the last probe.
    Down,
    /// The talosconfig names it, it does not answer, and neither etcd's member list nor
    /// the Kubernetes nodes know it: a node removed from the cluster.
    NotAMember,
}

impl NodeState {
    pub fn word(self) -> &'static str {
        match self {
            NodeState::Ready => "Ready",
            NodeState::NotReady => "NotReady",
            NodeState::Down => "DOWN",
            NodeState::NotAMember => "not a member",
        }
    }
}

pub fn node_state(node: &NodeStatus) -> NodeState {
    if node.not_a_member {
        NodeState::NotAMember
    } else if node.error.is_some() {
        NodeState::Down
    } else if node.ready && node.k8s_ready != Some(false) {
        NodeState::Ready
    } else {
        NodeState::NotReady
    }
}

/// What the cluster-wide readings add to its nodes' own problems.
#[derive(Debug, Clone, Copy, Default)]
pub struct Readings<'a> {
    pub certs: &'a [CertExpiry],
    pub skew: &'a [SkewWarning],
    /// The latest usage read of the nodes whose usage is read (those on screen).
    pub usage: &'a [NodeUsage],
}

/// Every problem of `status`, most severe first (the order of the sources within one
/// severity kept). `staleness` says how long a node that stopped answering has been
/// silent (`stale 35s`), when the caller knows.
pub fn cluster_problems(
    status: &ClusterStatus,
    readings: Readings<'_>,
    staleness: &dyn Fn(&NodeStatus) -> Option<String>,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    if let Some(error) = &status.error {
        problems.push(Problem::of_cluster(
            Severity::Down,
            Vec::new(),
            format!("cannot ask: {error}"),
        ));
    }
    for node in &status.nodes {
        problems.extend(own_problems(node, staleness));
    }
    problems.extend(etcd_problems(&status.etcd));
    problems.extend(readings.usage.iter().flat_map(pressure_problems));
    if let Some(error) = status.kubernetes.as_ref().and_then(|k| k.error.as_ref()) {
        problems.push(Problem::of_cluster(
            Severity::Down,
            Vec::new(),
            format!("kubernetes: {error}"),
        ));
    }
    // Past or within 7 days before those within 30.
    for level in [ExpiryVerdict::Fail, ExpiryVerdict::Warn] {
        problems.extend(
            (readings.certs.iter())
                .filter(|c| c.verdict == level)
                .filter_map(expiry_problem)
                .map(|text| Problem::of_cluster(Severity::CertificateExpiring, Vec::new(), text)),
        );
    }
    problems.extend(
        readings.skew.iter().map(|w| {
            Problem::of_cluster(Severity::VersionSkew, w.nodes.clone(), w.message.clone())
        }),
    );
    rank(&mut problems);
    problems
}

/// The problems of one node among its cluster's, most severe first.
pub fn node_problems<'a>(problems: &'a [Problem], node: &NodeStatus) -> Vec<&'a Problem> {
    problems.iter().filter(|p| p.concerns(node)).collect()
}

/// [`node_problems`] for every node of a table at once: the problems indexed by the names and
/// addresses they concern, so a cluster of thousands of nodes is not searched once per node.
pub struct ProblemsByNode<'a> {
    problems: &'a [Problem],
    by_node: std::collections::HashMap<&'a str, Vec<usize>>,
}

impl<'a> ProblemsByNode<'a> {
    pub fn new(problems: &'a [Problem]) -> ProblemsByNode<'a> {
        let mut by_node: std::collections::HashMap<&'a str, Vec<usize>> = Default::default();
        for (at, problem) in problems.iter().enumerate() {
            for node in &problem.nodes {
                by_node.entry(node.as_str()).or_default().push(at);
            }
        }
        ProblemsByNode { problems, by_node }
    }

    /// `node`'s problems, in the order [`node_problems`] gives them.
    pub fn of(&self, node: &NodeStatus) -> Vec<&'a Problem> {
        let by = |key: &str| self.by_node.get(key).map(Vec::as_slice).unwrap_or_default();
        let mut found: Vec<usize> = [by(&node.name), by(&node.address)].concat();
        found.sort_unstable();
        found.dedup();
        found.into_iter().map(|at| &self.problems[at]).collect()
    }
}

/// Most severe first; within one severity the order found.
pub fn rank(problems: &mut [Problem]) {
    problems.sort_by_key(|p| std::cmp::Reverse(p.severity));
}

/// What a node says of itself: down (with its error), not a member, not Ready (what it
/// waits for, an unusual stage), cordoned.
fn own_problems(
    node: &NodeStatus,
    staleness: &dyn Fn(&NodeStatus) -> Option<String>,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    let name = node.name.as_str();
    match node_state(node) {
        NodeState::NotAMember => problems.push(Problem::of_node(
            Severity::Info,
            name,
            "not a member (only the talosconfig names it)".to_string(),
        )),
        NodeState::Down => {
            let age = staleness(node);
            let what = match &age {
                Some(age) => format!("DOWN ({age})"),
                None => "DOWN".to_string(),
            };
            let mut problem = Problem::of_node(Severity::Down, name, what);
            // The row's READY cell says DOWN already: its ISSUE says since when and why.
            let error = node.error.as_deref().unwrap_or_default();
            problem.on_node = format!("{}: {error}", age.as_deref().unwrap_or("DOWN"));
            problems.push(problem);
        }
        NodeState::NotReady => {
            let mut parts = Vec::new();
            let waits = node.unmet_names();
            if !waits.is_empty() {
                parts.push(format!("waits for {}", waits.join(", ")));
            }
            if let Some(stage) = node.stage.filter(|s| *s != MachineStage::Running) {
                parts.push(stage.to_string());
            }
            let what = if parts.is_empty() {
                "NotReady".to_string()
            } else {
                format!("NotReady: {}", parts.join("; "))
            };
            problems.push(Problem::of_node(Severity::NotReady, name, what));
        }
        NodeState::Ready => {}
    }
    if node.cordoned == Some(true) {
        problems.push(Problem::of_node(
            Severity::Info,
            name,
            "cordoned".to_string(),
        ));
    }
    problems
}

/// A node's memory and fullest volume when past their gauge's failing threshold.
fn pressure_problems(usage: &NodeUsage) -> Vec<Problem> {
    let failing =
        |gauge: Gauge, percent: Option<f64>| percent.filter(|p| gauge.level(*p) == Level::Failing);
    let memory =
        failing(Gauge::Memory, usage.memory_percent).map(|p| format!("memory {p:.0}% used"));
    let disk = failing(Gauge::Volume, usage.disk_percent).map(|p| format!("disk {p:.0}% full"));
    (memory.into_iter().chain(disk))
        .map(|what| Problem::of_node(Severity::Pressure, &usage.node, what))
        .collect()
}

/// Quorum lost, each alarm, each unhealthy member (each about the member's node, its
/// hostname, when it has one), then quorum at risk.
fn etcd_problems(etcd: &EtcdReport) -> Vec<Problem> {
    let mut problems = Vec::new();
    let q = etcd.quorum;
    if q.members > 0 && !q.has_quorum() && etcd.votes_lost() {
        problems.push(Problem::of_cluster(
            Severity::Etcd,
            Vec::new(),
            "etcd QUORUM LOST".to_string(),
        ));
    }
    for a in &etcd.alarms {
        // Short enough that the fleet's ISSUE cell keeps the alarm's kind at 80 columns.
        let what = format!("alarm {}", a.alarm);
        problems.push(match a.hostname.as_deref().filter(|h| !h.is_empty()) {
            Some(host) => Problem::of_node(Severity::Etcd, host, what),
            None => Problem::of_cluster(
                Severity::Etcd,
                Vec::new(),
                format!("etcd {what} on member {}", a.member_id),
            ),
        });
    }
    let alarmed = |id: &str| etcd.alarms.iter().any(|a| a.member_id == id);
    for m in etcd
        .members
        .iter()
        .filter(|m| !m.healthy && !alarmed(&m.id))
    {
        problems.push(Problem::of_node(
            Severity::Etcd,
            &m.hostname,
            "etcd unhealthy".to_string(),
        ));
    }
    if q.has_quorum() && q.members > 1 && q.tolerates == 0 {
        problems.push(Problem::of_cluster(
            Severity::Etcd,
            Vec::new(),
            "etcd can lose 0".to_string(),
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::{EtcdAlarmReport, EtcdMemberReport, Quorum};

    fn node(name: &str) -> NodeStatus {
        NodeStatus {
            name: name.into(),
            address: format!("127.10.0.{}", name.len()),
            ready: true,
            k8s_ready: Some(true),
            cordoned: Some(false),
            ..Default::default()
        }
    }

    fn no_age(_: &NodeStatus) -> Option<String> {
        None
    }

    #[test]
    fn the_order_is_down_etcd_not_ready_certificates_skew_then_information() {
        use Severity::*;
        let mut order = [
            Info,
            VersionSkew,
            CertificateExpiring,
            Pressure,
            NotReady,
            Etcd,
            Down,
        ];
        order.reverse();
        let mut sorted = order;
        sorted.sort();
        sorted.reverse();
        assert_eq!(sorted, order);
        assert!(Down.rank() > Etcd.rank() && Info.rank() == 1);
        assert!(!Info.is_warning() && VersionSkew.is_warning());
    }

    #[test]
    fn an_alarm_stays_beside_a_cordon_and_ranks_above_it() {
        let mut cp1 = node("cp-1");
        cp1.cordoned = Some(true);
        let status = ClusterStatus {
            nodes: vec![cp1.clone()],
            etcd: EtcdReport {
                members: vec![EtcdMemberReport {
                    id: "000000000000000a".into(),
                    hostname: "cp-1".into(),
                    healthy: false,
                    ..Default::default()
                }],
                alarms: vec![EtcdAlarmReport {
                    member_id: "000000000000000a".into(),
                    hostname: Some("cp-1".into()),
                    alarm: "NOSPACE".into(),
                }],
                quorum: Quorum::from_counts(1, 0),
            },
            ..Default::default()
        };
        let problems = cluster_problems(&status, Readings::default(), &no_age);
        let texts: Vec<&str> = problems.iter().map(|p| p.text.as_str()).collect();
        // The lone member still votes (an alarm stops writes, not votes): no quorum lost.
        assert_eq!(texts, ["cp-1 alarm NOSPACE", "cp-1 cordoned"]);
        let mine: Vec<&str> = node_problems(&problems, &cp1)
            .iter()
            .map(|p| p.on_node.as_str())
            .collect();
        assert_eq!(mine, ["alarm NOSPACE", "cordoned"]);
    }

    #[test]
    fn a_down_node_ranks_above_a_not_ready_one_and_says_how_long() {
        let mut w1 = node("w-1");
        w1.ready = false;
        w1.stage = Some(MachineStage::Booting);
        let mut w2 = node("w-2");
        w2.error = Some("connection refused".into());
        let status = ClusterStatus {
            nodes: vec![w1, w2],
            ..Default::default()
        };
        let age = |_: &NodeStatus| Some("stale 14s".to_string());
        let problems = cluster_problems(&status, Readings::default(), &age);
        let texts: Vec<&str> = problems.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, ["w-2 DOWN (stale 14s)", "w-1 NotReady: booting"]);
        assert_eq!(problems[0].on_node, "stale 14s: connection refused");
    }

    #[test]
    fn a_node_no_longer_a_member_is_information_not_down() {
        let mut gone = node("127.10.1.9");
        gone.error = Some("connection refused".into());
        gone.not_a_member = true;
        assert_eq!(node_state(&gone), NodeState::NotAMember);
        let status = ClusterStatus {
            nodes: vec![gone],
            ..Default::default()
        };
        let problems = cluster_problems(&status, Readings::default(), &no_age);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].severity, Severity::Info);
        assert!(problems[0].text.contains("not a member"), "{problems:?}");
    }

    #[test]
    fn skew_concerns_the_nodes_it_names() {
        let status = ClusterStatus {
            nodes: vec![node("cp-1"), node("w-1")],
            ..Default::default()
        };
        let skew = [SkewWarning {
            rule: crate::versions::VersionRule::KnownReleases,
            severity: crate::versions::Severity::Warn,
            message: "kubelet on w-1 lags".into(),
            nodes: vec!["w-1".into()],
        }];
        let readings = Readings {
            skew: &skew,
            ..Readings::default()
        };
        let problems = cluster_problems(&status, readings, &no_age);
        assert_eq!(node_problems(&problems, &status.nodes[0]).len(), 0);
        assert_eq!(node_problems(&problems, &status.nodes[1]).len(), 1);
    }

    #[test]
    fn a_failing_gauge_is_a_problem_of_its_node_and_a_warning_is_not() {
        let status = ClusterStatus {
            nodes: vec![node("cp-1"), node("w-1")],
            ..Default::default()
        };
        let usage = |name: &str, memory: f64, disk: f64| NodeUsage {
            node: name.into(),
            address: String::new(),
            cpu_percent: Some(100.0),
            memory_percent: Some(memory),
            disk_percent: Some(disk),
            level: Level::Ok,
            error: None,
        };
        let usage = [usage("cp-1", 89.0, 94.9), usage("w-1", 90.0, 96.0)];
        let readings = Readings {
            usage: &usage,
            ..Readings::default()
        };
        let problems = cluster_problems(&status, readings, &no_age);
        let texts: Vec<&str> = problems.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, ["w-1 memory 90% used", "w-1 disk 96% full"]);
        assert!(problems.iter().all(|p| p.severity == Severity::Pressure));
        assert_eq!(node_problems(&problems, &status.nodes[1]).len(), 2);
        let index = ProblemsByNode::new(&problems);
        for node in &status.nodes {
            let (one, all) = (node_problems(&problems, node), index.of(node));
            assert!(
                one.iter().zip(&all).all(|(a, b)| std::ptr::eq(*a, *b)) && one.len() == all.len()
            );
        }
    }
}
