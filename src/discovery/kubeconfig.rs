//! kubeconfig files, read one by one with the kube crate's types and merged the
//! way kubectl merges `KUBECONFIG`: the first file that defines a name wins, and
//! current-context comes from the first file that sets it.
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use kube::config::{Kubeconfig, KubeconfigError};

use super::{DiscoveryError, KubeContext, describe_yaml_error};

/// What the kubeconfig files gave.
#[derive(Debug, Default)]
pub struct KubeLoad {
    pub merged: Option<Kubeconfig>,
    /// Contexts in merged order, each with the file that defined it.
    pub contexts: Vec<KubeContext>,
    pub current_context: Option<String>,
    pub errors: Vec<DiscoveryError>,
    /// Files read and parsed.
    pub files: Vec<PathBuf>,
}

/// Reads each file on its own, so one broken file does not hide the others.
pub(crate) fn load(files: &[PathBuf]) -> KubeLoad {
    load_with(files, read_file)
}

/// Merges kubeconfig texts as [`load`] merges files (`file` names each in
/// errors); what the fuzz targets and the bad-input tests drive.
pub fn load_texts(texts: &[(PathBuf, String)]) -> KubeLoad {
    let (files, read) = super::texts_as_files(texts, |_, text| Kubeconfig::from_yaml(text));
    load_with(&files, read)
}

fn load_with(
    files: &[PathBuf],
    read: impl Fn(&Path) -> Result<Kubeconfig, KubeconfigError>,
) -> KubeLoad {
    let mut load = KubeLoad::default();
    let mut merge = KubeMerge::default();
    for file in files {
        match read(file) {
            Ok(config) => {
                load.errors.extend(duplicates_within(file, &config));
                merge.add(file, config);
                load.files.push(file.clone());
            }
            Err(err) => load.errors.push(read_error(file, err)),
        }
    }
    if load.files.is_empty() {
        return load;
    }
    let (contexts, errors) = merge.contexts();
    load.contexts = contexts;
    load.errors.extend(errors);
    load.current_context = merge.current_context(&mut load.errors);
    load.merged = Some(merge.merged);
    load
}

/// One kubeconfig file, checked first to be a regular file under the config
/// cap (the kube crate would read a FIFO or `/dev/zero` forever).
pub fn read_file(file: &Path) -> Result<Kubeconfig, KubeconfigError> {
    crate::bounded::check_regular(file, crate::bounded::CONFIG_FILE_LIMIT)
        .map_err(|e| KubeconfigError::ReadConfig(e, file.to_path_buf()))?;
    Kubeconfig::read_from(file)
}

fn read_error(file: &Path, err: KubeconfigError) -> DiscoveryError {
    let message = match err {
        KubeconfigError::ReadConfig(io, _) => format!("cannot read: {io}"),
        KubeconfigError::Parse(yaml) => describe_yaml_error(&yaml),
        other => other.to_string(),
    };
    DiscoveryError::new(file, None, message)
}

/// kubectl refuses nothing here, but a name defined twice in one file is a
/// mistake worth showing; the first definition is the one used.
fn duplicates_within(file: &Path, config: &Kubeconfig) -> Vec<DiscoveryError> {
    let mut errors = Vec::new();
    let mut check = |kind: &str, names: Vec<&str>, as_context: bool| {
        let mut seen = HashSet::new();
        for name in names {
            if !seen.insert(name) {
                errors.push(DiscoveryError::new(
                    file,
                    as_context.then_some(name),
                    format!("{kind} {name:?} is defined twice in this file; the first one is used"),
                ));
            }
        }
    };
    check(
        "context",
        config.contexts.iter().map(|c| c.name.as_str()).collect(),
        true,
    );
    check(
        "cluster",
        config.clusters.iter().map(|c| c.name.as_str()).collect(),
        false,
    );
    check(
        "user",
        config.auth_infos.iter().map(|c| c.name.as_str()).collect(),
        false,
    );
    errors
}

/// kubectl's merge on the kube crate's types. Not `Kubeconfig::merge`: that
/// refuses files whose `kind`/`apiVersion` differ (kubectl does not), and it
/// forgets which file each context came from.
#[derive(Default)]
struct KubeMerge {
    merged: Kubeconfig,
    context_files: HashMap<String, PathBuf>,
    current_context_file: Option<PathBuf>,
}

impl KubeMerge {
    fn add(&mut self, file: &Path, next: Kubeconfig) {
        let merged = &mut self.merged;
        for context in next.contexts {
            if !self.context_files.contains_key(&context.name) {
                self.context_files
                    .insert(context.name.clone(), file.to_path_buf());
                merged.contexts.push(context);
            }
        }
        append_new(&mut merged.clusters, next.clusters, |c| &c.name);
        append_new(&mut merged.auth_infos, next.auth_infos, |u| &u.name);
        let next_current = next.current_context.filter(|c| !c.is_empty());
        if merged.current_context.is_none() && next_current.is_some() {
            merged.current_context = next_current;
            self.current_context_file = Some(file.to_path_buf());
        }
        merged.preferences = merged.preferences.take().or(next.preferences);
        merged.extensions = merged.extensions.take().or(next.extensions);
        merged.kind = merged.kind.take().or(next.kind);
        merged.api_version = merged.api_version.take().or(next.api_version);
        for (key, value) in next.other {
            merged.other.entry(key).or_insert(value);
        }
    }

    /// Each merged context with its cluster's server; a context pointing at a
    /// cluster or user that no file defines is an error but still listed.
    fn contexts(&self) -> (Vec<KubeContext>, Vec<DiscoveryError>) {
        let mut contexts = Vec::new();
        let mut errors = Vec::new();
        for named in &self.merged.contexts {
            let file = self
                .context_files
                .get(&named.name)
                .cloned()
                .unwrap_or_default();
            let error = |message: String| DiscoveryError::new(&file, Some(&named.name), message);
            let Some(context) = &named.context else {
                errors.push(error("has no context entry (cluster and user)".into()));
                continue;
            };
            let server = if context.cluster.is_empty() {
                errors.push(error("names no cluster".into()));
                None
            } else {
                match self
                    .merged
                    .clusters
                    .iter()
                    .find(|c| c.name == context.cluster)
                {
                    Some(cluster) => cluster.cluster.as_ref().and_then(|c| c.server.clone()),
                    None => {
                        errors.push(error(format!(
                            "refers to cluster {:?}, which no kubeconfig defines",
                            context.cluster
                        )));
                        None
                    }
                }
            };
            let user = context.user.clone().unwrap_or_default();
            if !user.is_empty() && !self.merged.auth_infos.iter().any(|u| u.name == user) {
                errors.push(error(format!(
                    "refers to user {user:?}, which no kubeconfig defines"
                )));
            }
            contexts.push(KubeContext {
                name: named.name.clone(),
                file,
                cluster: context.cluster.clone(),
                user,
                server,
            });
        }
        (contexts, errors)
    }

    fn current_context(&self, errors: &mut Vec<DiscoveryError>) -> Option<String> {
        let current = self.merged.current_context.clone()?;
        if self.context_files.contains_key(&current) {
            return Some(current);
        }
        let file = self.current_context_file.clone().unwrap_or_default();
        errors.push(DiscoveryError::new(
            &file,
            Some(&current),
            "current-context is not defined in any kubeconfig",
        ));
        None
    }
}

fn append_new<T>(base: &mut Vec<T>, next: Vec<T>, name: impl Fn(&T) -> &String) {
    for item in next {
        if !base.iter().any(|b| name(b) == name(&item)) {
            base.push(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::test_files::{fixture, write};

    fn context<'a>(load: &'a KubeLoad, name: &str) -> &'a KubeContext {
        load.contexts
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no context {name}"))
    }

    #[test]
    fn first_file_wins_for_contexts_clusters_and_current_context() {
        let a = fixture("a.yaml");
        let b = fixture("b.yaml");
        let load = load(&[a.clone(), b.clone()]);
        assert!(load.errors.is_empty(), "{:?}", load.errors);
        assert_eq!(load.files, vec![a.clone(), b.clone()]);
        assert_eq!(load.current_context.as_deref(), Some("admin@alpha"));

        // admin@alpha is in both files; a.yaml's definition is kept.
        let alpha = context(&load, "admin@alpha");
        assert_eq!(alpha.file, a);
        assert_eq!(alpha.cluster, "alpha-cluster");
        // cluster `bravo` is in both files; a.yaml's server is kept.
        assert_eq!(
            context(&load, "ops-bravo").server.as_deref(),
            Some("https://127.0.0.21:6443")
        );
        assert_eq!(context(&load, "kube-only").file, b);
        let merged = load.merged.unwrap();
        assert_eq!(
            merged
                .contexts
                .iter()
                .filter(|c| c.name == "admin@alpha")
                .count(),
            1
        );
        assert_eq!(
            merged.clusters.iter().filter(|c| c.name == "bravo").count(),
            1
        );
    }

    #[test]
    fn reversed_order_flips_the_winner() {
        let load = load(&[fixture("b.yaml"), fixture("a.yaml")]);
        assert_eq!(load.current_context.as_deref(), Some("kube-only"));
        assert_eq!(context(&load, "admin@alpha").cluster, "shadow");
    }

    #[test]
    fn broken_file_is_an_error_with_its_line_and_the_others_still_load() {
        let load = load(&[fixture("broken.yaml"), fixture("a.yaml")]);
        assert_eq!(load.errors.len(), 1, "{:?}", load.errors);
        let err = &load.errors[0];
        assert_eq!(err.file, fixture("broken.yaml"));
        assert!(err.message.contains("line"), "{}", err.message);
        assert_eq!(load.contexts.len(), 3);
    }

    #[test]
    fn missing_file_is_an_error_naming_it() {
        let missing = PathBuf::from("/nonexistent/taloscope/kubeconfig");
        let load = load(std::slice::from_ref(&missing));
        assert_eq!(load.errors.len(), 1);
        assert_eq!(load.errors[0].file, missing);
        assert!(load.errors[0].message.starts_with("cannot read"));
        assert!(load.merged.is_none());
    }

    #[test]
    fn duplicate_names_within_one_file_are_errors_and_first_is_used() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "dup.yaml",
            "clusters:
- name: c
  cluster: {server: https://127.0.0.1:6443}
- name: c
  cluster: {server: https://127.0.0.2:6443}
users:
- name: u
  user: {}
- name: u
  user: {}
contexts:
- name: x
  context: {cluster: c, user: u}
- name: x
  context: {cluster: other, user: u}
",
        );
        let load = load(std::slice::from_ref(&file));
        assert_eq!(load.errors.len(), 3, "{:?}", load.errors);
        assert!(load.errors.iter().all(|e| e.file == file));
        assert!(
            load.errors
                .iter()
                .any(|e| e.context.as_deref() == Some("x") && e.message.contains("twice"))
        );
        assert_eq!(load.contexts.len(), 1);
        assert_eq!(
            load.contexts[0].server.as_deref(),
            Some("https://127.0.0.1:6443")
        );
    }

    #[test]
    fn missing_current_context_cluster_and_user_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "dangling.yaml",
            "current-context: gone
clusters:
- name: c
  cluster: {server: https://127.0.0.1:6443}
contexts:
- name: no-cluster
  context: {cluster: missing, user: ''}
- name: no-user
  context: {cluster: c, user: ghost}
- name: fine
  context: {cluster: c}
",
        );
        let load = load(std::slice::from_ref(&file));
        let about = |ctx: &str| {
            load.errors
                .iter()
                .filter(|e| e.context.as_deref() == Some(ctx))
                .map(|e| e.message.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(load.errors.len(), 3, "{:?}", load.errors);
        assert!(about("gone")[0].contains("current-context"));
        assert!(about("no-cluster")[0].contains("\"missing\""));
        assert!(about("no-user")[0].contains("\"ghost\""));
        assert_eq!(load.current_context, None);
        // Still listed: the context exists, it just lacks a server.
        assert_eq!(context(&load, "no-cluster").server, None);
        assert_eq!(load.contexts.len(), 3);
    }

    #[test]
    fn differing_api_versions_still_merge() {
        let dir = tempfile::tempdir().unwrap();
        let one = write(
            dir.path(),
            "one.yaml",
            "apiVersion: v1\nkind: Config\ncontexts: [{name: one, context: {cluster: ''}}]\n",
        );
        let two = write(
            dir.path(),
            "two.yaml",
            "apiVersion: v2\nkind: Other\ncontexts: [{name: two, context: {cluster: ''}}]\n",
        );
        let load = load(&[one, two]);
        assert_eq!(load.contexts.len(), 2);
        assert_eq!(load.files.len(), 2);
    }

    #[test]
    fn context_without_body_is_an_error_and_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "bare.yaml", "contexts:\n- name: bare\n");
        let load = load(std::slice::from_ref(&file));
        assert_eq!(load.errors.len(), 1, "{:?}", load.errors);
        assert_eq!(load.errors[0].context.as_deref(), Some("bare"));
        assert!(load.contexts.is_empty());
    }

    #[test]
    fn empty_file_is_an_empty_kubeconfig() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "empty.yaml", "");
        let load = load(std::slice::from_ref(&file));
        assert!(load.errors.is_empty(), "{:?}", load.errors);
        assert!(load.merged.is_some());
    }
}
