//! taloscope's own config file (YAML): explicit cluster pairings, VM providers
//! (OpenNebula XML-RPC or OneFlow) and per cluster which provider, templates
//! and machine configs to provision with. A missing file is an empty config; a
//! broken one is an error that names the file and line.
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The whole config file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// VM providers by name.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// Clusters by the name taloscope shows, with the contexts that make them.
    #[serde(default)]
    pub clusters: BTreeMap<String, ClusterConfig>,
    /// How many `FILE.taloscope-backup-*` copies taloscope keeps beside the operator's
    /// kubeconfig and talosconfig when it rewrites them: they hold credentials. Default
    /// [`DEFAULT_KEPT_BACKUPS`]; at least 1.
    #[serde(default)]
    pub kept_backups: Option<usize>,
    /// The file this came from (relative paths in it were resolved against
    /// its directory).
    #[serde(skip)]
    pub file: Option<PathBuf>,
}

/// The backups kept beside a rewritten file when the config names no number.
pub const DEFAULT_KEPT_BACKUPS: usize = 5;

/// One cluster: its explicit pairing of a talos and a kube context, and how
/// to provision its nodes.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    pub talos_context: Option<String>,
    pub kube_context: Option<String>,
    /// The provider (a key of `providers`) new VMs come from.
    #[serde(default)]
    pub provider: Option<String>,
    /// VM template per role (OpenNebula XML-RPC providers).
    #[serde(default)]
    pub templates: RoleMap<NameOrId>,
    /// The OneFlow service whose `controlplane`/`worker` roles hold the nodes.
    #[serde(default)]
    pub service: Option<NameOrId>,
    /// Talos machine config per role, as `talosctl gen config` writes them.
    #[serde(default)]
    pub machine_configs: RoleMap<PathBuf>,
}

/// A Talos machine's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MachineRole {
    Controlplane,
    Worker,
}

impl MachineRole {
    pub fn as_str(self) -> &'static str {
        match self {
            MachineRole::Controlplane => "controlplane",
            MachineRole::Worker => "worker",
        }
    }

    pub fn parse(text: &str) -> Option<MachineRole> {
        match text {
            "controlplane" => Some(MachineRole::Controlplane),
            "worker" => Some(MachineRole::Worker),
            _ => None,
        }
    }
}

impl fmt::Display for MachineRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One value per machine role.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RoleMap<T> {
    #[serde(default = "none")]
    pub controlplane: Option<T>,
    #[serde(default = "none")]
    pub worker: Option<T>,
}

fn none<T>() -> Option<T> {
    None
}

impl<T> Default for RoleMap<T> {
    fn default() -> Self {
        RoleMap {
            controlplane: None,
            worker: None,
        }
    }
}

impl<T> RoleMap<T> {
    pub fn get(&self, role: MachineRole) -> Option<&T> {
        match role {
            MachineRole::Controlplane => self.controlplane.as_ref(),
            MachineRole::Worker => self.worker.as_ref(),
        }
    }
}

/// A template or service named by its numeric id or its name.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum NameOrId {
    Id(u64),
    Name(String),
}

impl NameOrId {
    /// A name that is all digits is an id, as the OpenNebula CLI reads it.
    pub fn id(&self) -> Option<u64> {
        match self {
            NameOrId::Id(id) => Some(*id),
            NameOrId::Name(n) => n.parse().ok(),
        }
    }
}

impl fmt::Display for NameOrId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameOrId::Id(id) => write!(f, "{id}"),
            NameOrId::Name(n) => f.write_str(n),
        }
    }
}

/// Which API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// VM templates instantiated through XML-RPC (`/RPC2`).
    Opennebula,
    /// A OneFlow service whose roles are scaled.
    Oneflow,
}

impl std::fmt::Display for ProviderKind {
    /// As OpenNebula spells its products.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ProviderKind::Opennebula => "OpenNebula",
            ProviderKind::Oneflow => "OneFlow",
        })
    }
}

/// A VM provider. Credentials: `username`+`password`, or an `auth_file`
/// (`user:password`), else `ONE_AUTH` / `~/.one/one_auth`.
#[derive(Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// XML-RPC URL (`…/RPC2`) or OneFlow URL; default `ONE_XMLRPC` / `ONEFLOW_URL`.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// For a OneFlow provider: the XML-RPC URL (`…/RPC2`) its VMs' state and IPs are read
    /// from, else `ONE_XMLRPC`; required, since OneFlow's service document carries neither.
    #[serde(default)]
    pub xmlrpc_endpoint: Option<String>,
    #[serde(default)]
    pub auth_file: Option<PathBuf>,
    #[serde(default)]
    pub username: Option<String>,
    #[serde(default)]
    pub password: Option<String>,
    /// The VM template per role new clusters are created from (XML-RPC providers); default
    /// the templates named `talos-controlplane` and `talos-worker`.
    #[serde(default)]
    pub templates: RoleMap<NameOrId>,
    /// The OneFlow service template new clusters are instantiated from, with roles
    /// `controlplane`, `worker` and optionally `gateway`; default the one named `talos`.
    #[serde(default)]
    pub service_template: Option<NameOrId>,
}

impl fmt::Debug for ProviderConfig {
    // The password never reaches logs or panics.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("kind", &self.kind)
            .field("endpoint", &self.endpoint)
            .field("xmlrpc_endpoint", &self.xmlrpc_endpoint)
            .field("auth_file", &self.auth_file)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("templates", &self.templates)
            .field("service_template", &self.service_template)
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
}

impl Config {
    /// Loads `path`. A missing file at the default location is an empty config;
    /// `required` (the user named the file) makes a missing file an error.
    pub fn load(path: &Path, required: bool) -> Result<Config, ConfigError> {
        match crate::bounded::read_to_string(path, crate::bounded::CONFIG_FILE_LIMIT) {
            Ok(text) => Config::parse(path, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
                Ok(Config::default())
            }
            Err(source) => Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// Parses `text` as the file `path`, resolving relative `auth_file` and
    /// `machine_configs` paths against the file's directory.
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Config {
                file: Some(path.to_path_buf()),
                ..Config::default()
            });
        }
        let mut config: Config = serde_saphyr::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        if config.kept_backups == Some(0) {
            return Err(ConfigError::Parse {
                path: path.to_path_buf(),
                message: "kept_backups: 0 would remove each backup as it is made (the delete lists the one holding your entries): give 1 or more".into(),
            });
        }
        let base = path.parent().unwrap_or(Path::new(""));
        for (name, p) in &mut config.providers {
            if p.username.is_some() != p.password.is_some() {
                return Err(ConfigError::Parse {
                    path: path.to_path_buf(),
                    message: format!("provider {name:?}: username and password go together"),
                });
            }
            if p.username.is_some() && p.auth_file.is_some() {
                return Err(ConfigError::Parse {
                    path: path.to_path_buf(),
                    message: format!(
                        "provider {name:?}: give either auth_file or username/password, not both"
                    ),
                });
            }
            if let Some(f) = &mut p.auth_file {
                *f = base.join(&*f);
            }
        }
        for c in config.clusters.values_mut() {
            for f in [
                &mut c.machine_configs.controlplane,
                &mut c.machine_configs.worker,
            ]
            .into_iter()
            .flatten()
            {
                *f = base.join(&*f);
            }
        }
        config.file = Some(path.to_path_buf());
        Ok(config)
    }

    /// The backups to keep beside each rewritten file.
    pub fn kept_backups(&self) -> usize {
        self.kept_backups.unwrap_or(DEFAULT_KEPT_BACKUPS)
    }

    /// How the file is named in messages.
    pub fn file_label(&self) -> String {
        self.file
            .as_ref()
            .map_or_else(|| "taloscope config".into(), |f| f.display().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_backups_defaults_to_five_and_zero_is_refused_naming_the_file() {
        let path = Path::new("/etc/taloscope.yaml");
        assert_eq!(Config::parse(path, "").unwrap().kept_backups(), 5);
        assert_eq!(
            Config::parse(path, "providers: {}\n")
                .unwrap()
                .kept_backups(),
            DEFAULT_KEPT_BACKUPS
        );
        let three = Config::parse(path, "kept_backups: 3\n").unwrap();
        assert_eq!(three.kept_backups(), 3);
        let zero = Config::parse(path, "kept_backups: 0\n")
            .unwrap_err()
            .to_string();
        assert!(
            zero.starts_with("/etc/taloscope.yaml: kept_backups: 0"),
            "{zero}"
        );
    }

    #[test]
    fn parses_pairings() {
        let cfg = Config::parse(
            Path::new("c.yaml"),
            "clusters:\n  prod:\n    talos_context: prod-talos\n    kube_context: prod-admin\n",
        )
        .unwrap();
        assert_eq!(
            cfg.clusters["prod"].kube_context.as_deref(),
            Some("prod-admin")
        );
        assert!(cfg.clusters["prod"].provider.is_none());
    }

    #[test]
    fn unknown_key_names_the_file() {
        let err = Config::parse(Path::new("/x/c.yaml"), "clustrs: {}\n").unwrap_err();
        assert!(err.to_string().starts_with("/x/c.yaml:"), "{err}");
    }

    #[test]
    fn missing_default_file_is_empty() {
        let cfg = Config::load(Path::new("/nonexistent/taloscope.yaml"), false).unwrap();
        assert!(cfg.clusters.is_empty());
        assert!(Config::load(Path::new("/nonexistent/taloscope.yaml"), true).is_err());
    }

    const PROVIDERS: &str = "\
providers:
  lab:
    kind: opennebula
    endpoint: http://127.0.0.1:2633/RPC2
    auth_file: one_auth
  flow:
    kind: oneflow
    endpoint: http://127.0.0.1:2474
    username: oneadmin
    password: s3cret
clusters:
  healthy:
    talos_context: healthy
    provider: lab
    templates: {controlplane: talos-cp, worker: 7}
    machine_configs: {controlplane: healthy/controlplane.yaml, worker: /abs/worker.yaml}
  flowy:
    provider: flow
    service: 3
";

    #[test]
    fn parses_providers_and_resolves_paths() {
        let cfg = Config::parse(Path::new("/state/taloscope.yaml"), PROVIDERS).unwrap();
        let lab = &cfg.providers["lab"];
        assert_eq!(lab.kind, ProviderKind::Opennebula);
        assert_eq!(lab.kind.to_string(), "OpenNebula");
        assert_eq!(ProviderKind::Oneflow.to_string(), "OneFlow");
        assert_eq!(lab.auth_file.as_deref(), Some(Path::new("/state/one_auth")));
        let flow = &cfg.providers["flow"];
        assert_eq!(flow.kind, ProviderKind::Oneflow);
        assert!(!format!("{flow:?}").contains("s3cret"));
        let h = &cfg.clusters["healthy"];
        assert_eq!(
            h.templates.get(MachineRole::Controlplane),
            Some(&NameOrId::Name("talos-cp".into()))
        );
        assert_eq!(h.templates.get(MachineRole::Worker), Some(&NameOrId::Id(7)));
        assert_eq!(
            h.machine_configs.get(MachineRole::Controlplane).unwrap(),
            Path::new("/state/healthy/controlplane.yaml")
        );
        assert_eq!(
            h.machine_configs.get(MachineRole::Worker).unwrap(),
            Path::new("/abs/worker.yaml")
        );
        assert_eq!(
            cfg.clusters["flowy"]
                .service
                .as_ref()
                .and_then(NameOrId::id),
            Some(3)
        );
        assert_eq!(cfg.file_label(), "/state/taloscope.yaml");
    }

    #[test]
    fn provider_errors_name_the_file() {
        for (text, wanted) in [
            ("providers:\n  p: {kind: vmware}\n", "vmware"),
            (
                "providers:\n  p: {kind: opennebula, username: u}\n",
                "go together",
            ),
            (
                "providers:\n  p: {kind: opennebula, username: u, password: x, auth_file: f}\n",
                "not both",
            ),
            ("clusters:\n  c: {templates: {wrker: 1}}\n", "wrker"),
        ] {
            let err = Config::parse(Path::new("/x/t.yaml"), text)
                .unwrap_err()
                .to_string();
            assert!(err.starts_with("/x/t.yaml:"), "{err}");
            assert!(err.contains(wanted), "{wanted}: {err}");
        }
    }
}
