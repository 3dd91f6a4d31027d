//! Where discovery looks: kubeconfig, talosconfig and taloscope's own config
//! file, resolved from flags, environment and the default locations. The
//! environment is passed in, so tests never touch the process environment.
use std::path::{Path, PathBuf};

use super::{DiscoveryError, Sources};
use crate::config::{Config, ConfigError};
use crate::paths::Paths;

/// The files named on the command line (`--config`, `--kubeconfig`,
/// `--talosconfig`); each wins over its environment variable and default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceOverrides {
    pub config: Option<PathBuf>,
    pub kubeconfig: Option<PathBuf>,
    pub talosconfig: Option<PathBuf>,
}

/// Where Talos mounts a talosconfig into pods with API access.
const TALOS_SERVICE_ACCOUNT_CONFIG: &str = "/var/run/secrets/talos.dev/config";

impl Sources {
    /// Resolves the files to read. Flags win over the environment, which wins
    /// over the default locations. Files named by a flag or variable are kept
    /// even when missing (discovery reports them); default locations are kept
    /// only when they exist. A broken config file is an error entry, and the
    /// config is then empty.
    pub fn resolve(
        overrides: &SourceOverrides,
        env: &dyn Fn(&str) -> Option<String>,
        paths: &Paths,
    ) -> (Sources, Vec<DiscoveryError>) {
        let non_empty = |name: &str| env(name).filter(|v| !v.is_empty());
        let home = non_empty("HOME").map(PathBuf::from);

        let kubeconfigs = match (&overrides.kubeconfig, non_empty("KUBECONFIG")) {
            (Some(file), _) => vec![file.clone()],
            (None, Some(list)) => split_path_list(&list),
            (None, None) => home
                .iter()
                .map(|h| h.join(".kube/config"))
                .filter(|p| p.exists())
                .collect(),
        };

        let talosconfigs = match (&overrides.talosconfig, non_empty("TALOSCONFIG")) {
            (Some(file), _) => vec![file.clone()],
            (None, Some(list)) => split_path_list(&list),
            (None, None) => default_talosconfig(non_empty("TALOS_HOME"), home.as_deref())
                .into_iter()
                .collect(),
        };

        let named_config = overrides
            .config
            .clone()
            .or_else(|| non_empty("TALOSCOPE_CONFIG").map(PathBuf::from));
        let (config_file, required) = match named_config {
            Some(file) => (file, true),
            None => (paths.default_config_file(), false),
        };
        let mut errors = Vec::new();
        let config = match Config::load(&config_file, required) {
            Ok(config) => config,
            Err(err) => {
                errors.push(config_error(err));
                Config::default()
            }
        };
        let config_file = (required || config_file.exists()).then_some(config_file);

        let sources = Sources {
            kubeconfigs,
            talosconfigs,
            config,
            config_file,
        };
        (sources, errors)
    }
}

/// A `:`-separated list as kubectl reads `KUBECONFIG`: empty entries skipped,
/// a file listed twice read once.
fn split_path_list(list: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for entry in list.split(':').filter(|e| !e.is_empty()) {
        let file = PathBuf::from(entry);
        if !files.contains(&file) {
            files.push(file);
        }
    }
    files
}

/// talosctl's default: `$TALOS_HOME/config` when TALOS_HOME is absolute, else
/// `~/.talos/config`; then the service-account mount. The first that exists.
fn default_talosconfig(talos_home: Option<String>, home: Option<&Path>) -> Option<PathBuf> {
    talosconfig_candidates(talos_home, home)
        .into_iter()
        .find(|p| p.exists())
}

/// Every place talosctl's default talosconfig may be, in the order it looks.
fn talosconfig_candidates(talos_home: Option<String>, home: Option<&Path>) -> Vec<PathBuf> {
    let talos_dir = talos_home
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| home.map(|h| h.join(".talos")));
    talos_dir
        .map(|dir| dir.join("config"))
        .into_iter()
        .chain(std::iter::once(PathBuf::from(TALOS_SERVICE_ACCOUNT_CONFIG)))
        .collect()
}

/// Where [`Sources::resolve`] looked, one line per kind of file, for an operator told that
/// nothing was found: the flag or the variable that named the files, or that neither was set
/// and the default locations, each file marked when missing.
pub fn where_looked(
    overrides: &SourceOverrides,
    env: &dyn Fn(&str) -> Option<String>,
    paths: &Paths,
) -> Vec<String> {
    let non_empty = |name: &str| env(name).filter(|v| !v.is_empty());
    let home = non_empty("HOME").map(PathBuf::from);
    let files = |list: &[PathBuf]| {
        list.iter()
            .map(|f| with_presence(f))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let kind = |what: &str, flag: &Option<PathBuf>, variable: &str, defaults: Vec<PathBuf>| {
        let place = match (flag, non_empty(variable)) {
            (Some(file), _) => format!("--{what} {}", with_presence(file)),
            (None, Some(list)) => format!("{variable}={list}: {}", files(&split_path_list(&list))),
            (None, None) if defaults.is_empty() => {
                format!("--{what} not given, {variable} not set, and no HOME for the default")
            }
            (None, None) => format!(
                "--{what} not given, {variable} not set; default {}",
                files(&defaults)
            ),
        };
        format!("{what}: {place}")
    };
    let kube_default: Vec<PathBuf> = home.iter().map(|h| h.join(".kube/config")).collect();
    let talos_default = talosconfig_candidates(non_empty("TALOS_HOME"), home.as_deref());
    let config = overrides
        .config
        .clone()
        .or_else(|| non_empty("TALOSCOPE_CONFIG").map(PathBuf::from))
        .unwrap_or_else(|| paths.default_config_file());
    vec![
        kind(
            "kubeconfig",
            &overrides.kubeconfig,
            "KUBECONFIG",
            kube_default,
        ),
        kind(
            "talosconfig",
            &overrides.talosconfig,
            "TALOSCONFIG",
            talos_default,
        ),
        format!("taloscope config: {}", with_presence(&config)),
    ]
}

/// A path as shown to the operator, marked `(missing)` when nothing is there.
pub fn with_presence(path: &Path) -> String {
    if path.exists() {
        path.display().to_string()
    } else {
        format!("{} (missing)", path.display())
    }
}

fn config_error(err: ConfigError) -> DiscoveryError {
    let (file, message) = match err {
        ConfigError::Read { path, source } => (path, format!("cannot read: {source}")),
        // The parser may add a source snippet below the first line; one line
        // reads better in the table and in JSON.
        ConfigError::Parse { path, message } => {
            let first = message.lines().next().unwrap_or_default().trim().to_owned();
            (path, first)
        }
    };
    DiscoveryError {
        file,
        context: None,
        message,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::fs;

    use super::*;

    fn paths_in(dir: &Path) -> Paths {
        Paths {
            config_dir: dir.join("config"),
            state_dir: dir.join("state"),
        }
    }

    fn resolve_with(
        overrides: &SourceOverrides,
        vars: &[(&str, String)],
        paths: &Paths,
    ) -> (Sources, Vec<DiscoveryError>) {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        Sources::resolve(overrides, &|name| vars.get(name).cloned(), paths)
    }

    #[test]
    fn where_looked_names_the_flags_variables_and_default_files() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let vars: HashMap<&str, String> = [("HOME", home.display().to_string())].into();
        let env = |name: &str| vars.get(name).cloned();
        let lines = where_looked(&SourceOverrides::default(), &env, &paths_in(dir.path()));
        let kube = format!("{}/.kube/config (missing)", home.display());
        let talos = format!("{}/.talos/config (missing)", home.display());
        assert!(
            lines[0].starts_with("kubeconfig: --kubeconfig not given, KUBECONFIG not set")
                && lines[0].contains(&kube),
            "{lines:?}"
        );
        assert!(
            lines[1].contains("TALOSCONFIG not set") && lines[1].contains(&talos),
            "{lines:?}"
        );
        assert!(lines[2].starts_with("taloscope config: "), "{lines:?}");

        let listed: HashMap<&str, String> = [("KUBECONFIG", "/nowhere/a:/nowhere/b".into())].into();
        let env = |name: &str| listed.get(name).cloned();
        let overrides = SourceOverrides {
            talosconfig: Some("/nowhere/talos".into()),
            ..SourceOverrides::default()
        };
        let lines = where_looked(&overrides, &env, &paths_in(dir.path()));
        assert_eq!(
            lines[0],
            "kubeconfig: KUBECONFIG=/nowhere/a:/nowhere/b: /nowhere/a (missing), /nowhere/b (missing)"
        );
        assert_eq!(
            lines[1],
            "talosconfig: --talosconfig /nowhere/talos (missing)"
        );
    }

    #[test]
    fn flag_wins_over_environment() {
        let dir = tempfile::tempdir().unwrap();
        let overrides = SourceOverrides {
            kubeconfig: Some("/flag/kube".into()),
            talosconfig: Some("/flag/talos".into()),
            ..SourceOverrides::default()
        };
        let vars = [
            ("KUBECONFIG", "/env/a:/env/b".to_string()),
            ("TALOSCONFIG", "/env/c".to_string()),
        ];
        let (sources, errors) = resolve_with(&overrides, &vars, &paths_in(dir.path()));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(sources.kubeconfigs, vec![PathBuf::from("/flag/kube")]);
        assert_eq!(sources.talosconfigs, vec![PathBuf::from("/flag/talos")]);
    }

    #[test]
    fn environment_lists_skip_empty_entries_and_repeats() {
        let dir = tempfile::tempdir().unwrap();
        let vars = [
            ("KUBECONFIG", "/a::/b:/a:".to_string()),
            ("TALOSCONFIG", ":/c:/d".to_string()),
        ];
        let (sources, _) = resolve_with(&SourceOverrides::default(), &vars, &paths_in(dir.path()));
        assert_eq!(
            sources.kubeconfigs,
            vec![PathBuf::from("/a"), PathBuf::from("/b")]
        );
        assert_eq!(
            sources.talosconfigs,
            vec![PathBuf::from("/c"), PathBuf::from("/d")]
        );
    }

    #[test]
    fn defaults_come_from_home_when_the_files_exist() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let vars = [("HOME", home.display().to_string())];
        let (sources, _) = resolve_with(&SourceOverrides::default(), &vars, &paths_in(dir.path()));
        assert!(sources.kubeconfigs.is_empty());
        assert!(
            sources
                .talosconfigs
                .iter()
                .all(|p| p == Path::new(TALOS_SERVICE_ACCOUNT_CONFIG))
        );

        fs::create_dir_all(home.join(".kube")).unwrap();
        fs::create_dir_all(home.join(".talos")).unwrap();
        fs::write(home.join(".kube/config"), "").unwrap();
        fs::write(home.join(".talos/config"), "").unwrap();
        let (sources, _) = resolve_with(&SourceOverrides::default(), &vars, &paths_in(dir.path()));
        assert_eq!(sources.kubeconfigs, vec![home.join(".kube/config")]);
        assert_eq!(sources.talosconfigs, vec![home.join(".talos/config")]);
    }

    #[test]
    fn talos_home_counts_only_when_absolute() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let talos_home = dir.path().join("talos-home");
        fs::create_dir_all(home.join(".talos")).unwrap();
        fs::create_dir_all(&talos_home).unwrap();
        fs::write(home.join(".talos/config"), "").unwrap();
        fs::write(talos_home.join("config"), "").unwrap();

        let vars = [
            ("HOME", home.display().to_string()),
            ("TALOS_HOME", talos_home.display().to_string()),
        ];
        let (sources, _) = resolve_with(&SourceOverrides::default(), &vars, &paths_in(dir.path()));
        assert_eq!(sources.talosconfigs, vec![talos_home.join("config")]);

        let vars = [
            ("HOME", home.display().to_string()),
            ("TALOS_HOME", "relative/dir".to_string()),
        ];
        let (sources, _) = resolve_with(&SourceOverrides::default(), &vars, &paths_in(dir.path()));
        assert_eq!(sources.talosconfigs, vec![home.join(".talos/config")]);
    }

    #[test]
    fn missing_default_config_is_fine_but_a_named_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let (sources, errors) =
            resolve_with(&SourceOverrides::default(), &[], &paths_in(dir.path()));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(sources.config_file, None);

        let missing = dir.path().join("nope.yaml");
        let vars = [("TALOSCOPE_CONFIG", missing.display().to_string())];
        let (sources, errors) =
            resolve_with(&SourceOverrides::default(), &vars, &paths_in(dir.path()));
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].file, missing);
        assert_eq!(sources.config_file, Some(missing));
    }

    #[test]
    fn broken_config_is_an_error_entry_and_an_empty_config() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("taloscope.yaml");
        fs::write(&file, "clusters:\n  prod: [unclosed\n").unwrap();
        let overrides = SourceOverrides {
            config: Some(file.clone()),
            ..SourceOverrides::default()
        };
        let (sources, errors) = resolve_with(&overrides, &[], &paths_in(dir.path()));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].file, file);
        assert!(sources.config.clusters.is_empty());
        assert!(
            errors[0].message.contains("line 2"),
            "{}",
            errors[0].message
        );
        assert!(!errors[0].message.contains('\n'), "{}", errors[0].message);
    }

    #[test]
    fn default_config_file_is_read_when_present() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        fs::create_dir_all(&paths.config_dir).unwrap();
        fs::write(
            paths.default_config_file(),
            "clusters:\n  prod:\n    talos_context: p\n",
        )
        .unwrap();
        let (sources, errors) = resolve_with(&SourceOverrides::default(), &[], &paths);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(sources.config_file, Some(paths.default_config_file()));
        assert!(sources.config.clusters.contains_key("prod"));
    }
}
