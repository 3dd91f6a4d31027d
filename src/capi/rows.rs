//! A cluster tree as rows, the way `clusterctl describe cluster` lays it out: one row per
//! object with its tree guide, counts, phase, version and node, and the conditions that need
//! attention. The console's CAPI pane and `taloscope capi status` print these same rows.
use std::time::Duration;

use super::tree::{ClusterTree, Counts, MachineNode, needs_attention};
use crate::kube::CapiCondition;
use crate::printable::yes_no;

/// One object of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow {
    /// For each ancestor below the root, whether it was the last of its siblings; then
    /// whether this row is the last of its own. Empty for the root.
    pub guides: Vec<bool>,
    /// `Cluster/workload`, `TalosControlPlane/workload-cp`, `Machine/…`.
    pub object: String,
    /// `current/desired` for the objects that have replicas.
    pub replicas: String,
    pub ready: String,
    pub up_to_date: String,
    pub available: String,
    pub phase: String,
    pub version: String,
    pub node: String,
    /// Every condition of the object, as the API gives them.
    pub conditions: Vec<CapiCondition>,
}

/// The tree's columns as `taloscope capi status` prints them, in `clusterctl describe
/// cluster`'s order.
pub const TREE_HEADER: [&str; 8] = [
    "NAME",
    "REPLICAS",
    "READY",
    "UP-TO-DATE",
    "AVAILABLE",
    "PHASE",
    "VERSION",
    "NODE",
];

impl TreeRow {
    /// The row's cells under [`TREE_HEADER`]: the object's name after its tree guide, then
    /// its counts, phase, version and node.
    pub fn cells(&self, ascii: bool) -> [String; 8] {
        [
            format!("{}{}", self.guide(ascii), self.object),
            self.replicas.clone(),
            self.ready.clone(),
            self.up_to_date.clone(),
            self.available.clone(),
            self.phase.clone(),
            self.version.clone(),
            self.node.clone(),
        ]
    }

    /// The conditions worth a line under the row ([`needs_attention`]).
    pub fn attention(&self) -> impl Iterator<Item = &CapiCondition> {
        self.conditions.iter().filter(|c| needs_attention(c))
    }

    /// The tree guide before the object's name: `├─ `, `│  └─ `…
    pub fn guide(&self, ascii: bool) -> String {
        let (branch, last, bar) = if ascii {
            ("|- ", "`- ", "|  ")
        } else {
            ("├─ ", "└─ ", "│  ")
        };
        let mut text = String::new();
        let depth = self.guides.len();
        for (i, &was_last) in self.guides.iter().enumerate() {
            text.push_str(match (i + 1 == depth, was_last) {
                (true, true) => last,
                (true, false) => branch,
                (false, true) => "   ",
                (false, false) => bar,
            });
        }
        text
    }

    /// The guide that continues below this row, for its condition lines.
    fn continuation(&self, ascii: bool) -> String {
        let bar = if ascii { "|  " } else { "│  " };
        self.guides
            .iter()
            .map(|&last| if last { "   " } else { bar })
            .collect()
    }

    /// The lines under this row, as `capi status` prints them and the console's CAPI screen
    /// draws them: each condition that needs attention after the guide that continues below
    /// the row and `mark`, with how long ago it changed (at `now`, as [`condition_age`]).
    pub fn attention_lines(&self, now: u64, ascii: bool, mark: &str) -> Vec<String> {
        (self.attention())
            .map(|c| {
                let age = condition_age(c, now)
                    .map(|a| format!(" ({a} ago)"))
                    .unwrap_or_default();
                let guide = self.continuation(ascii);
                format!("{guide}   {mark} {}{age}", condition_text(c))
            })
            .collect()
    }
}

/// `Ready False (Warning) WaitingForNode`: the condition's type, status, severity and reason.
pub fn condition_head(c: &CapiCondition) -> String {
    let mut text = format!("{} {}", c.kind, c.status);
    if !c.severity.is_empty() {
        text.push_str(&format!(" ({})", c.severity));
    }
    if !c.reason.is_empty() {
        text.push_str(&format!(" {}", c.reason));
    }
    text
}

/// `Ready False (Warning) WaitingForNode: message`, the condition in one line.
fn condition_text(c: &CapiCondition) -> String {
    let mut text = condition_head(c);
    if !c.message.is_empty() {
        let first = c.message.lines().next().unwrap_or_default();
        text.push_str(&format!(": {first}"));
    }
    crate::printable::line(&text)
}

/// How long ago the condition last changed, in words (`5m`), at `now` (unix seconds; 0 while
/// the wall clock is not known, then `None`); `None` when its time is missing or unreadable.
pub fn condition_age(c: &CapiCondition, now: u64) -> Option<String> {
    let at = crate::clock::parse_utc_timestamp(&c.last_transition_time)?;
    let at = crate::clock::unix_seconds(at);
    let age = Duration::from_secs(now.saturating_sub(at));
    (now > 0).then(|| crate::clock::age_text(age))
}

fn counts_row(
    object: String,
    counts: Counts,
    version: &str,
    conditions: &[CapiCondition],
) -> TreeRow {
    TreeRow {
        guides: Vec::new(),
        object,
        replicas: format!("{}/{}", counts.current, counts.replicas),
        ready: counts.ready.to_string(),
        up_to_date: counts.up_to_date.to_string(),
        available: counts.available.to_string(),
        phase: String::new(),
        version: version.to_string(),
        node: String::new(),
        conditions: conditions.to_vec(),
    }
}

fn machine_row(m: &MachineNode) -> TreeRow {
    let phase = if m.deleting {
        format!("{} (deleting)", m.phase)
    } else {
        m.phase.clone()
    };
    TreeRow {
        guides: Vec::new(),
        object: format!("Machine/{}", m.name),
        replicas: String::new(),
        ready: yes_no(m.ready).into(),
        up_to_date: yes_no(m.up_to_date).into(),
        available: yes_no(m.available).into(),
        phase,
        version: m.version.clone(),
        node: m.node.clone(),
        conditions: m.conditions.clone(),
    }
}

/// A row and its children, built depth-first.
struct Branch {
    row: TreeRow,
    children: Vec<Branch>,
}

fn flatten(branch: Branch, guides: Vec<bool>, out: &mut Vec<TreeRow>) {
    let mut row = branch.row;
    row.guides = guides.clone();
    out.push(row);
    let count = branch.children.len();
    for (i, child) in branch.children.into_iter().enumerate() {
        let mut child_guides = guides.clone();
        child_guides.push(i + 1 == count);
        flatten(child, child_guides, out);
    }
}

fn machine_branches<'a>(
    tree: &ClusterTree,
    names: impl IntoIterator<Item = &'a String>,
) -> Vec<Branch> {
    names
        .into_iter()
        .filter_map(|n| tree.machine(n))
        .map(|m| Branch {
            row: machine_row(m),
            children: Vec::new(),
        })
        .collect()
}

/// The rows of `tree`: the Cluster, its TalosControlPlane and control-plane Machines, each
/// MachineDeployment with its MachineSets and their Machines, then Machines no owner of the
/// tree claims.
pub fn tree_rows(tree: &ClusterTree) -> Vec<TreeRow> {
    let mut children = Vec::new();
    if let Some(cp) = &tree.control_plane {
        children.push(Branch {
            row: counts_row(
                format!("{}/{}", cp.kind, cp.name),
                cp.counts,
                &cp.version,
                &cp.conditions,
            ),
            children: machine_branches(tree, &cp.machines),
        });
    }
    for md in &tree.machine_deployments {
        let mut row = counts_row(
            format!("MachineDeployment/{}", md.name),
            md.counts,
            &md.version,
            &md.conditions,
        );
        row.phase = md.phase.clone();
        let sets = md
            .machine_sets
            .iter()
            .map(|s| Branch {
                row: counts_row(
                    format!("MachineSet/{}", s.name),
                    s.counts,
                    &s.version,
                    &s.conditions,
                ),
                children: machine_branches(tree, &s.machines),
            })
            .collect();
        children.push(Branch {
            row,
            children: sets,
        });
    }
    let unowned: Vec<&String> = tree.unowned_machines().map(|m| &m.name).collect();
    children.extend(machine_branches(tree, unowned));
    let root = TreeRow {
        guides: Vec::new(),
        object: format!("Cluster/{}", tree.cluster),
        replicas: String::new(),
        ready: String::new(),
        up_to_date: String::new(),
        available: String::new(),
        phase: tree.phase.clone(),
        version: tree.version.clone(),
        node: String::new(),
        conditions: tree.conditions.clone(),
    };
    let mut rows = Vec::new();
    flatten(
        Branch {
            row: root,
            children,
        },
        Vec::new(),
        &mut rows,
    );
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::tree_tests::fixture_tree;
    use crate::kube::CapiVersion;

    #[test]
    fn rows_follow_clusterctl_describes_grouping() {
        let rows = tree_rows(&fixture_tree(CapiVersion::V1beta2));
        let drawn: Vec<String> = rows
            .iter()
            .map(|r| format!("{}{}", r.guide(true), r.object))
            .collect();
        assert_eq!(
            drawn,
            [
                "Cluster/workload",
                "|- TalosControlPlane/workload-cp",
                "|  |- Machine/workload-cp-a",
                "|  |- Machine/workload-cp-b",
                "|  `- Machine/workload-cp-c",
                "`- MachineDeployment/workload-workers",
                "   `- MachineSet/workload-workers-7f9c",
                "      |- Machine/workload-workers-7f9c-q8zt",
                "      `- Machine/workload-workers-7f9c-x2k4",
            ]
        );
        let cp = &rows[1];
        assert_eq!(
            (
                cp.replicas.as_str(),
                cp.ready.as_str(),
                cp.up_to_date.as_str()
            ),
            ("3/3", "3", "2")
        );
        let cells = cp.cells(false);
        assert_eq!(cells.len(), TREE_HEADER.len());
        assert_eq!(cells[0], "├─ TalosControlPlane/workload-cp");
        assert_eq!(cells[1..5], ["3/3", "3", "2", cp.available.as_str()]);
        let (phase, version, node) = (&cp.phase, &cp.version, &cp.node);
        assert_eq!(
            cells[5..],
            [phase.as_str(), version.as_str(), node.as_str()]
        );
        assert_eq!(rows[4].continuation(true), "|     ");
    }

    #[test]
    fn a_condition_reads_in_one_line_with_its_age() {
        let c = CapiCondition {
            kind: "Ready".into(),
            status: "False".into(),
            reason: "WaitingForNode".into(),
            message: "no node yet\nsecond line".into(),
            last_transition_time: "2026-12-01T11:50:00Z".into(),
            severity: "Info".into(),
        };
        assert_eq!(
            condition_text(&c),
            "Ready False (Info) WaitingForNode: no node yet"
        );
        let at = crate::clock::unix_seconds(
            crate::clock::parse_utc_timestamp("2026-12-01T11:55:00Z").unwrap(),
        );
        assert_eq!(condition_age(&c, at).as_deref(), Some("5m"));
        assert_eq!(condition_age(&c, 0), None, "no wall clock yet");
        let row = TreeRow {
            guides: vec![true, false],
            object: "Machine/workload-cp-a".into(),
            conditions: vec![c],
            ..tree_rows(&fixture_tree(CapiVersion::V1beta2)).remove(0)
        };
        assert_eq!(
            row.attention_lines(at, true, "!"),
            ["   |     ! Ready False (Info) WaitingForNode: no node yet (5m ago)"]
        );
        assert_eq!(
            row.attention_lines(0, false, "⚠"),
            ["   │     ⚠ Ready False (Info) WaitingForNode: no node yet"]
        );
    }
}
