//! The new cluster's contexts merged into the operator's talosconfig and kubeconfig, and taken
//! out again on delete: each file backed up first (`FILE.taloscope-backup-<time>`), written
//! atomically with its permissions kept, and edited as splices of its own text (comments, key
//! order and line endings stay; a removal cuts exactly the lines a merge wrote). The kube entries are named as `talosctl kubeconfig`
//! names them (context and user `admin@<cluster>`, cluster `<cluster>`; a name taken gets
//! `-1`, `-2`… as its merge renames), and become current as `talosctl kubeconfig --merge` and
//! `talosctl config merge` make them, unless the operator keeps the current ones. Every entry
//! merged is recorded with a fingerprint, and a delete removes exactly those, unchanged.
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use kube::config::{Context, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext};
use serde::{Deserialize, Serialize};

use super::operator_file::{self, OperatorFileError};
use super::talosconfig::ClientCredentials;
use super::tree::ConfigNode;
use super::yaml_splice::{self, SpliceError};

/// The operator's two config files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextFiles {
    pub talosconfig: PathBuf,
    pub kubeconfig: PathBuf,
    /// A merge leaves the current contexts as they are (`--keep-current-context`) instead of
    /// making the new ones current.
    pub keep_current_context: bool,
    /// How many backups of each file are kept (taloscope's config `kept_backups`).
    pub kept_backups: usize,
}

/// What a merge or removal wrote: the backups made (none for a file that did not exist or
/// was not changed), what a merge added, and what a removal left and why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextsWritten {
    pub talosconfig_backup: Option<PathBuf>,
    pub kubeconfig_backup: Option<PathBuf>,
    pub merged: Option<MergedEntries>,
    /// Entries a removal left in place, each with the reason, in the operator's words.
    pub left: Vec<String>,
    /// What the operator should know (a file holding keys that others can read).
    pub warnings: Vec<String>,
}

/// One entry a create merged: its name and the SHA-256 of its content as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergedEntry {
    pub name: String,
    pub fingerprint: String,
}

/// Every entry one create merged into the operator's files: a delete removes these, when
/// still as written, and nothing else.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergedEntries {
    pub talosconfig: PathBuf,
    pub kubeconfig: PathBuf,
    pub talos_context: MergedEntry,
    pub kube_context: MergedEntry,
    pub kube_cluster: MergedEntry,
    pub kube_user: MergedEntry,
    /// The current contexts the merge replaced (`None` where it left the file's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_talos_context: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_kube_context: Option<String>,
}

impl MergedEntries {
    /// The entries in the operator's words: `talos context lab`, `kube context admin@lab`…
    pub fn described(&self) -> Vec<String> {
        vec![
            format!("talos context {}", self.talos_context.name),
            format!("kube context {}", self.kube_context.name),
            format!("kube cluster {}", self.kube_cluster.name),
            format!("kube user {}", self.kube_user.name),
        ]
    }
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
    #[error("cannot write {file}: {reason}")]
    Write { file: PathBuf, reason: String },
    #[error("cannot edit {file} in place: {source}")]
    Edit { file: PathBuf, source: SpliceError },
    #[error(transparent)]
    File(#[from] OperatorFileError),
}

/// Adds the new cluster to both files: the talos context `name` (`endpoints`, `nodes`,
/// credentials) and, from the cluster's own kubeconfig (the `Kubeconfig` stream's file), the
/// kube cluster `name`, user `admin@name` and context `admin@name`, each renamed with `-N` when
/// taken (talosctl's internal/pkg/kubeconfig/merge.go `rename`). Both become current unless
/// `files.keep_current_context`. A talos context already named `name` is refused and neither
/// file touched. The entries written are returned with their fingerprints.
pub fn merge_contexts(
    files: &ContextFiles,
    name: &str,
    talos: &ClientCredentials,
    endpoints: &[String],
    nodes: &[String],
    cluster_kubeconfig: &str,
    now: SystemTime,
) -> Result<ContextsWritten, ContextsError> {
    // Locked before they are read: a write of kubectl's between the read and the write
    // would otherwise be lost.
    let _locks = lock_files(&[&files.talosconfig, &files.kubeconfig])?;
    let talos_text = read_text(&files.talosconfig)?;
    let talosconfig = parse_talosconfig(&files.talosconfig, &talos_text)?;
    let kube_text = read_text(&files.kubeconfig)?;
    let kubeconfig = parse_kubeconfig(&files.kubeconfig, &kube_text)?;
    refuse_taken(files, name, &talosconfig)?;
    let new_kube = Kubeconfig::from_yaml(cluster_kubeconfig)
        .map_err(|e| ContextsError::NewKubeconfig(e.to_string()))?;
    let kube_names = kube_names_for(&kubeconfig, name);
    let kube_edit = |e| edit_error(&files.kubeconfig, e);
    let talos_edit = |e| edit_error(&files.talosconfig, e);
    let mut kube_out = if kube_text.trim().is_empty() {
        "apiVersion: v1\nkind: Config\n".to_string()
    } else {
        kube_text.clone()
    };
    for (list, item) in new_kube_items(&new_kube, &kube_names)? {
        kube_out = yaml_splice::append_list_item(&kube_out, list, &item).map_err(kube_edit)?;
    }
    let talos_entry = talos.context_node(endpoints, nodes);
    let talos_yaml = talos_entry.to_yaml().map_err(|e| ContextsError::Write {
        file: files.talosconfig.clone(),
        reason: e.to_string(),
    })?;
    let mut talos_out = yaml_splice::add_map_entry(&talos_text, "contexts", name, &talos_yaml)
        .map_err(talos_edit)?;
    let talos_current = talosconfig
        .get("context")
        .and_then(ConfigNode::as_str)
        .map(str::to_string);
    let kube_current = kubeconfig.current_context.clone();
    let switch = |current: &Option<String>| {
        !files.keep_current_context || current.as_deref().is_none_or(str::is_empty)
    };
    let mut previous_talos_context = None;
    if switch(&talos_current) {
        talos_out = yaml_splice::set_top_scalar(&talos_out, "context", name).map_err(talos_edit)?;
        previous_talos_context = Some(talos_current.unwrap_or_default());
    }
    let mut previous_kube_context = None;
    if switch(&kube_current) {
        kube_out = yaml_splice::set_top_scalar(&kube_out, "current-context", &kube_names.context)
            .map_err(kube_edit)?;
        previous_kube_context = Some(kube_current.unwrap_or_default());
    }
    // The fingerprints are of the entries as the files will hold them, read back from the text.
    let talos_written = parse_talosconfig(&files.talosconfig, &talos_out)?;
    let kube_written = parse_kubeconfig(&files.kubeconfig, &kube_out)?;
    let talos_fingerprint = talos_written
        .get("contexts")
        .and_then(|c| c.get(name))
        .map(fingerprint)
        .unwrap_or_default();
    let merged = MergedEntries {
        talosconfig: files.talosconfig.clone(),
        kubeconfig: files.kubeconfig.clone(),
        talos_context: MergedEntry {
            name: name.to_string(),
            fingerprint: talos_fingerprint,
        },
        kube_context: kube_entry(&kube_written, KubeKind::Context, &kube_names.context),
        kube_cluster: kube_entry(&kube_written, KubeKind::Cluster, &kube_names.cluster),
        kube_user: kube_entry(&kube_written, KubeKind::User, &kube_names.user),
        previous_talos_context,
        previous_kube_context,
    };
    let mut written = write_both(files, Some(&talos_out), Some(&kube_out), now)?;
    written.merged = Some(merged);
    let keys = format!("the admin key of {name}");
    written.warnings = [&files.talosconfig, &files.kubeconfig]
        .into_iter()
        .filter_map(|f| operator_file::exposure_warning(&operator_file::write_target(f), &keys))
        .collect();
    Ok(written)
}

/// What [`merge_contexts`] of cluster `name` would refuse, checked at plan time without
/// writing: either file unreadable or not a talosconfig/kubeconfig, a talos context of the
/// name, a list or map the lossless edit cannot extend, another writer's lock, a read-only file,
/// a directory that cannot be made or written, too little free space. The kube names the
/// merge would use when nothing is refused.
pub fn check_merge(files: &ContextFiles, name: &str) -> Result<KubeNames, ContextsError> {
    let talos_text = read_text(&files.talosconfig)?;
    let talosconfig = parse_talosconfig(&files.talosconfig, &talos_text)?;
    let kube_text = read_text(&files.kubeconfig)?;
    let kubeconfig = parse_kubeconfig(&files.kubeconfig, &kube_text)?;
    refuse_taken(files, name, &talosconfig)?;
    let probe = "name: taloscope-probe\n";
    for list in ["clusters", "users", "contexts"] {
        yaml_splice::append_list_item(&kube_text, list, probe)
            .map_err(|e| edit_error(&files.kubeconfig, e))?;
    }
    yaml_splice::add_map_entry(&talos_text, "contexts", name, probe)
        .map_err(|e| edit_error(&files.talosconfig, e))?;
    for file in [&files.talosconfig, &files.kubeconfig] {
        operator_file::check_can_write(file)?;
    }
    Ok(kube_names_for(&kubeconfig, name))
}

/// Removes exactly the entries one create merged, each only while its fingerprint still
/// matches (an entry changed since is left, and said); the current contexts the merge replaced
/// come back when they still exist. A file none of whose entries is removed is not written.
pub fn remove_merged(
    merged: &MergedEntries,
    kept_backups: usize,
    now: SystemTime,
) -> Result<ContextsWritten, ContextsError> {
    let files = ContextFiles {
        talosconfig: merged.talosconfig.clone(),
        kubeconfig: merged.kubeconfig.clone(),
        keep_current_context: true,
        kept_backups,
    };
    let present: Vec<&Path> = [&files.talosconfig, &files.kubeconfig]
        .into_iter()
        .filter(|f| f.exists())
        .map(PathBuf::as_path)
        .collect();
    let _locks = lock_files(&present)?;
    let mut left = Vec::new();
    let talos_out = if files.talosconfig.exists() {
        let text = read_text(&files.talosconfig)?;
        remove_talos_entry(&text, merged, &files.talosconfig, &mut left)?
    } else {
        left.push(format!(
            "talos context {}: {} is gone",
            merged.talos_context.name,
            files.talosconfig.display()
        ));
        None
    };
    let kube_out = if files.kubeconfig.exists() {
        let text = read_text(&files.kubeconfig)?;
        remove_kube_entries(&text, merged, &files.kubeconfig, &mut left)?
    } else {
        left.push(format!(
            "kube context {}: {} is gone",
            merged.kube_context.name,
            files.kubeconfig.display()
        ));
        None
    };
    let mut written = write_both(&files, talos_out.as_deref(), kube_out.as_deref(), now)?;
    written.left = left;
    Ok(written)
}

/// Takes the recorded talos context out of the talosconfig's text when unchanged; the
/// replaced current context comes back (or the key goes) when it was the current one. The new
/// text, or `None` when nothing was removed.
fn remove_talos_entry(
    text: &str,
    merged: &MergedEntries,
    file: &Path,
    left: &mut Vec<String>,
) -> Result<Option<String>, ContextsError> {
    let talosconfig = parse_talosconfig(file, text)?;
    let entry = &merged.talos_context;
    let found = talosconfig
        .get("contexts")
        .and_then(|c| c.get(&entry.name))
        .map(fingerprint);
    match found {
        None => {
            left.push(format!(
                "talos context {}: no longer in {}",
                entry.name,
                file.display()
            ));
            return Ok(None);
        }
        Some(f) if f != entry.fingerprint => {
            left.push(format!(
                "talos context {}: changed since the create; left in {}",
                entry.name,
                file.display()
            ));
            return Ok(None);
        }
        Some(_) => {}
    }
    let edit = |e| edit_error(file, e);
    let mut out = yaml_splice::remove_map_entry(text, "contexts", &entry.name)
        .map_err(edit)?
        .unwrap_or_else(|| text.to_string());
    if talosconfig.get("context").and_then(ConfigNode::as_str) == Some(entry.name.as_str()) {
        let back = merged.previous_talos_context.as_deref().filter(|p| {
            !p.is_empty() && talosconfig.get("contexts").and_then(|c| c.get(p)).is_some()
        });
        out = match back {
            Some(p) => yaml_splice::set_top_scalar(&out, "context", p),
            None => yaml_splice::remove_top_key(&out, "context"),
        }
        .map_err(edit)?;
    }
    Ok(Some(out))
}

/// Takes the recorded kube context, cluster and user out of the kubeconfig's text, each when
/// unchanged and (cluster and user) no context left uses it. The new text, or `None` when
/// nothing was removed.
fn remove_kube_entries(
    text: &str,
    merged: &MergedEntries,
    file: &Path,
    left: &mut Vec<String>,
) -> Result<Option<String>, ContextsError> {
    let mut config = parse_kubeconfig(file, text)?;
    let mut out = text.to_string();
    let mut changed = false;
    let order = [
        (KubeKind::Context, &merged.kube_context),
        (KubeKind::Cluster, &merged.kube_cluster),
        (KubeKind::User, &merged.kube_user),
    ];
    for (kind, entry) in order {
        let found = kube_entry_fingerprint(&config, kind, &entry.name);
        let why = match found {
            None => Some("no longer in"),
            Some(f) if f != entry.fingerprint => Some("changed since the create; left in"),
            Some(_) => {
                let user_of = |c: &Context| c.user.as_deref() == Some(entry.name.as_str());
                let used = config
                    .contexts
                    .iter()
                    .filter_map(|c| c.context.as_ref())
                    .any(|c| match kind {
                        KubeKind::Context => false,
                        KubeKind::Cluster => c.cluster == entry.name,
                        KubeKind::User => user_of(c),
                    });
                used.then_some("still used by another context; left in")
            }
        };
        if let Some(why) = why {
            left.push(format!(
                "kube {} {}: {why} {}",
                kind.as_str(),
                entry.name,
                file.display()
            ));
            continue;
        }
        out = remove_kube_item(&out, file, kind, &entry.name)?;
        changed = true;
        match kind {
            KubeKind::Context => config.contexts.retain(|c| c.name != entry.name),
            KubeKind::Cluster => config.clusters.retain(|c| c.name != entry.name),
            KubeKind::User => config.auth_infos.retain(|u| u.name != entry.name),
        }
        if kind == KubeKind::Context
            && config.current_context.as_deref() == Some(entry.name.as_str())
        {
            let back = merged
                .previous_kube_context
                .clone()
                .filter(|p| config.contexts.iter().any(|c| &c.name == p));
            out = set_kube_current(&out, file, back.as_deref())?;
        }
    }
    Ok(changed.then_some(out))
}

/// The kubeconfig's `current-context` set to `context`, or taken out for `None`.
fn set_kube_current(
    text: &str,
    file: &Path,
    context: Option<&str>,
) -> Result<String, ContextsError> {
    match context {
        Some(c) => yaml_splice::set_top_scalar(text, "current-context", c),
        None => yaml_splice::remove_top_key(text, "current-context"),
    }
    .map_err(|e| edit_error(file, e))
}

/// The kubeconfig's text without the `kind` entry named `name` (unchanged when absent).
fn remove_kube_item(
    text: &str,
    file: &Path,
    kind: KubeKind,
    name: &str,
) -> Result<String, ContextsError> {
    Ok(yaml_splice::remove_list_item(text, kind.list_key(), name)
        .map_err(|e| edit_error(file, e))?
        .unwrap_or_else(|| text.to_string()))
}

fn edit_error(file: &Path, source: SpliceError) -> ContextsError {
    ContextsError::Edit {
        file: file.to_path_buf(),
        source,
    }
}

/// Removes context `name` from both files (and the kube cluster and user only it used): a
/// cluster taloscope did not create, whose contexts the operator named.
pub fn remove_contexts(
    files: &ContextFiles,
    name: &str,
    now: SystemTime,
) -> Result<ContextsWritten, ContextsError> {
    let _locks = lock_files(&[&files.talosconfig, &files.kubeconfig])?;
    let talos_text = read_text(&files.talosconfig)?;
    let talosconfig = parse_talosconfig(&files.talosconfig, &talos_text)?;
    let kube_text = read_text(&files.kubeconfig)?;
    let kubeconfig = parse_kubeconfig(&files.kubeconfig, &kube_text)?;
    let talos_edit = |e| edit_error(&files.talosconfig, e);
    let mut talos_out =
        yaml_splice::remove_map_entry(&talos_text, "contexts", name).map_err(talos_edit)?;
    if let Some(out) = talos_out.as_mut()
        && talosconfig.get("context").and_then(ConfigNode::as_str) == Some(name)
    {
        // No current context rather than one naming nothing (`context: ""`).
        *out = yaml_splice::remove_top_key(out, "context").map_err(talos_edit)?;
    }
    let kube_out = remove_kube_context(&kube_text, &files.kubeconfig, &kubeconfig, name)?;
    if talos_out.is_none() && kube_out.is_none() {
        return Err(ContextsError::NotFound {
            name: name.to_string(),
            talosconfig: files.talosconfig.clone(),
            kubeconfig: files.kubeconfig.clone(),
        });
    }
    write_both(files, talos_out.as_deref(), kube_out.as_deref(), now)
}

/// The text of a file that may not exist yet (empty then).
fn read_text(file: &Path) -> Result<String, ContextsError> {
    if !file.exists() {
        return Ok(String::new());
    }
    crate::bounded::read_to_string(file, crate::bounded::CONFIG_FILE_LIMIT).map_err(|e| {
        ContextsError::Read {
            file: file.to_path_buf(),
            reason: e.to_string(),
        }
    })
}

/// The talosconfig's text as a tree, for what the merge and removal decide; an empty text is
/// an empty talosconfig.
fn parse_talosconfig(file: &Path, text: &str) -> Result<ConfigNode, ContextsError> {
    if text.trim().is_empty() {
        return Ok(ConfigNode::map());
    }
    // Discovery's reader decides whether the file is a talosconfig.
    let load = crate::discovery::load_talosconfig_texts(&[(file.to_path_buf(), text.to_string())]);
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
    let node: ConfigNode = serde_saphyr::from_str(text).map_err(|e| ContextsError::Read {
        file: file.to_path_buf(),
        reason: crate::discovery::describe_yaml_error(&e),
    })?;
    Ok(match node {
        ConfigNode::Null => ConfigNode::map(),
        node => node,
    })
}

/// The kubeconfig's text as kubectl reads it; an empty text is an empty kubeconfig. Parsed
/// from the text, not with `Kubeconfig::read_from`, which makes relative paths absolute.
fn parse_kubeconfig(file: &Path, text: &str) -> Result<Kubeconfig, ContextsError> {
    if text.trim().is_empty() {
        return Ok(Kubeconfig::default());
    }
    Kubeconfig::from_yaml(text).map_err(|e| ContextsError::Read {
        file: file.to_path_buf(),
        reason: crate::error_chain(&e),
    })
}

/// The names the new kube entries get: `admin@<cluster>` for context and user and
/// `<cluster>` for the cluster (siderolabs/talos pkg/kubeconfig/generate.go), each taken name
/// followed by `-1`, `-2`… until free (internal/pkg/kubeconfig/merge.go `rename`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeNames {
    pub context: String,
    pub cluster: String,
    pub user: String,
}

/// The names the merge of cluster `name` into `config` would use.
pub fn kube_names_for(config: &Kubeconfig, name: &str) -> KubeNames {
    let free = |wanted: String, taken: &dyn Fn(&str) -> bool| {
        if !taken(&wanted) {
            return wanted;
        }
        (1..)
            .map(|n| format!("{wanted}-{n}"))
            .find(|candidate| !taken(candidate))
            .expect("a free name")
    };
    KubeNames {
        context: free(format!("admin@{name}"), &|n| {
            config.contexts.iter().any(|c| c.name == n)
        }),
        cluster: free(name.to_string(), &|n| {
            config.clusters.iter().any(|c| c.name == n)
        }),
        user: free(format!("admin@{name}"), &|n| {
            config.auth_infos.iter().any(|u| u.name == n)
        }),
    }
}

/// The three kinds of kubeconfig entry a merge adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KubeKind {
    Context,
    Cluster,
    User,
}

impl KubeKind {
    fn as_str(self) -> &'static str {
        match self {
            KubeKind::Context => "context",
            KubeKind::Cluster => "cluster",
            KubeKind::User => "user",
        }
    }

    /// The kubeconfig's list that holds entries of this kind.
    fn list_key(self) -> &'static str {
        match self {
            KubeKind::Context => "contexts",
            KubeKind::Cluster => "clusters",
            KubeKind::User => "users",
        }
    }
}

/// SHA-256 (hex) of an entry's content as JSON, names excluded: the same for the entry as
/// written and as read back, and different once anything in it changed.
fn fingerprint<T: Serialize + ?Sized>(content: &T) -> String {
    let json = serde_json::to_vec(content).unwrap_or_default();
    ring::digest::digest(&ring::digest::SHA256, &json)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn kube_entry_fingerprint(config: &Kubeconfig, kind: KubeKind, name: &str) -> Option<String> {
    match kind {
        KubeKind::Context => config
            .contexts
            .iter()
            .find(|c| c.name == name)
            .map(|c| fingerprint(&(&c.context, &c.other))),
        KubeKind::Cluster => config
            .clusters
            .iter()
            .find(|c| c.name == name)
            .map(|c| fingerprint(&(&c.cluster, &c.other))),
        KubeKind::User => config
            .auth_infos
            .iter()
            .find(|u| u.name == name)
            .map(|u| fingerprint(&(&u.auth_info, &u.other))),
    }
}

fn kube_entry(config: &Kubeconfig, kind: KubeKind, name: &str) -> MergedEntry {
    MergedEntry {
        name: name.to_string(),
        fingerprint: kube_entry_fingerprint(config, kind, name).unwrap_or_default(),
    }
}

/// The talos context is named after the cluster, as `talosctl gen config` names it; one of
/// that name already is another cluster's.
fn refuse_taken(
    files: &ContextFiles,
    name: &str,
    talosconfig: &ConfigNode,
) -> Result<(), ContextsError> {
    if talosconfig
        .get("contexts")
        .and_then(|c| c.get(name))
        .is_some()
    {
        return Err(ContextsError::NameTaken {
            file: files.talosconfig.clone(),
            kind: "talos context",
            name: name.to_string(),
        });
    }
    Ok(())
}

/// The new kubeconfig's current context, its cluster and user as the entries to add under
/// `names`, each with the list it goes into and its YAML text.
fn new_kube_items(
    new: &Kubeconfig,
    names: &KubeNames,
) -> Result<Vec<(&'static str, String)>, ContextsError> {
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
    let yaml = |item: Result<String, serde_saphyr::ser_error::Error>| {
        item.map_err(|e| bad(&e.to_string()))
    };
    Ok(vec![
        (
            KubeKind::Cluster.list_key(),
            yaml(serde_saphyr::to_string(&NamedCluster {
                name: names.cluster.clone(),
                cluster: Some(cluster),
                other: Default::default(),
            }))?,
        ),
        (
            KubeKind::User.list_key(),
            yaml(serde_saphyr::to_string(&NamedAuthInfo {
                name: names.user.clone(),
                auth_info: Some(user),
                other: Default::default(),
            }))?,
        ),
        (
            KubeKind::Context.list_key(),
            yaml(serde_saphyr::to_string(&NamedContext {
                name: names.context.clone(),
                context: Some(Context {
                    cluster: names.cluster.clone(),
                    user: Some(names.user.clone()),
                    namespace: context.namespace.clone(),
                    extensions: None,
                    other: Default::default(),
                }),
                other: Default::default(),
            }))?,
        ),
    ])
}

/// The kubeconfig's text without context `name`, and without its cluster and user when no
/// other context uses them; `None` when there is no such context.
fn remove_kube_context(
    text: &str,
    file: &Path,
    config: &Kubeconfig,
    name: &str,
) -> Result<Option<String>, ContextsError> {
    let Some(removed) = config.contexts.iter().find(|c| c.name == name) else {
        return Ok(None);
    };
    let mut out = remove_kube_item(text, file, KubeKind::Context, name)?;
    if let Some(ctx) = &removed.context {
        let others = || {
            config
                .contexts
                .iter()
                .filter(|c| c.name != name)
                .filter_map(|c| c.context.as_ref())
        };
        if !others().any(|c| c.cluster == ctx.cluster) {
            out = remove_kube_item(&out, file, KubeKind::Cluster, &ctx.cluster)?;
        }
        if let Some(user) = &ctx.user
            && !others().any(|c| c.user.as_ref() == Some(user))
        {
            out = remove_kube_item(&out, file, KubeKind::User, user)?;
        }
    }
    if config.current_context.as_deref() == Some(name) {
        out = set_kube_current(&out, file, None)?;
    }
    Ok(Some(out))
}

/// Takes `<file>.lock` of each file, as kubectl does before it reads and writes one.
fn lock_files(files: &[&Path]) -> Result<Vec<operator_file::FileLock>, ContextsError> {
    let mut locks = Vec::new();
    for file in files {
        locks.push(operator_file::lock(file)?);
    }
    Ok(locks)
}

/// Writes the files given (`None`: left as it is) as kubectl writes its kubeconfig, under the
/// locks the caller took before reading them: each file's write target (through symlinks)
/// checked writable and backed up, then written with its mode kept. A failure in the second write
/// puts the first back as it was.
fn write_both(
    files: &ContextFiles,
    talos_text: Option<&str>,
    kube_text: Option<&str>,
    now: SystemTime,
) -> Result<ContextsWritten, ContextsError> {
    let writes: Vec<(&Path, &str)> = [
        (files.talosconfig.as_path(), talos_text),
        (files.kubeconfig.as_path(), kube_text),
    ]
    .into_iter()
    .filter_map(|(file, text)| text.map(|t| (file, t)))
    .collect();
    for (file, _) in &writes {
        operator_file::check_writable(&operator_file::write_target(file))?;
    }
    let mut written = ContextsWritten::default();
    for (file, _) in &writes {
        let backup = operator_file::backup(file, now, files.kept_backups)?;
        if *file == files.talosconfig.as_path() {
            written.talosconfig_backup = backup;
        } else {
            written.kubeconfig_backup = backup;
        }
    }
    let mut done: Vec<PathBuf> = Vec::new();
    for (file, text) in &writes {
        let target = operator_file::write_target(file);
        if let Err(e) = operator_file::write_keeping_mode(&target, text) {
            // Both or neither: the first file goes back to the text it had, so a rerun
            // finds no half of the merge (a talos context without its kube one).
            for earlier in &done {
                let _ = restore(earlier, files, &written);
            }
            return Err(e.into());
        }
        done.push(file.to_path_buf());
    }
    Ok(written)
}

/// Puts `file` back to what its backup (made by this write) holds; a file that did not exist
/// before is removed.
fn restore(file: &Path, files: &ContextFiles, written: &ContextsWritten) -> std::io::Result<()> {
    let backup = if file == files.talosconfig.as_path() {
        &written.talosconfig_backup
    } else {
        &written.kubeconfig_backup
    };
    let target = operator_file::write_target(file);
    match backup {
        Some(b) => {
            let text = std::fs::read_to_string(b)?;
            operator_file::write_keeping_mode(&target, &text).map_err(std::io::Error::other)
        }
        None => std::fs::remove_file(&target),
    }
}

#[cfg(test)]
#[path = "contexts_tests.rs"]
mod tests;
