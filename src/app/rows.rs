//! The rows of each table, from discovery and the live fleet model: the
//! fleet (one row per cluster, naming its hot spots), and the nodes (with
//! their CPU, memory and disk use), etcd and versions panes of the cluster in
//! use. Cells not known yet are placeholders, never waits.
use std::collections::HashMap;

use super::screen::TableKind;
use super::state::AppState;
use super::tables::{Column, Order, TableCell, TableRow, Tone, Width, col, natural_cmp, wide};
use crate::discovery::Cluster;
use crate::discovery::report::paired_by_word;
use crate::fleet::problems::{NodeState, ProblemsByNode, Severity, node_state};
use crate::fleet::summary::role_word;
use crate::fleet::{ClusterLive, ComponentReport, NodeRole, NodeStatus};
use crate::machine_config::DriftMark;
use crate::node_resources::{Gauge, Level, NodeUsage};
pub use crate::printable::bytes_text;

pub const FLEET_COLUMNS: &[Column] = &[
    col("NAME", Width::Fill(2)).names(),
    wide("CONTEXTS", Width::Fill(2)),
    col("REACH", Width::Content),
    col("NODES", Width::Content),
    col("ETCD", Width::Content),
    col("TALOS", Width::Content),
    col("K8S", Width::Content),
    col("WARN", Width::Content).sorted(Order::WorstFirst),
    col("ISSUE", Width::Fill(3)),
    wide("HOT SPOTS", Width::Fill(2)),
    wide("UPDATED", Width::Content),
];

pub const NODE_COLUMNS: &[Column] = &[
    col("NAME", Width::Fill(2)).names(),
    col("ROLE", Width::Content),
    col("ADDRESS", Width::Content),
    // Wide only: the node detail says it at every size.
    wide("SOURCE", Width::Content),
    wide("STAGE", Width::Content),
    col("READY", Width::Content),
    col("TALOS", Width::Content),
    col("KUBELET", Width::Content),
    // Read only for the rows on screen (`update_panes::usage_request`). Wide only: at 80
    // columns they would cut the versions; a failing one is the row's ISSUE there.
    wide("CPU%", Width::Content).sorted(Order::HighestFirst),
    wide("MEM%", Width::Content).sorted(Order::HighestFirst),
    wide("DISK%", Width::Content).sorted(Order::HighestFirst),
    wide("CORDON", Width::Content),
    // Wide only: at 80 columns it would cut the ISSUE column, which says more. Shown while a
    // node differs from its role: a reader context, which may not read configurations, and a
    // cluster without drift show nothing.
    wide("DRIFT", Width::Content).when_filled(),
    col("ISSUE", Width::Fill(3)).sorted(Order::WorstFirst),
];

pub const ETCD_COLUMNS: &[Column] = &[
    col("HOSTNAME", Width::Fill(2)).names(),
    col("ID", Width::Content),
    col("ROLE", Width::Content),
    col("HEALTH", Width::Content),
    col("DB SIZE", Width::Content),
    col("IN USE", Width::Content),
    col("TERM", Width::Content),
    col("INDEX", Width::Content),
    wide("ERRORS", Width::Fill(3)),
];

pub const VERSION_COLUMNS: &[Column] = &[
    col("NODE", Width::Fill(2)).names(),
    col("ROLE", Width::Content),
    col("TALOS", Width::Content),
    col("KUBELET", Width::Content),
    col("APISERVER", Width::Content),
    col("CTRL-MGR", Width::Content),
    col("SCHEDULER", Width::Content),
];

/// The discovery list's: how discovery put each cluster together.
pub const CLUSTER_COLUMNS: &[Column] = &[
    col("NAME", Width::Fill(3)).names().sorted(Order::Listed),
    col("TALOS CONTEXT", Width::Fill(3)),
    col("KUBE CONTEXT", Width::Fill(3)),
    col("ENDPOINTS", Width::Fill(4)),
    col("PAIRED BY", Width::Content),
];

/// One of the console's own tables, said once: its columns, its rows as the state shows
/// them, its title and what it says while it has no rows.
#[derive(Debug)]
pub struct TableSpec {
    pub columns: &'static [Column],
    pub rows: fn(&AppState) -> Vec<TableRow>,
    pub title: &'static str,
    pub empty: &'static str,
}

impl TableSpec {
    /// The column it sorts by until the operator sorts: problems first where a column ranks
    /// them (the fleet's WARN, the nodes pane's ISSUE), else the first.
    pub fn default_sort(&self) -> usize {
        (self.columns.iter())
            .position(|c| c.order == Order::WorstFirst)
            .unwrap_or(0)
    }
}

/// What the fleet and the discovery list say when discovery found nothing.
const NO_CLUSTERS: &str = "No clusters found in kubeconfig or talosconfig. `taloscope info` shows where taloscope looked.";

/// Every table's spec, in `TableKind` order.
#[rustfmt::skip]
pub static SPECS: [TableSpec; 5] = [
    TableSpec { columns: FLEET_COLUMNS, rows: fleet_rows, title: "Clusters", empty: NO_CLUSTERS },
    TableSpec { columns: CLUSTER_COLUMNS, rows: cluster_rows, title: "Clusters", empty: NO_CLUSTERS },
    TableSpec { columns: NODE_COLUMNS, rows: node_rows, title: "Nodes", empty: "No node has answered yet." },
    TableSpec { columns: ETCD_COLUMNS, rows: etcd_rows, title: "etcd", empty: "No etcd member known yet." },
    TableSpec { columns: VERSION_COLUMNS, rows: version_rows, title: "Versions", empty: "No node has answered yet." },
];

impl TableKind {
    /// The table's spec.
    pub fn spec(self) -> &'static TableSpec {
        &SPECS[self as usize]
    }
}

/// One row per discovered cluster: its contexts, the Talos endpoints (the API server of a
/// cluster with only a kube context) and how it was paired; the cluster in use stands out.
pub fn cluster_rows(state: &AppState) -> Vec<TableRow> {
    (state.clusters.iter())
        .map(|c| {
            let in_use = state.current.as_deref() == Some(c.name.as_str());
            let endpoints = match c.endpoints() {
                [] => c.kube_server().unwrap_or_default().to_string(),
                talos => talos.join(", "),
            };
            let paired = paired_by_word(c).unwrap_or("unpaired");
            let paired_tone = if c.paired_by.is_some() {
                Tone::Ok
            } else {
                Tone::Warn
            };
            TableRow {
                key: c.name.clone(),
                cells: vec![
                    TableCell::new(&c.name, if in_use { Tone::Accent } else { Tone::Plain }),
                    TableCell::maybe(c.talos_context()),
                    TableCell::maybe(c.kube_context()),
                    TableCell::maybe(Some(&endpoints)),
                    TableCell::new(paired, paired_tone),
                ],
            }
        })
        .collect()
}

pub fn fleet_rows(state: &AppState) -> Vec<TableRow> {
    state
        .clusters
        .iter()
        .map(|c| {
            let live = state.fleet.cluster(&c.name);
            TableRow {
                key: c.name.clone(),
                cells: fleet_cells(c, live, state),
            }
        })
        .collect()
}

fn fleet_cells(cluster: &Cluster, live: Option<&ClusterLive>, state: &AppState) -> Vec<TableCell> {
    // "talos-ctx / kube-ctx", with `-` for a side the cluster lacks.
    let (talos, kube) = (cluster.talos_context(), cluster.kube_context());
    let contexts = format!("{} / {}", talos.unwrap_or("-"), kube.unwrap_or("-"));
    let mut cells = vec![TableCell::plain(&cluster.name), TableCell::plain(contexts)];
    let Some(live) = live.filter(|l| l.answered()) else {
        cells.extend(std::iter::repeat_n(TableCell::unknown(), 6));
        let waiting = if cluster.talos.is_some() {
            "waiting"
        } else {
            "kube only"
        };
        cells.push(TableCell::new(waiting, Tone::Muted));
        cells.push(TableCell::unknown());
        cells.push(TableCell::unknown());
        return cells;
    };
    let h = super::prepared::health(state, &cluster.name, live);
    cells.push(if h.reachable {
        TableCell::new("yes", Tone::Ok)
    } else {
        TableCell::new("NO", Tone::Error)
    });
    let all_ready = h.nodes_ready == h.nodes_total;
    cells.push(TableCell::new(
        format!("{}/{}", h.nodes_ready, h.nodes_total),
        if all_ready { Tone::Ok } else { Tone::Warn },
    ));
    let q = h.quorum;
    cells.push(if q.members == 0 {
        TableCell::unknown()
    } else {
        let tone = match (q.has_quorum(), q.at_risk()) {
            (false, _) => Tone::Error,
            (true, true) => Tone::Warn,
            (true, false) => Tone::Ok,
        };
        TableCell::new(
            format!("{}/{} lose {}", q.healthy, q.members, q.tolerates),
            tone,
        )
    });
    cells.push(match (&h.talos_min, &h.talos_max) {
        (Some(lo), Some(hi)) if lo == hi => TableCell::plain(lo.to_string()),
        (Some(lo), Some(hi)) => TableCell::new(format!("{lo}..{hi}"), Tone::Warn),
        _ => TableCell::unknown(),
    });
    cells.push(TableCell::maybe(h.kubernetes.as_deref()));
    let count = h.warning_count();
    let rank = h.worst.map_or(0, Severity::rank);
    cells.push(
        TableCell::new(
            count.to_string(),
            if count == 0 { Tone::Muted } else { Tone::Warn },
        )
        .ranked(rank),
    );
    // A rollout explains most problems (a node rebooting), so it comes first.
    let issue = match (&live.status.rollout, h.all.first()) {
        (Some(rollout), _) => TableCell::new(rollout.brief(), Tone::Warn),
        (None, Some(p)) => TableCell::new(p.text.clone(), problem_tone(p.severity)),
        (None, None) => match state.fleet.capi.owner(&cluster.name) {
            // All is well: the row says who owns the cluster instead.
            Some(owner) => TableCell::new(format!("CAPI: {owner}"), Tone::Ok),
            None => TableCell::new("ok", Tone::Ok),
        },
    };
    cells.push(issue.ranked(rank));
    cells.push(hot_spots(&live.usage));
    cells.push(match (h.stale.clone(), h.updated.clone()) {
        (Some(age), _) => TableCell::new(age, Tone::Warn),
        (None, Some(age)) => TableCell::plain(age),
        (None, None) => TableCell::unknown(),
    });
    cells
}

/// One figure of a node's usage.
type Figure = fn(&NodeUsage) -> Option<f64>;

/// The usage figures the tables show (CPU%, MEM%, DISK%), each with the gauge that colours it
/// (CPU has none).
const FIGURES: [(&str, Figure, Option<Gauge>); 3] = [
    ("cpu", |u| u.cpu_percent, None),
    ("mem", |u| u.memory_percent, Some(Gauge::Memory)),
    ("disk", |u| u.disk_percent, Some(Gauge::Volume)),
];

/// The busiest node by CPU, memory and disk among those read (`cpu w-1 97% mem cp-2 41%
/// disk w-1 96%`), each in its gauge's tone.
fn hot_spots(usage: &[NodeUsage]) -> TableCell {
    let worst = |figure: Figure| {
        (usage.iter())
            .filter_map(|u| Some((u, figure(u)?)))
            .max_by(|a, b| {
                a.1.total_cmp(&b.1)
                    .then_with(|| natural_cmp(&b.0.node, &a.0.node))
            })
    };
    let mut parts = Vec::new();
    let mut level = Level::Ok;
    for (what, figure, gauge) in FIGURES {
        if let Some((node, percent)) = worst(figure) {
            parts.push(format!("{what} {} {percent:.0}%", node.node));
            level = level.max(gauge.map_or(Level::Ok, |g| g.level(percent)));
        }
    }
    match parts.is_empty() {
        true => TableCell::unknown(),
        false => TableCell::new(parts.join(" "), level_tone(level)),
    }
}

fn level_tone(level: Level) -> Tone {
    match level {
        Level::Ok => Tone::Plain,
        Level::Warning => Tone::Warn,
        Level::Failing => Tone::Error,
    }
}

/// A node's figure as a whole percent, in its gauge's tone; the placeholder before a read
/// and a muted `?` for a node that could not be read.
fn usage_cell(usage: Option<&NodeUsage>, figure: Figure, gauge: Option<Gauge>) -> TableCell {
    match (usage, usage.and_then(figure)) {
        (None, _) => TableCell::unknown(),
        (Some(_), Some(percent)) => {
            let level = gauge.map_or(Level::Ok, |g| g.level(percent));
            TableCell::new(format!("{percent:.0}"), level_tone(level))
        }
        (Some(_), None) => TableCell::new("?", Tone::Muted),
    }
}

/// How a node's configuration stands against its role's (`machine_config::ClusterDrift::mark`):
/// empty when the same, before a read and for a context that may not read it.
fn drift_cell(mark: Option<&DriftMark>) -> TableCell {
    match mark {
        Some(DriftMark::Differs(sections)) => TableCell::new(sections, Tone::Warn),
        Some(DriftMark::Unread) => TableCell::new("?", Tone::Muted),
        Some(DriftMark::Same) | None => TableCell::plain(""),
    }
}

/// A node's state as a word in its tone: the nodes pane's READY and node detail's state.
pub fn ready_cell(state: NodeState) -> TableCell {
    let tone = match state {
        NodeState::Ready => Tone::Ok,
        NodeState::NotReady => Tone::Warn,
        NodeState::Down => Tone::Error,
        NodeState::NotAMember => Tone::Muted,
    };
    TableCell::new(state.word(), tone)
}

/// How a problem of `severity` is coloured: what is broken red, warnings
/// yellow, information plain.
fn problem_tone(severity: Severity) -> Tone {
    match severity {
        Severity::Down | Severity::Etcd | Severity::Pressure => Tone::Error,
        Severity::NotReady | Severity::CertificateExpiring | Severity::VersionSkew => Tone::Warn,
        Severity::Info => Tone::Plain,
    }
}

/// Every problem of a node, most severe first: the first in words, `+N` for
/// the rest (node detail lists them all).
fn node_issue(problems: &ProblemsByNode, n: &NodeStatus) -> TableCell {
    let mine = problems.of(n);
    let Some(first) = mine.first() else {
        return TableCell::plain("");
    };
    let text = match mine.len() {
        1 => first.on_node.clone(),
        more => format!("{} +{}", first.on_node, more - 1),
    };
    TableCell::new(text, problem_tone(first.severity)).ranked(first.severity.rank())
}

pub fn node_rows(state: &AppState) -> Vec<TableRow> {
    let Some(live) = state.current_live() else {
        return Vec::new();
    };
    let health = super::prepared::health(state, &live.status.name, live);
    let problems = ProblemsByNode::new(&health.all);
    live.status
        .nodes
        .iter()
        .map(|n| {
            let issue = node_issue(&problems, n);
            let usage = live.usage.iter().find(|u| u.address == n.address);
            let [cpu, memory, disk] = FIGURES.map(|(_, f, gauge)| usage_cell(usage, f, gauge));
            TableRow {
                key: n.address.clone(),
                cells: vec![
                    TableCell::plain(&n.name),
                    TableCell::plain(role_word(n.role)),
                    TableCell::plain(&n.address),
                    TableCell::plain(n.source.as_str()),
                    TableCell::maybe(n.stage.map(|s| s.as_str())),
                    ready_cell(node_state(n)),
                    TableCell::maybe(n.talos_version.as_deref()),
                    TableCell::maybe(n.kubelet_version.as_deref()),
                    cpu,
                    memory,
                    disk,
                    match n.cordoned {
                        Some(true) => TableCell::new("yes", Tone::Warn),
                        Some(false) => TableCell::new("no", Tone::Muted),
                        None => TableCell::unknown(),
                    },
                    drift_cell(live.config_drift.get(&n.address)),
                    issue,
                ],
            }
        })
        .collect()
}

pub fn etcd_rows(state: &AppState) -> Vec<TableRow> {
    let Some(live) = state.current_live() else {
        return Vec::new();
    };
    // The alarm's kind is on the pane's alarms line.
    let alarmed = |id: &str| live.status.etcd.alarms.iter().any(|a| a.member_id == id);
    live.status
        .etcd
        .members
        .iter()
        .map(|m| {
            let number = |v: Option<u64>| TableCell::maybe(v.map(|v| v.to_string()).as_deref());
            let size = |v: Option<i64>| TableCell::maybe(v.map(bytes_text).as_deref());
            TableRow {
                key: m.id.clone(),
                cells: vec![
                    TableCell::maybe(Some(m.hostname.as_str())),
                    TableCell::plain(&m.id),
                    match (m.leader, m.is_learner) {
                        (true, _) => TableCell::new("* leader", Tone::Ok),
                        (false, true) => TableCell::new("learner", Tone::Warn),
                        (false, false) => TableCell::plain("voter"),
                    },
                    if alarmed(&m.id) {
                        TableCell::new("ALARM", Tone::Error)
                    } else if m.healthy {
                        TableCell::new("ok", Tone::Ok)
                    } else {
                        TableCell::new("DOWN", Tone::Error)
                    },
                    size(m.db_size),
                    size(m.db_size_in_use),
                    number(m.raft_term),
                    number(m.raft_index),
                    TableCell::new(m.errors.join("; "), Tone::Error),
                ],
            }
        })
        .collect()
}

pub fn version_rows(state: &AppState) -> Vec<TableRow> {
    let Some(live) = state.current_live() else {
        return Vec::new();
    };
    let status = &live.status;
    // Components by the node they run on (name or address), looked up once.
    let mut components: HashMap<&str, Vec<&ComponentReport>> = HashMap::new();
    for c in status.kubernetes.iter().flat_map(|k| &k.components) {
        components.entry(c.node.as_str()).or_default().push(c);
    }
    status
        .nodes
        .iter()
        .map(|n| {
            let on_node: Vec<&ComponentReport> = [n.name.as_str(), n.address.as_str()]
                .iter()
                .filter_map(|key| components.get(key))
                .flatten()
                .copied()
                .collect();
            let component = |name: &str| {
                let found = on_node.iter().find(|c| c.name == name);
                match (found, n.role) {
                    (Some(c), _) => TableCell::plain(&c.version),
                    (None, NodeRole::Worker) => TableCell::plain(""),
                    (None, _) => TableCell::unknown(),
                }
            };
            TableRow {
                key: n.address.clone(),
                cells: vec![
                    TableCell::plain(&n.name),
                    TableCell::plain(role_word(n.role)),
                    TableCell::maybe(n.talos_version.as_deref()),
                    TableCell::maybe(n.kubelet_version.as_deref()),
                    component("kube-apiserver"),
                    component("kube-controller-manager"),
                    component("kube-scheduler"),
                ],
            }
        })
        .collect()
}
