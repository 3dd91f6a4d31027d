//! taloscope's own config file (YAML): explicit cluster pairings now; later
//! providers. A missing file is an empty config; a broken one is an error that
//! names the file and line.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The whole config file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Clusters by the name taloscope shows, with the contexts that make them.
    #[serde(default)]
    pub clusters: BTreeMap<String, ClusterConfig>,
}

/// One cluster's explicit pairing of a talos and a kube context.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    pub talos_context: Option<String>,
    pub kube_context: Option<String>,
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
        match std::fs::read_to_string(path) {
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

    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        serde_saphyr::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
