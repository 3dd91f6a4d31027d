//! A cluster's drift: every node's configuration read (one `MachineConfigs` read a node, the
//! client's bounded fan-out), the nodes of each role compared (`role_drift`), and the mark
//! each node gets: what `taloscope config drift` prints and the nodes pane's DRIFT column.
use serde::Serialize;

use super::{DriftValue, MachineConfigError, RoleDrift, read_node_config, role_drift};
use crate::talos::{TalosClient, fan_out};

/// A node whose configuration is compared: its name, where the Talos API reaches it, and its
/// role (`controlplane` or `worker`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriftTarget {
    pub name: String,
    pub address: String,
    pub role: String,
}

/// A node whose configuration could not be read, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnreadNode {
    pub node: String,
    pub error: String,
}

/// Each role's drift, in the order the roles were first named, and the nodes not read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClusterDrift {
    pub roles: Vec<RoleDrift>,
    pub unread: Vec<UnreadNode>,
}

/// How one node's configuration stands against the others of its role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriftMark {
    /// As the others of its role (or alone in it).
    Same,
    /// Differs: the first differing section, `+N` for each further one.
    Differs(String),
    /// Its configuration could not be read.
    Unread,
}

/// Reads every target's configuration and compares the nodes of each role. A refusal for
/// want of os:admin is every node's (the context lacks the role) and ends the read.
pub async fn read_cluster_drift(
    talos: &TalosClient,
    targets: &[DriftTarget],
) -> Result<ClusterDrift, MachineConfigError> {
    let addresses: Vec<String> = targets.iter().map(|t| t.address.clone()).collect();
    let reads = fan_out(
        &addresses,
        talos.options().concurrency,
        |address| async move {
            let target = targets.iter().find(|t| t.address == address);
            let name = target.map_or(address.as_str(), |t| t.name.as_str());
            read_node_config(talos, name, &address, false).await
        },
    )
    .await;
    let mut by_role: Vec<(&str, Vec<_>)> = Vec::new();
    let mut unread = Vec::new();
    for (target, (_, read)) in targets.iter().zip(reads) {
        match read {
            Ok(config) => match by_role.iter_mut().find(|(r, _)| *r == target.role) {
                Some((_, configs)) => configs.push(config),
                None => by_role.push((&target.role, vec![config])),
            },
            Err(e @ MachineConfigError::NeedsAdmin { .. }) => return Err(e),
            Err(e) => unread.push(UnreadNode {
                node: target.name.clone(),
                error: e.to_string(),
            }),
        }
    }
    let roles = by_role
        .iter()
        .map(|(role, configs)| role_drift(role, configs))
        .collect();
    Ok(ClusterDrift { roles, unread })
}

impl ClusterDrift {
    /// The mark of the node named `node`: `Differs` where its value is not its role's common
    /// one: the value most nodes hold; on a tie, the path's absence (a node carrying what the
    /// others lack is the one a change reached), else none (every node differs).
    pub fn mark(&self, node: &str) -> DriftMark {
        if self.unread.iter().any(|u| u.node == node) {
            return DriftMark::Unread;
        }
        let Some(role) = self
            .roles
            .iter()
            .find(|r| r.nodes.iter().any(|n| n == node))
        else {
            return DriftMark::Unread;
        };
        let mut sections: Vec<&str> = Vec::new();
        for entry in &role.drift {
            let most = entry.values.first().map_or(0, |v| v.nodes.len());
            let tied: Vec<&DriftValue> = (entry.values.iter())
                .filter(|v| v.nodes.len() == most)
                .collect();
            let common = match tied.as_slice() {
                [one] => Some(*one),
                _ => tied.iter().find(|v| v.value.is_none()).copied(),
            };
            let holds_common = common.is_some_and(|v| v.nodes.iter().any(|n| n == node));
            if !holds_common && !sections.contains(&entry.section.as_str()) {
                sections.push(&entry.section);
            }
        }
        match sections.as_slice() {
            [] => DriftMark::Same,
            [one] => DriftMark::Differs(one.to_string()),
            [first, rest @ ..] => DriftMark::Differs(format!("{first} +{}", rest.len())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::DriftEntry;
    use super::*;

    fn entry(section: &str, values: &[(&str, &[&str])]) -> DriftEntry {
        DriftEntry {
            section: section.into(),
            path: format!("{section}.x"),
            values: values
                .iter()
                .map(|(v, nodes)| DriftValue {
                    value: Some(v.to_string()),
                    nodes: nodes.iter().map(|n| n.to_string()).collect(),
                })
                .collect(),
        }
    }

    fn workers(drift: Vec<DriftEntry>) -> ClusterDrift {
        ClusterDrift {
            roles: vec![RoleDrift {
                role: "worker".into(),
                nodes: vec!["w-1".into(), "w-2".into(), "w-3".into()],
                drift,
            }],
            unread: vec![UnreadNode {
                node: "w-4".into(),
                error: "timed out".into(),
            }],
        }
    }

    #[test]
    fn the_node_off_the_common_value_is_marked_with_its_sections() {
        let drift = workers(vec![
            entry(
                "machine.registries",
                &[("a", &["w-1", "w-3"]), ("b", &["w-2"])],
            ),
            entry(
                "machine.kubelet",
                &[("a", &["w-1", "w-3"]), ("b", &["w-2"])],
            ),
            entry(
                "machine.sysctls",
                &[("a", &["w-1", "w-3"]), ("b", &["w-2"])],
            ),
        ]);
        assert_eq!(
            drift.mark("w-2"),
            DriftMark::Differs("machine.registries +2".into())
        );
        assert_eq!(drift.mark("w-1"), DriftMark::Same);
        assert_eq!(drift.mark("w-4"), DriftMark::Unread);
        assert_eq!(drift.mark("cp-9"), DriftMark::Unread);
    }

    #[test]
    fn on_a_tie_the_node_carrying_what_the_other_lacks_differs() {
        let mut entry = entry("machine.registries", &[("a", &["w-1"]), ("b", &["w-2"])]);
        entry.values[0].value = None;
        let drift = workers(vec![entry]);
        assert_eq!(drift.mark("w-1"), DriftMark::Same);
        assert_eq!(
            drift.mark("w-2"),
            DriftMark::Differs("machine.registries".into())
        );
    }

    #[test]
    fn without_a_common_value_every_node_differs() {
        let drift = workers(vec![entry(
            "machine.kubelet",
            &[("a", &["w-1"]), ("b", &["w-2"]), ("c", &["w-3"])],
        )]);
        for node in ["w-1", "w-2", "w-3"] {
            assert_eq!(
                drift.mark(node),
                DriftMark::Differs("machine.kubelet".into())
            );
        }
    }
}
