//! A node's running machine configuration as the operator reads it: the `MachineConfigs`
//! resource read over the Talos API (sensitive: os:admin only), its documents, every secret
//! redacted unless revealed (`redact`), the nodes of one role compared (`drift`), and every
//! node of a cluster read and marked against its role (`cluster_drift`).
pub mod cluster_drift;
pub mod drift;
pub mod redact;

use serde::Serialize;

use crate::cluster_config::ConfigNode;
use crate::talos::{TalosClient, TalosError};

pub use cluster_drift::{ClusterDrift, DriftMark, DriftTarget, UnreadNode, read_cluster_drift};
pub use drift::{ConfigChange, DriftEntry, DriftValue, RoleDrift, config_changes, role_drift};
pub use redact::{redact, redaction};

/// The largest configuration read from a node: a machine config is kilobytes; anything past
/// this is not one.
pub const MAX_CONFIG_BYTES: usize = 4 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum MachineConfigError {
    #[error(
        "context {context:?}: node {node}: reading the machine configuration needs os:admin (MachineConfigs is a sensitive resource); this context's certificate has {roles}"
    )]
    NeedsAdmin {
        context: String,
        node: String,
        roles: String,
    },
    #[error("context {context:?}: node {node}: cannot read the machine configuration: {source}")]
    Read {
        context: String,
        node: String,
        source: Box<TalosError>,
    },
    #[error(
        "node {node}: the machine configuration is {size} bytes, more than the {MAX_CONFIG_BYTES} a config can be"
    )]
    TooLarge { node: String, size: usize },
    #[error("node {node}: the machine configuration is not YAML: {reason}")]
    Parse { node: String, reason: String },
}

/// One document of a configuration: the v1alpha1 one, or a typed document (`kind`, and its
/// `name` when it has one).
#[derive(Clone, Debug, Serialize)]
pub struct ConfigDocument {
    /// `v1alpha1`, or the document's `kind` (`HostnameConfig`, `RegistryMirrorConfig`…).
    pub kind: String,
    pub name: Option<String>,
    /// The document, secrets redacted unless the configuration was revealed.
    #[serde(rename = "config")]
    pub body: ConfigNode,
}

impl ConfigDocument {
    /// A document with the kind and name it says it has (`v1alpha1` when it names none).
    pub fn of(body: ConfigNode) -> ConfigDocument {
        let kind = body
            .get("kind")
            .and_then(ConfigNode::as_str)
            .unwrap_or("v1alpha1")
            .to_string();
        let name = body
            .get("name")
            .and_then(ConfigNode::as_str)
            .map(str::to_string);
        ConfigDocument { kind, name, body }
    }

    /// `v1alpha1`, `HostnameConfig` or `RegistryMirrorConfig ghcr.io`.
    pub fn title(&self) -> String {
        match &self.name {
            Some(name) => format!("{} {name}", self.kind),
            None => self.kind.clone(),
        }
    }
}

/// A node's running configuration, split into its documents.
#[derive(Clone, Debug, Serialize)]
pub struct NodeConfig {
    pub node: String,
    pub address: String,
    /// The `MachineConfigs` resource version the documents were read at.
    pub version: String,
    /// Whether secrets are shown as they are (`--reveal`); otherwise each is redacted.
    pub revealed: bool,
    /// How many secrets were redacted.
    pub redacted: usize,
    pub documents: Vec<ConfigDocument>,
}

/// The documents of a configuration's text: each with its kind and name, secrets redacted
/// unless `reveal`; the second value counts the redactions.
pub fn documents(
    node: &str,
    text: &str,
    reveal: bool,
) -> Result<(Vec<ConfigDocument>, usize), MachineConfigError> {
    if text.len() > MAX_CONFIG_BYTES {
        return Err(MachineConfigError::TooLarge {
            node: node.to_string(),
            size: text.len(),
        });
    }
    let parsed =
        ConfigNode::parse_talos_documents(text).map_err(|e| MachineConfigError::Parse {
            node: node.to_string(),
            reason: e.to_string(),
        })?;
    let mut redacted = 0;
    let mut out = Vec::new();
    for mut body in parsed.into_iter().filter(|d| *d != ConfigNode::Null) {
        if !reveal {
            redacted += redact(&mut body);
        }
        out.push(ConfigDocument::of(body));
    }
    Ok((out, redacted))
}

/// Reads `node`'s running configuration (at `address`) through `talos`.
pub async fn read_node_config(
    talos: &TalosClient,
    node: &str,
    address: &str,
    reveal: bool,
) -> Result<NodeConfig, MachineConfigError> {
    let resource = talos
        .machine_config(address)
        .await
        .map_err(|source| match source {
            TalosError::PermissionDenied { .. } => MachineConfigError::NeedsAdmin {
                context: talos.context().to_string(),
                node: node.to_string(),
                roles: talos.roles().to_string(),
            },
            source => MachineConfigError::Read {
                context: talos.context().to_string(),
                node: node.to_string(),
                source: Box::new(source),
            },
        })?;
    let (documents, redacted) = documents(node, &resource.spec, reveal)?;
    Ok(NodeConfig {
        node: node.to_string(),
        address: address.to_string(),
        version: resource.version,
        revealed: reveal,
        redacted,
        documents,
    })
}

/// The configuration as a YAML stream, one document after another, made printable.
pub fn yaml_text(config: &NodeConfig) -> String {
    let docs: Vec<String> = config
        .documents
        .iter()
        .map(|d| {
            d.body.to_yaml().unwrap_or_else(|e| {
                format!("# document {} cannot be written as YAML: {e}\n", d.title())
            })
        })
        .collect();
    crate::printable::lines(&docs.join("---\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_keep_their_kind_and_name() {
        let text = "version: v1alpha1\nmachine:\n  token: abc.def\n---\napiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: ghcr.io\nendpoints:\n  - url: https://127.0.0.1:5443\n";
        let (docs, redacted) = documents("w-1", text, false).expect("parses");
        assert_eq!(redacted, 1);
        let titles: Vec<String> = docs.iter().map(ConfigDocument::title).collect();
        assert_eq!(titles, ["v1alpha1", "RegistryMirrorConfig ghcr.io"]);
        let (revealed, none) = documents("w-1", text, true).expect("parses");
        assert_eq!(none, 0);
        assert_eq!(
            revealed[0]
                .body
                .at("machine.token")
                .and_then(ConfigNode::as_str),
            Some("abc.def")
        );
    }

    #[test]
    fn a_config_too_large_or_not_yaml_names_the_node() {
        let big = "a".repeat(MAX_CONFIG_BYTES + 1);
        let err = documents("cp-1", &big, false).unwrap_err().to_string();
        assert!(err.starts_with("node cp-1:"), "{err}");
        let err = documents("cp-2", "machine: [", false)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("node cp-2: the machine configuration is not YAML"),
            "{err}"
        );
    }
}
