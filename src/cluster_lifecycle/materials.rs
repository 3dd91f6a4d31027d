//! What a create needs made and what it writes into the operator's files, as two traits: the
//! secrets bundle and the machine configs and talosconfig made from it, and the merge and
//! removal of contexts (backups first). Their one implementation is the `cluster_config`
//! module's; the runner and its tests see only these.
use std::fmt;
use std::path::Path;

use super::plan::CreatePlan;

/// The admin client identity of the new cluster (from its secrets bundle).
#[derive(Clone, PartialEq, Eq)]
pub struct AdminIdentity {
    pub ca_pem: String,
    pub crt_pem: String,
    pub key_pem: String,
}

/// The role configs and the admin identity, in memory only.
#[derive(Clone, PartialEq, Eq)]
pub struct Materials {
    pub controlplane: Vec<u8>,
    pub worker: Vec<u8>,
    pub admin: AdminIdentity,
}

impl fmt::Debug for Materials {
    // Every secret of the cluster is in here: only sizes are shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Materials")
            .field("controlplane_bytes", &self.controlplane.len())
            .field("worker_bytes", &self.worker.len())
            .finish_non_exhaustive()
    }
}

impl Materials {
    pub fn config_for(&self, role: crate::config::MachineRole) -> &[u8] {
        match role {
            crate::config::MachineRole::Controlplane => &self.controlplane,
            crate::config::MachineRole::Worker => &self.worker,
        }
    }
}

/// Makes a cluster's configs.
pub trait ClusterMaterials: Send + Sync + 'static {
    /// The secrets bundle at `bundle` (generated for the plan's Talos version and saved there,
    /// owner-only and atomically, when `fresh`; else loaded) and the role configs for
    /// `endpoint` with the plan's patches applied.
    fn prepare(
        &self,
        plan: &CreatePlan,
        endpoint: &str,
        bundle: &Path,
        fresh: bool,
    ) -> Result<Materials, String>;
    /// A talosconfig (YAML) with one context named `name`, these endpoints and nodes.
    fn talosconfig(
        &self,
        materials: &Materials,
        name: &str,
        endpoints: &[String],
    ) -> Result<String, String>;
    /// The kubeconfig inside the `.tar.gz` Talos streams from `Kubeconfig`.
    fn kubeconfig_from_archive(&self, archive: &[u8]) -> Result<String, String>;
}

/// The operator's talosconfig and kubeconfig.
pub trait ContextFiles: Send + Sync + 'static {
    /// Merges the talos context and the kube context of `cluster` (a name in use is refused;
    /// each file is backed up first and written atomically); says what was written where.
    fn merge(&self, cluster: &str, talosconfig: &str, kubeconfig: &str) -> Result<String, String>;
    /// Removes these contexts (backups first); says what was removed and where the backups are.
    fn remove(
        &self,
        talos_context: Option<&str>,
        kube_context: Option<&str>,
    ) -> Result<String, String>;
}

impl ClusterMaterials for Box<dyn ClusterMaterials> {
    fn prepare(
        &self,
        plan: &CreatePlan,
        endpoint: &str,
        bundle: &Path,
        fresh: bool,
    ) -> Result<Materials, String> {
        (**self).prepare(plan, endpoint, bundle, fresh)
    }
    fn talosconfig(
        &self,
        materials: &Materials,
        name: &str,
        endpoints: &[String],
    ) -> Result<String, String> {
        (**self).talosconfig(materials, name, endpoints)
    }
    fn kubeconfig_from_archive(&self, archive: &[u8]) -> Result<String, String> {
        (**self).kubeconfig_from_archive(archive)
    }
}

impl ContextFiles for Box<dyn ContextFiles> {
    fn merge(&self, cluster: &str, talosconfig: &str, kubeconfig: &str) -> Result<String, String> {
        (**self).merge(cluster, talosconfig, kubeconfig)
    }
    fn remove(
        &self,
        talos_context: Option<&str>,
        kube_context: Option<&str>,
    ) -> Result<String, String> {
        (**self).remove(talos_context, kube_context)
    }
}

/// The materials and context files a create or delete works with.
pub type ClusterFiles = (Box<dyn ClusterMaterials>, Box<dyn ContextFiles>);

/// The one place the create and delete commands and the console get their materials and
/// context files: the `cluster_config` module's implementations, writing into the operator's
/// `talosconfig` and `kubeconfig` files. Until that module is part of this build, creating and
/// deleting is refused here with the reason, before anything is asked of a provider.
pub fn cluster_files(talosconfig: &Path, kubeconfig: &Path) -> Result<ClusterFiles, String> {
    let _ = (talosconfig, kubeconfig);
    Err("this build has no cluster_config module (secrets bundle, machine configs, context merging): \
         creating and deleting clusters needs it; --plan works without it"
        .into())
}
