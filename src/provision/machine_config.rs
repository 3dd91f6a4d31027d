//! Talos machine configs checked before anything is sent: the file reads, is
//! YAML (one or more documents), and its `machine.type` is the role asked
//! for. Errors name the file. The bytes are never logged: they hold secrets.
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::MachineRole;

#[derive(Debug, thiserror::Error)]
pub enum MachineConfigError {
    #[error("machine config {}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("machine config {}: not YAML: {message}", path.display())]
    NotYaml { path: PathBuf, message: String },
    #[error("machine config {}: no machine.type; is this a Talos machine config (talosctl gen config)?", path.display())]
    NoMachineType { path: PathBuf },
    #[error("machine config {}: machine.type is {found:?} but a {wanted} is being provisioned", path.display())]
    WrongRole {
        path: PathBuf,
        found: String,
        wanted: MachineRole,
    },
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Document {
    machine: Option<Machine>,
    cluster: Option<ClusterSection>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ClusterSection {
    #[serde(rename = "controlPlane")]
    control_plane: Option<ControlPlane>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ControlPlane {
    endpoint: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Machine {
    #[serde(rename = "type")]
    kind: Option<String>,
}

/// A checked machine config: the bytes to send as USER_DATA.
pub struct MachineConfig {
    pub path: PathBuf,
    bytes: Vec<u8>,
}

impl std::fmt::Debug for MachineConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MachineConfig")
            .field("path", &self.path)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

impl MachineConfig {
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The cluster endpoint the node will join (`cluster.controlPlane.endpoint`), if set.
    pub fn endpoint(&self) -> Option<String> {
        control_plane_endpoint(&String::from_utf8_lossy(&self.bytes))
    }

    /// Reads and checks `path` for `role`.
    pub fn load(path: &Path, role: MachineRole) -> Result<MachineConfig, MachineConfigError> {
        let text = crate::bounded::read_to_string(path, crate::bounded::CONFIG_FILE_LIMIT)
            .map_err(|source| MachineConfigError::Read {
                path: path.to_path_buf(),
                source,
            })?;
        check(path, &text, role)?;
        Ok(MachineConfig {
            path: path.to_path_buf(),
            bytes: text.into_bytes(),
        })
    }
}

/// `cluster.controlPlane.endpoint` of the first document that sets it.
pub fn control_plane_endpoint(text: &str) -> Option<String> {
    let docs: Vec<Document> = serde_saphyr::from_multiple(text).ok()?;
    docs.into_iter()
        .find_map(|d| d.cluster?.control_plane?.endpoint)
}

/// Checks the text of a machine config for `role` (`init` counts as a
/// control plane, as Talos treats it).
pub fn check(path: &Path, text: &str, role: MachineRole) -> Result<(), MachineConfigError> {
    let docs: Vec<Document> =
        serde_saphyr::from_multiple(text).map_err(|e| MachineConfigError::NotYaml {
            path: path.to_path_buf(),
            // The parser's message quotes at most a position, never the content.
            message: e.to_string().lines().next().unwrap_or_default().to_string(),
        })?;
    let found = docs
        .iter()
        .find_map(|d| d.machine.as_ref().and_then(|m| m.kind.clone()))
        .ok_or_else(|| MachineConfigError::NoMachineType {
            path: path.to_path_buf(),
        })?;
    let matches = match role {
        MachineRole::Controlplane => matches!(found.as_str(), "controlplane" | "init"),
        MachineRole::Worker => found == "worker",
    };
    if matches {
        Ok(())
    } else {
        Err(MachineConfigError::WrongRole {
            path: path.to_path_buf(),
            found,
            wanted: role,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKER: &str = "version: v1alpha1\nmachine:\n  type: worker\n  token: abc\ncluster:\n  clusterName: healthy\n";

    #[test]
    fn matching_role_passes() {
        check(Path::new("w.yaml"), WORKER, MachineRole::Worker).unwrap();
        let multi =
            format!("{WORKER}---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: stable\n");
        check(Path::new("w.yaml"), &multi, MachineRole::Worker).unwrap();
        let init = "machine:\n  type: init\n";
        check(Path::new("i.yaml"), init, MachineRole::Controlplane).unwrap();
    }

    #[test]
    fn errors_name_the_file() {
        let p = Path::new("/cfg/worker.yaml");
        let wrong = check(p, WORKER, MachineRole::Controlplane)
            .unwrap_err()
            .to_string();
        assert!(
            wrong.contains("/cfg/worker.yaml") && wrong.contains("\"worker\""),
            "{wrong}"
        );
        let none = check(p, "cluster: {}\n", MachineRole::Worker)
            .unwrap_err()
            .to_string();
        assert!(
            none.contains("/cfg/worker.yaml") && none.contains("machine.type"),
            "{none}"
        );
        let bad = check(p, "machine: [unclosed\n", MachineRole::Worker)
            .unwrap_err()
            .to_string();
        assert!(
            bad.contains("/cfg/worker.yaml") && bad.contains("not YAML"),
            "{bad}"
        );
        let missing = MachineConfig::load(Path::new("/nonexistent/w.yaml"), MachineRole::Worker)
            .unwrap_err()
            .to_string();
        assert!(missing.contains("/nonexistent/w.yaml"), "{missing}");
    }

    #[test]
    fn debug_shows_no_content() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.yaml");
        std::fs::write(&p, WORKER).unwrap();
        let mc = MachineConfig::load(&p, MachineRole::Worker).unwrap();
        assert_eq!(mc.bytes(), WORKER.as_bytes());
        assert!(!format!("{mc:?}").contains("token"));
    }
}
