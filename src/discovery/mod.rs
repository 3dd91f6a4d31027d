//! Cluster discovery: reads kubeconfig and talosconfig contexts from the usual
//! places, merges lists the way kubectl does, and pairs the two kinds of
//! context into clusters. Bad input becomes an error entry, never a panic.
use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

/// One talosconfig context, with its credentials decoded to PEM text.
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

/// A cluster: a talos context, a kube context, or both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    pub name: String,
    pub talos: Option<TalosContext>,
    pub kube: Option<KubeContext>,
    pub paired_by: Option<PairedBy>,
}

/// A problem with one file or context. Everything else still loads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiscoveryError {
    pub file: PathBuf,
    pub context: Option<String>,
    pub message: String,
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
    /// The merged kubeconfig, from which kube clients are built later.
    pub kubeconfig: Option<kube::config::Kubeconfig>,
    pub current_kube_context: Option<String>,
    pub current_talos_context: Option<String>,
    pub kubeconfig_files: Vec<PathBuf>,
    pub talosconfig_files: Vec<PathBuf>,
}
