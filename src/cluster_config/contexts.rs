//! The new cluster's contexts merged into the operator's talosconfig and kubeconfig, and taken
//! out again on delete: each file backed up first (`FILE.taloscope-backup-<time>`), written
//! atomically with its permissions kept, and a name already taken in either file refused.
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use kube::config::{Context, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext};

use super::talosconfig::ClientCredentials;
use super::tree::ConfigNode;

/// The operator's two config files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextFiles {
    pub talosconfig: PathBuf,
    pub kubeconfig: PathBuf,
}

/// What a merge or removal wrote: the backups made (none for a file that did not exist).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextsWritten {
    pub talosconfig_backup: Option<PathBuf>,
    pub kubeconfig_backup: Option<PathBuf>,
}

/// Why contexts could not be merged or removed; names the file and the context.
#[derive(Debug, thiserror::Error)]
pub enum ContextsError {
    #[error(
        "{file}: a {kind} named {name:?} already exists; pick another cluster name or remove it first"
    )]
    NameTaken {
        file: PathBuf,
        kind: &'static str,
        name: String,
    },
    #[error("no context named {name:?} in {talosconfig} or {kubeconfig}")]
    NotFound {
        name: String,
        talosconfig: PathBuf,
        kubeconfig: PathBuf,
    },
    #[error("cannot read {file}: {reason}")]
    Read { file: PathBuf, reason: String },
    #[error("the new cluster's kubeconfig is not usable: {0}")]
    NewKubeconfig(String),
    #[error("cannot back up {file}: {reason}")]
    Backup { file: PathBuf, reason: String },
    #[error("cannot write {file}: {reason}")]
    Write { file: PathBuf, reason: String },
}

/// Adds context `name` to both files: the talos context (`endpoints`, `nodes`, credentials)
/// and the kube cluster `name`, user `admin@name` and context `name` taken from the cluster's
/// own kubeconfig (the `Kubeconfig` stream's file). Neither file is touched when a name is
/// taken in either.
pub fn merge_contexts(
    files: &ContextFiles,
    name: &str,
    talos: &ClientCredentials,
    endpoints: &[String],
    nodes: &[String],
    cluster_kubeconfig: &str,
    now: SystemTime,
) -> Result<ContextsWritten, ContextsError> {
    let mut talosconfig = read_talosconfig(&files.talosconfig)?;
    let mut kubeconfig = read_kubeconfig(&files.kubeconfig)?;
    refuse_taken(files, name, &talosconfig, &kubeconfig)?;
    let new_kube = Kubeconfig::from_yaml(cluster_kubeconfig)
        .map_err(|e| ContextsError::NewKubeconfig(e.to_string()))?;
    add_kube_context(&mut kubeconfig, &new_kube, name)?;
    let contexts = contexts_map(&mut talosconfig);
    contexts.set(name, talos.context_node(endpoints, nodes));
    if talosconfig
        .get("context")
        .and_then(ConfigNode::as_str)
        .is_none_or(str::is_empty)
    {
        talosconfig.set("context", ConfigNode::str(name));
    }
    write_both(files, &talosconfig, &kubeconfig, now)
}

/// Removes context `name` from both files (and the kube cluster and user only it used).
pub fn remove_contexts(
    files: &ContextFiles,
    name: &str,
    now: SystemTime,
) -> Result<ContextsWritten, ContextsError> {
    let mut talosconfig = read_talosconfig(&files.talosconfig)?;
    let mut kubeconfig = read_kubeconfig(&files.kubeconfig)?;
    let talos_removed = contexts_map(&mut talosconfig).remove(name).is_some();
    if talosconfig.get("context").and_then(ConfigNode::as_str) == Some(name) {
        talosconfig.set("context", ConfigNode::str(""));
    }
    let kube_removed = remove_kube_context(&mut kubeconfig, name);
    if !talos_removed && !kube_removed {
        return Err(ContextsError::NotFound {
            name: name.to_string(),
            talosconfig: files.talosconfig.clone(),
            kubeconfig: files.kubeconfig.clone(),
        });
    }
    write_both(files, &talosconfig, &kubeconfig, now)
}

fn read_talosconfig(file: &Path) -> Result<ConfigNode, ContextsError> {
    if !file.exists() {
        return Ok(ConfigNode::map()
            .with("context", ConfigNode::str(""))
            .with("contexts", ConfigNode::map()));
    }
    let text =
        crate::bounded::read_to_string(file, crate::bounded::CONFIG_FILE_LIMIT).map_err(|e| {
            ContextsError::Read {
                file: file.to_path_buf(),
                reason: e.to_string(),
            }
        })?;
    // Discovery's reader decides whether the file is a talosconfig; the tree keeps every
    // field of it (the contexts taloscope does not use too) for the rewrite.
    let load = crate::discovery::load_talosconfig_texts(&[(file.to_path_buf(), text.clone())]);
    if load.files.is_empty() {
        let reason = load
            .errors
            .first()
            .map_or("not a talosconfig".to_string(), |e| e.to_string());
        return Err(ContextsError::Read {
            file: file.to_path_buf(),
            reason,
        });
    }
    let node: ConfigNode = serde_saphyr::from_str(&text).map_err(|e| ContextsError::Read {
        file: file.to_path_buf(),
        reason: crate::discovery::describe_yaml_error(&e),
    })?;
    Ok(match node {
        ConfigNode::Null => ConfigNode::map(),
        node => node,
    })
}

fn read_kubeconfig(file: &Path) -> Result<Kubeconfig, ContextsError> {
    if !file.exists() {
        return Ok(Kubeconfig {
            api_version: Some("v1".into()),
            kind: Some("Config".into()),
            ..Kubeconfig::default()
        });
    }
    crate::discovery::read_kubeconfig_file(file).map_err(|e| ContextsError::Read {
        file: file.to_path_buf(),
        reason: crate::error_chain(&e),
    })
}

/// The talosconfig's `contexts` map, made when missing.
fn contexts_map(talosconfig: &mut ConfigNode) -> &mut ConfigNode {
    if !matches!(talosconfig.get("contexts"), Some(ConfigNode::Map(_))) {
        talosconfig.set("contexts", ConfigNode::map());
    }
    talosconfig.get_mut("contexts").expect("just set")
}

fn kube_user(name: &str) -> String {
    format!("admin@{name}")
}

fn refuse_taken(
    files: &ContextFiles,
    name: &str,
    talosconfig: &ConfigNode,
    kubeconfig: &Kubeconfig,
) -> Result<(), ContextsError> {
    let taken = |file: &Path, kind, name: &str| ContextsError::NameTaken {
        file: file.to_path_buf(),
        kind,
        name: name.to_string(),
    };
    if talosconfig
        .get("contexts")
        .and_then(|c| c.get(name))
        .is_some()
    {
        return Err(taken(&files.talosconfig, "talos context", name));
    }
    if kubeconfig.contexts.iter().any(|c| c.name == name) {
        return Err(taken(&files.kubeconfig, "context", name));
    }
    if kubeconfig.clusters.iter().any(|c| c.name == name) {
        return Err(taken(&files.kubeconfig, "cluster", name));
    }
    let user = kube_user(name);
    if kubeconfig.auth_infos.iter().any(|u| u.name == user) {
        return Err(taken(&files.kubeconfig, "user", &user));
    }
    Ok(())
}

/// Takes the new kubeconfig's current context (its cluster and user) under taloscope's names.
fn add_kube_context(
    into: &mut Kubeconfig,
    new: &Kubeconfig,
    name: &str,
) -> Result<(), ContextsError> {
    let bad = |why: &str| ContextsError::NewKubeconfig(why.to_string());
    let context = new
        .current_context
        .as_ref()
        .and_then(|c| new.contexts.iter().find(|n| &n.name == c))
        .or_else(|| new.contexts.first())
        .and_then(|n| n.context.as_ref())
        .ok_or_else(|| bad("it has no context"))?;
    let cluster = new
        .clusters
        .iter()
        .find(|c| c.name == context.cluster)
        .and_then(|c| c.cluster.clone())
        .ok_or_else(|| bad("its context names no cluster it defines"))?;
    let user = context
        .user
        .as_ref()
        .and_then(|u| new.auth_infos.iter().find(|a| &a.name == u))
        .and_then(|a| a.auth_info.clone())
        .ok_or_else(|| bad("its context names no user it defines"))?;
    into.clusters.push(NamedCluster {
        name: name.to_string(),
        cluster: Some(cluster),
        other: Default::default(),
    });
    into.auth_infos.push(NamedAuthInfo {
        name: kube_user(name),
        auth_info: Some(user),
        other: Default::default(),
    });
    into.contexts.push(NamedContext {
        name: name.to_string(),
        context: Some(Context {
            cluster: name.to_string(),
            user: Some(kube_user(name)),
            namespace: context.namespace.clone(),
            extensions: None,
            other: Default::default(),
        }),
        other: Default::default(),
    });
    if into.current_context.as_deref().is_none_or(str::is_empty) {
        into.current_context = Some(name.to_string());
    }
    Ok(())
}

/// Removes context `name`, and its cluster and user when no other context uses them.
fn remove_kube_context(config: &mut Kubeconfig, name: &str) -> bool {
    let Some(at) = config.contexts.iter().position(|c| c.name == name) else {
        return false;
    };
    let removed = config.contexts.remove(at);
    if let Some(ctx) = removed.context {
        let still_used = |f: &dyn Fn(&Context) -> bool| {
            config
                .contexts
                .iter()
                .filter_map(|c| c.context.as_ref())
                .any(f)
        };
        let cluster_used = still_used(&|c| c.cluster == ctx.cluster);
        let user_used = still_used(&|c| c.user == ctx.user);
        if !cluster_used {
            config.clusters.retain(|c| c.name != ctx.cluster);
        }
        if !user_used {
            config
                .auth_infos
                .retain(|u| Some(&u.name) != ctx.user.as_ref());
        }
    }
    if config.current_context.as_deref() == Some(name) {
        config.current_context = None;
    }
    true
}

/// Backs up both files, then writes both; a failure in the second write leaves the first
/// written and says so through the error (the backups still hold the old texts).
fn write_both(
    files: &ContextFiles,
    talosconfig: &ConfigNode,
    kubeconfig: &Kubeconfig,
    now: SystemTime,
) -> Result<ContextsWritten, ContextsError> {
    let talos_text = talosconfig.to_yaml().map_err(|e| ContextsError::Write {
        file: files.talosconfig.clone(),
        reason: e.to_string(),
    })?;
    let kube_text = serde_saphyr::to_string(kubeconfig).map_err(|e| ContextsError::Write {
        file: files.kubeconfig.clone(),
        reason: e.to_string(),
    })?;
    let written = ContextsWritten {
        talosconfig_backup: backup(&files.talosconfig, now)?,
        kubeconfig_backup: backup(&files.kubeconfig, now)?,
    };
    write_keeping_mode(&files.talosconfig, &talos_text)?;
    write_keeping_mode(&files.kubeconfig, &kube_text)?;
    Ok(written)
}

/// `FILE.taloscope-backup-<YYYYMMDDTHHMMSSZ>` beside the file (`.1`, `.2`… after it when that
/// name is taken), permissions copied; `None` when there is no file yet.
fn backup(file: &Path, now: SystemTime) -> Result<Option<PathBuf>, ContextsError> {
    if !file.exists() {
        return Ok(None);
    }
    let stamp: String = crate::clock::utc_timestamp(now)
        .chars()
        .filter(|c| *c != '-' && *c != ':')
        .collect();
    // Two changes within one second (a delete removing a talos and a kube context of
    // different names) must not overwrite the first backup, which holds the original.
    let target = (0..)
        .map(|n| {
            let mut name = file.as_os_str().to_owned();
            name.push(format!(".taloscope-backup-{stamp}"));
            if n > 0 {
                name.push(format!(".{n}"));
            }
            PathBuf::from(name)
        })
        .find(|candidate| !candidate.exists())
        .expect("an unused name");
    std::fs::copy(file, &target).map_err(|e| ContextsError::Backup {
        file: file.to_path_buf(),
        reason: e.to_string(),
    })?;
    Ok(Some(target))
}

/// Writes atomically with the file's current mode (0600 for a new file).
fn write_keeping_mode(file: &Path, text: &str) -> Result<(), ContextsError> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(file).map_or(0o600, |m| m.permissions().mode() & 0o7777);
    crate::atomic_file::write_atomically(file, text.as_bytes(), mode).map_err(|e| {
        ContextsError::Write {
            file: file.to_path_buf(),
            reason: e.to_string(),
        }
    })
}

#[cfg(test)]
#[path = "contexts_tests.rs"]
mod tests;
