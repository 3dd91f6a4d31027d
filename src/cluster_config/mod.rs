//! What a new cluster is made from, natively (no talosctl): the secrets bundle, the
//! `controlplane.yaml`/`worker.yaml` of the chosen Talos version with config patches, the
//! talosconfig, the operator's talos and kube contexts merged in or removed, and the
//! `Kubeconfig` stream's archive read under caps. Pure and file-level: no VMs, no network.

mod contexts;
mod generate;
mod kubeconfig_archive;
mod kubernetes_documents;
pub mod operator_file;
mod patch;
mod pki;
mod secrets;
mod strategic_merge;
mod talosconfig;
mod tree;
mod version_rules;
pub mod yaml_splice;

pub use contexts::{
    ContextFiles, ContextsError, ContextsWritten, KubeNames, MergedEntries, MergedEntry,
    check_merge, kube_names_for, merge_contexts, remove_contexts, remove_merged,
};
pub use generate::{GenerateError, GenerateInput, MachineConfigs};
pub use kubeconfig_archive::{
    KUBECONFIG_ARCHIVE_LIMIT, KubeconfigArchiveError, kubeconfig_from_tar_gz,
};
pub use operator_file::{OperatorFileError, backup as backup_file};
pub use patch::{ConfigPatch, ConfigPatches, PatchError, PatchTarget};
pub use pki::{CertAndKey, PkiError};
pub use secrets::{BundleCerts, ClusterIdentity, EncryptionSecret, SecretsBundle, SecretsError};
pub use talosconfig::{ClientCredentials, TalosconfigError, generate_talosconfig};
pub use tree::ConfigNode;
pub use version_rules::{ConfigContract, NEWEST_GENERATED, OLDEST_GENERATED, UnsupportedTalos};

/// One bundle for all tests of this module: a 4096-bit RSA key takes seconds to make.
#[cfg(test)]
pub(crate) fn test_bundle() -> &'static SecretsBundle {
    static BUNDLE: std::sync::OnceLock<SecretsBundle> = std::sync::OnceLock::new();
    BUNDLE.get_or_init(|| {
        let talos = crate::versions::TalosVersion::parse("v1.11.3").unwrap();
        SecretsBundle::generate(&talos).unwrap()
    })
}
