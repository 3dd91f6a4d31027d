//! What the shell knows for provisioning, whichever screen provisions: the console's config,
//! OpenNebula's environment and the kubeconfig; what the journals' followers report
//! (`JournalVms`, shown on the one progress screen). Plain data; `views::provision` is the wizard.
use std::sync::Arc;

use crate::config::Config;
use crate::opennebula::auth::OneEnvironment;
use crate::provision::JournalEntry;

/// What provisioning reads of the console, whichever screen provisions.
#[derive(Debug, Clone, Default)]
pub struct ProvisionState {
    /// taloscope's config (providers, per-cluster sources and machine configs).
    pub config: Arc<Config>,
    /// OpenNebula's environment (ONE_AUTH, ONE_XMLRPC…), as commands/ captured it.
    pub one_env: Arc<OneEnvironment>,
    /// The merged kubeconfig the join checks are built from.
    pub kubeconfig: Option<kube::config::Kubeconfig>,
}

/// What the provision journals of `clusters` (shown by name) left, each VM with its cluster's
/// key: unfinished ones (a killed console's) being followed again until they joined, failed
/// ones a terminate may end; shown as a provision's progress.
#[derive(Debug, Clone)]
pub struct JournalVms {
    pub clusters: Vec<String>,
    pub vms: Vec<(String, JournalEntry)>,
}
