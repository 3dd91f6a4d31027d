//! Drift: the nodes of one role compared value by value, section by section, leaving out what
//! Talos makes per node by design (hostname, addresses, certSANs, the install disk). Each
//! differing path names which nodes hold which value; secrets compare by their redaction.
use std::collections::BTreeMap;

use serde::Serialize;

use super::{ConfigDocument, NodeConfig, redact};
use crate::cluster_config::ConfigNode;

/// Map keys whose values differ per node by design: `machine.network.hostname` and the
/// `HostnameConfig` document's `hostname`, any `addresses` (interfaces, links), any `certSANs`
/// (`machine.certSANs` generated per node, `cluster.apiServer.certSANs`), the install disk
/// (`machine.install.disk` / `diskSelector`).
const PER_NODE_KEYS: &[&str] = &["hostname", "addresses", "certSANs", "disk", "diskSelector"];

/// One value a path has, and the nodes that have it; `None`: the path is absent there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DriftValue {
    pub value: Option<String>,
    pub nodes: Vec<String>,
}

/// A path whose value is not the same on every node of the role.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DriftEntry {
    /// The document and its first two keys (`machine.registries`, `RegistryMirrorConfig
    /// ghcr.io`).
    pub section: String,
    /// The full path (`machine.registries.mirrors."ghcr.io".endpoints`).
    pub path: String,
    /// Each value with its nodes, the most common first.
    pub values: Vec<DriftValue>,
}

/// The nodes of one role and where their configurations differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RoleDrift {
    /// `controlplane` or `worker`.
    pub role: String,
    /// The nodes compared (those whose configuration was read).
    pub nodes: Vec<String>,
    pub drift: Vec<DriftEntry>,
}

fn key_segment(key: &str) -> String {
    if key.contains('.') || key.contains(' ') {
        format!("{key:?}")
    } else {
        key.to_string()
    }
}

fn scalar_or_inline(node: &ConfigNode) -> Option<String> {
    match node {
        ConfigNode::Null => Some("null".into()),
        ConfigNode::Bool(b) => Some(b.to_string()),
        ConfigNode::Int(i) => Some(i.to_string()),
        ConfigNode::Float(f) => Some(f.to_string()),
        ConfigNode::Str(s) => Some(s.clone()),
        ConfigNode::Map(entries) if entries.is_empty() => Some("{}".into()),
        // A list of scalars is one value: its order is part of it.
        ConfigNode::Seq(items) if items.iter().all(|i| !matches!(i, ConfigNode::Map(_))) => {
            serde_json::to_string(node).ok()
        }
        _ => None,
    }
}

/// Every leaf of `node` as (path, value), per-node keys left out when `per_node_out`.
fn leaves(node: &ConfigNode, prefix: &str, per_node_out: bool, out: &mut Vec<(String, String)>) {
    if let Some(value) = scalar_or_inline(node) {
        out.push((prefix.to_string(), value));
        return;
    }
    match node {
        ConfigNode::Map(entries) => {
            for (key, value) in entries {
                if per_node_out && PER_NODE_KEYS.contains(&key.as_str()) {
                    continue;
                }
                let path = if prefix.is_empty() {
                    key_segment(key)
                } else {
                    format!("{prefix}.{}", key_segment(key))
                };
                leaves(value, &path, per_node_out, out);
            }
        }
        ConfigNode::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                leaves(item, &format!("{prefix}[{i}]"), per_node_out, out);
            }
        }
        _ => {}
    }
}

/// The document's own prefix: none for v1alpha1, its title for a typed document.
fn document_prefix(doc: &ConfigDocument) -> Option<String> {
    (doc.kind != "v1alpha1").then(|| doc.title())
}

/// (section, path) → value, of one node's configuration.
type FlatConfig = BTreeMap<(String, String), String>;

/// Every compared (section, path) → value of one node's configuration.
fn flatten(config: &NodeConfig) -> FlatConfig {
    let mut out = BTreeMap::new();
    for doc in &config.documents {
        let mut found = Vec::new();
        leaves(&doc.body, "", true, &mut found);
        let prefix = document_prefix(doc);
        for (path, value) in found {
            let section = match &prefix {
                Some(p) => p.clone(),
                None => path.split('.').take(2).collect::<Vec<_>>().join("."),
            };
            let full = match &prefix {
                Some(p) => format!("{p}: {path}"),
                None => path,
            };
            out.insert((section, full), value);
        }
    }
    out
}

/// The drift among `configs`, all of one role. Nodes are listed in the order given.
pub fn role_drift(role: &str, configs: &[NodeConfig]) -> RoleDrift {
    let flat: Vec<(&str, FlatConfig)> = configs
        .iter()
        .map(|c| (c.node.as_str(), flatten(c)))
        .collect();
    let mut paths: Vec<&(String, String)> = flat.iter().flat_map(|(_, f)| f.keys()).collect();
    paths.sort();
    paths.dedup();
    let mut drift = Vec::new();
    for key in paths {
        let mut values: Vec<DriftValue> = Vec::new();
        for (node, f) in &flat {
            let value = f.get(key).cloned();
            match values.iter_mut().find(|v| v.value == value) {
                Some(v) => v.nodes.push(node.to_string()),
                None => values.push(DriftValue {
                    value,
                    nodes: vec![node.to_string()],
                }),
            }
        }
        if values.len() > 1 {
            values.sort_by_key(|v| std::cmp::Reverse(v.nodes.len()));
            drift.push(DriftEntry {
                section: key.0.clone(),
                path: key.1.clone(),
                values,
            });
        }
    }
    RoleDrift {
        role: role.to_string(),
        nodes: configs.iter().map(|c| c.node.clone()).collect(),
        drift,
    }
}

/// One path a change touches: its value before and after (`None`: absent), secrets compared
/// by their redaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ConfigChange {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// Every path whose value differs between two versions of one node's documents, in path
/// order; per-node keys included (a patch may change them on purpose).
pub fn config_changes(before: &[ConfigNode], after: &[ConfigNode]) -> Vec<ConfigChange> {
    let flat = |docs: &[ConfigNode]| -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for body in docs {
            let mut body = body.clone();
            redact(&mut body);
            let doc = ConfigDocument::of(body);
            let prefix = document_prefix(&doc);
            let mut found = Vec::new();
            leaves(&doc.body, "", false, &mut found);
            for (path, value) in found {
                let full = match &prefix {
                    Some(p) => format!("{p}: {path}"),
                    None => path,
                };
                out.insert(full, value);
            }
        }
        out
    };
    let (before, after) = (flat(before), flat(after));
    let mut paths: Vec<&String> = before.keys().chain(after.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter(|p| before.get(*p) != after.get(*p))
        .map(|p| ConfigChange {
            path: p.clone(),
            before: before.get(p).cloned(),
            after: after.get(p).cloned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::documents;
    use super::*;

    fn config(node: &str, text: &str) -> NodeConfig {
        let (documents, redacted) = documents(node, text, false).expect("parses");
        NodeConfig {
            node: node.into(),
            address: String::new(),
            version: "1".into(),
            revealed: false,
            redacted,
            documents,
        }
    }

    const BASE: &str = "version: v1alpha1\nmachine:\n  type: worker\n  token: abc.def\n  certSANs: [127.0.0.4]\n  network:\n    hostname: HOST\n    interfaces:\n      - interface: eth0\n        addresses: [127.0.0.4/8]\n  install:\n    disk: /dev/sda\n    image: ghcr.io/siderolabs/installer:v1.13.0\n";

    #[test]
    fn per_node_values_are_not_drift() {
        let a = config("w-1", &BASE.replace("HOST", "w-1"));
        let b = config(
            "w-2",
            &BASE
                .replace("HOST", "w-2")
                .replace("127.0.0.4", "127.0.0.5")
                .replace("/dev/sda", "/dev/nvme0n1"),
        );
        assert_eq!(role_drift("worker", &[a, b]).drift, vec![]);
    }

    #[test]
    fn an_extra_mirror_names_its_path_and_node() {
        let a = config("w-1", BASE);
        let b = config("w-3", BASE);
        let c = config(
            "w-2",
            &format!(
                "{BASE}  registries:\n    mirrors:\n      ghcr.io:\n        endpoints: [\"https://127.0.0.1:5443\"]\n"
            ),
        );
        let drift = role_drift("worker", &[a, b, c]);
        assert_eq!(drift.drift.len(), 1, "{drift:?}");
        let entry = &drift.drift[0];
        assert_eq!(entry.section, "machine.registries");
        assert_eq!(
            entry.path,
            "machine.registries.mirrors.\"ghcr.io\".endpoints"
        );
        assert_eq!(
            entry.values,
            vec![
                DriftValue {
                    value: None,
                    nodes: vec!["w-1".into(), "w-3".into()]
                },
                DriftValue {
                    value: Some("[\"https://127.0.0.1:5443\"]".into()),
                    nodes: vec!["w-2".into()]
                },
            ]
        );
    }

    #[test]
    fn a_different_secret_is_drift_shown_redacted() {
        let a = config("w-1", BASE);
        let b = config("w-2", &BASE.replace("abc.def", "xyz.uvw"));
        let drift = role_drift("worker", &[a, b]);
        assert_eq!(drift.drift.len(), 1);
        assert_eq!(drift.drift[0].path, "machine.token");
        for v in &drift.drift[0].values {
            let text = v.value.as_deref().unwrap_or_default();
            assert!(text.starts_with("<redacted sha256:"), "{text}");
        }
    }

    #[test]
    fn changes_name_each_path_a_patch_touches_secrets_by_their_redaction() {
        let parse = |text: &str| ConfigNode::parse_talos_documents(text).expect("parses");
        let before = parse(
            "machine:\n  token: old.secret\n  network:\n    hostname: w-1\n---\nkind: RegistryMirrorConfig\nname: ghcr.io\nendpoints:\n  - url: https://a\n",
        );
        let after = parse(
            "machine:\n  token: new.secret\n  network:\n    hostname: w-9\n  kubelet:\n    extraArgs:\n      max-pods: \"250\"\n---\nkind: RegistryMirrorConfig\nname: ghcr.io\nendpoints:\n  - url: https://a\n",
        );
        let changes = config_changes(&before, &after);
        let paths: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "machine.kubelet.extraArgs.max-pods",
                "machine.network.hostname",
                "machine.token"
            ]
        );
        assert_eq!(changes[0].before, None);
        assert_eq!(changes[0].after.as_deref(), Some("250"));
        let token = &changes[2];
        for shown in [&token.before, &token.after] {
            let shown = shown.as_deref().expect("present");
            assert!(shown.starts_with("<redacted sha256:"), "{shown}");
            assert!(!shown.contains("secret"), "{shown}");
        }
        assert!(config_changes(&before, &before).is_empty());
    }
}
