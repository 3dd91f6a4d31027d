//! Cluster discovery: reads kubeconfig and talosconfig contexts from the usual
//! places, merges lists the way kubectl does, and pairs the two kinds of
//! context into clusters. Bad input becomes an error entry, never a panic.
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

mod credentials;
mod grouping;
mod kubeconfig;
pub use kubeconfig::{
    KubeLoad, load_texts as load_kubeconfig_texts, read_file as read_kubeconfig_file,
};
pub use talosconfig::{TalosLoad, load_texts as load_talosconfig_texts};
mod pairing;
pub mod report;
mod roles;
mod sources;
mod talosconfig;
#[cfg(test)]
pub(crate) mod test_files;

pub use credentials::normalize_talos_key_pem;
pub use pairing::host_of;
pub use roles::{ClientCertificate, Role, Roles, parse_client_certificate};
pub use sources::{SourceOverrides, where_looked, with_presence};

/// One talosconfig context, with its credentials decoded to PEM text. Every
/// PEM present has been checked to parse; a field the file leaves out (a
/// context using other auth) is an empty string.
#[derive(Clone, PartialEq, Eq)]
pub struct TalosContext {
    pub name: String,
    /// The file that defined this context (the first one, when merged).
    pub file: PathBuf,
    pub endpoints: Vec<String>,
    pub nodes: Vec<String>,
    pub ca_pem: String,
    pub crt_pem: String,
    /// Private key PEM, label normalised (Talos writes `ED25519 PRIVATE KEY`).
    pub key_pem: String,
}

impl fmt::Debug for TalosContext {
    // Keys never reach logs or panics.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TalosContext")
            .field("name", &self.name)
            .field("file", &self.file)
            .field("endpoints", &self.endpoints)
            .field("nodes", &self.nodes)
            .finish_non_exhaustive()
    }
}

/// One kubeconfig context, as far as discovery needs it; the kube client is
/// built later from the merged kubeconfig kept in [`Discovery`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeContext {
    pub name: String,
    pub file: PathBuf,
    /// The `cluster:` the context points at.
    pub cluster: String,
    pub user: String,
    /// The cluster's `server:` URL, when the cluster entry exists.
    pub server: Option<String>,
}

/// Why a talos and a kube context were put together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairedBy {
    /// taloscope's config file says so.
    Config,
    /// kube cluster name equals the talos context name, or `admin@<talos context>`.
    Name,
    /// the kube server's host is one of the talos endpoints or nodes.
    Address,
}

/// A cluster: a talos context, a kube context, or both; the ones in use, and the other
/// contexts that reach the same cluster.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cluster {
    pub name: String,
    /// The talos context in use: the most capable one, unless another was named.
    pub talos: Option<TalosContext>,
    pub kube: Option<KubeContext>,
    pub paired_by: Option<PairedBy>,
    /// Other talos contexts with the same CA and an endpoint in common, in name order.
    pub alternate_talos: Vec<TalosContext>,
    /// Other kube contexts with the same API server, in name order.
    pub alternate_kube: Vec<KubeContext>,
}

impl Cluster {
    /// The talos context's endpoints (empty for a Kubernetes-only cluster).
    pub fn endpoints(&self) -> &[String] {
        self.talos.as_ref().map_or(&[], |t| t.endpoints.as_slice())
    }

    /// The talos context's nodes (empty for a Kubernetes-only cluster).
    pub fn nodes(&self) -> &[String] {
        self.talos.as_ref().map_or(&[], |t| t.nodes.as_slice())
    }

    /// The Kubernetes API server URL, when there is a kube context with a cluster entry.
    pub fn kube_server(&self) -> Option<&str> {
        self.kube.as_ref().and_then(|k| k.server.as_deref())
    }

    pub fn talos_context(&self) -> Option<&str> {
        self.talos.as_ref().map(|t| t.name.as_str())
    }

    pub fn kube_context(&self) -> Option<&str> {
        self.kube.as_ref().map(|k| k.name.as_str())
    }

    /// The contexts not in use that reach this cluster: talos ones, then kube ones.
    pub fn alternate_contexts(&self) -> Vec<&str> {
        let talos = self.alternate_talos.iter().map(|t| t.name.as_str());
        talos
            .chain(self.alternate_kube.iter().map(|k| k.name.as_str()))
            .collect()
    }

    /// The roles of the talos context in use (`os:admin`), as its certificate says; empty when
    /// there is none or it does not parse.
    pub fn talos_roles(&self) -> String {
        self.talos
            .as_ref()
            .and_then(|t| parse_client_certificate(&t.crt_pem).ok())
            .map(|c| c.roles.to_string())
            .unwrap_or_default()
    }

    /// This cluster using exactly the context `name` (a talos or kube context, primary or
    /// alternate); the cluster as it is when `name` is its own name and no alternate context
    /// is so named (the context it was named after, after a switch away). `None`: not this
    /// cluster's.
    pub fn with_context(&self, name: &str) -> Option<Cluster> {
        let mut cluster = self.clone();
        if self.talos_context() == Some(name) || self.kube_context() == Some(name) {
            return Some(cluster);
        }
        if let Some(i) = self.alternate_talos.iter().position(|t| t.name == name) {
            let named = cluster.alternate_talos.remove(i);
            cluster.alternate_talos.extend(cluster.talos.replace(named));
            cluster.alternate_talos.sort_by(|a, b| a.name.cmp(&b.name));
            return Some(cluster);
        }
        let Some(i) = self.alternate_kube.iter().position(|k| k.name == name) else {
            return (self.name == name).then_some(cluster);
        };
        let named = cluster.alternate_kube.remove(i);
        cluster.alternate_kube.extend(cluster.kube.replace(named));
        cluster.alternate_kube.sort_by(|a, b| a.name.cmp(&b.name));
        Some(cluster)
    }
}

/// A problem with one file or context. Everything else still loads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiscoveryError {
    pub file: PathBuf,
    pub context: Option<String>,
    pub message: String,
}

impl DiscoveryError {
    pub(crate) fn new(file: &Path, context: Option<&str>, message: impl Into<String>) -> Self {
        DiscoveryError {
            file: file.to_path_buf(),
            context: context.map(str::to_owned),
            message: message.into(),
        }
    }
}

impl fmt::Display for DiscoveryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.context {
            Some(ctx) => write!(
                f,
                "{}: context {ctx:?}: {}",
                self.file.display(),
                self.message
            ),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// Where to look: resolved from flags and environment by [`Sources::resolve`].
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// kubeconfig files in merge order (the first file that defines a name wins).
    pub kubeconfigs: Vec<PathBuf>,
    /// talosconfig files in merge order.
    pub talosconfigs: Vec<PathBuf>,
    /// taloscope's own config (explicit pairings).
    pub config: crate::config::Config,
    /// The config file it came from, when there was one.
    pub config_file: Option<PathBuf>,
}

/// Everything discovery found: clusters in display order and the errors met.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    pub clusters: Vec<Cluster>,
    pub errors: Vec<DiscoveryError>,
    /// The merged kubeconfig (first definition of each name wins), from which
    /// kube clients are built later. `None` when no kubeconfig file loaded.
    pub kubeconfig: Option<kube::config::Kubeconfig>,
    pub current_kube_context: Option<String>,
    pub current_talos_context: Option<String>,
    /// The kubeconfig files that were read and parsed, in merge order.
    pub kubeconfig_files: Vec<PathBuf>,
    /// The talosconfig files that were read and parsed, in merge order.
    pub talosconfig_files: Vec<PathBuf>,
}

impl Discovery {
    /// The cluster shown under `name`.
    pub fn cluster(&self, name: &str) -> Option<&Cluster> {
        self.clusters.iter().find(|c| c.name == name)
    }

    /// The cluster `--context NAME` means ([`select_among`] its clusters).
    pub fn select(&self, name: &str) -> Option<Cluster> {
        select_among(&self.clusters, name)
    }

    /// Like [`Discovery::select`], and the cluster keeps using that context from now on (the
    /// console's `--context`). Returns the cluster's name.
    pub fn use_context(&mut self, name: &str) -> Option<String> {
        let chosen = self.select(name)?;
        let slot = self.clusters.iter_mut().find(|c| c.name == chosen.name)?;
        *slot = chosen;
        Some(slot.name.clone())
    }
}

/// The cluster `--context NAME` and the console's `:ctx NAME` mean among `clusters`: the
/// cluster of that name, else the cluster one of whose contexts (in use or alternate) is so
/// named; either way using exactly the context so named when the cluster has one, as kubectl's
/// `--context` names a context.
pub fn select_among(clusters: &[Cluster], name: &str) -> Option<Cluster> {
    let named = clusters.iter().find(|c| c.name == name);
    (named.and_then(|c| c.with_context(name)))
        .or_else(|| clusters.iter().find_map(|c| c.with_context(name)))
}

/// Reads every kubeconfig and talosconfig in `sources`, merges each kind with
/// kubectl's first-wins rule, pairs the contexts into clusters and makes the
/// contexts that reach the same cluster one cluster, sorted by name. Never fails as a whole: each problem is an entry in `errors`.
pub fn discover(sources: &Sources) -> Discovery {
    let kube = kubeconfig::load(&sources.kubeconfigs);
    let talos = talosconfig::load(&sources.talosconfigs);
    let paired = pairing::pair(
        talos.contexts,
        kube.contexts,
        &sources.config,
        sources.config_file.as_deref(),
    );
    let mut errors = kube.errors;
    errors.extend(talos.errors);
    errors.extend(paired.errors);
    Discovery {
        clusters: grouping::group(paired.clusters, crate::clock::unix_now() as i64),
        errors,
        kubeconfig: kube.merged,
        current_kube_context: kube.current_context,
        current_talos_context: talos.current_context,
        kubeconfig_files: kube.files,
        talosconfig_files: talos.files,
    }
}

/// Texts standing in for files: their names, and a reader that parses the
/// text given for a name (empty when none was).
fn texts_as_files<'a, T, E>(
    texts: &'a [(PathBuf, String)],
    parse: impl Fn(&Path, &str) -> Result<T, E> + 'a,
) -> (Vec<PathBuf>, impl Fn(&Path) -> Result<T, E> + 'a) {
    let files = texts.iter().map(|(f, _)| f.clone()).collect();
    let read = move |file: &Path| {
        let text = texts
            .iter()
            .find(|(f, _)| f == file)
            .map(|(_, t)| t.as_str());
        parse(file, text.unwrap_or_default())
    };
    (files, read)
}

/// A YAML error as one line: where it is and what is wrong, without the source
/// snippet serde-saphyr can attach (the snippet could quote a key).
pub(crate) fn describe_yaml_error(err: &serde_saphyr::Error) -> String {
    let bare = err.without_snippet().to_string();
    let bare = bare.lines().next().unwrap_or_default().trim();
    match err.location().filter(|loc| loc.line() > 0) {
        Some(loc) => {
            let (line, column) = (loc.line(), loc.column());
            let what = bare
                .strip_suffix(&format!(" at line {line}, column {column}"))
                .unwrap_or(bare);
            format!("YAML error at line {line}, column {column}: {what}")
        }
        None => format!("YAML error: {bare}"),
    }
}
