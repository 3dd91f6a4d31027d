//! The provisions a killed console left unfinished, followed again: a cluster's provision
//! journal read (every cluster's at once: `left_in_journals`) for its VMs not at a final stage
//! (grouped by the provider, at its endpoint, and the role that started them) and its failed
//! ones; each group followed again, reading only (the provider polled, then the join checks),
//! until its VMs reach a final stage.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::mpsc;

use super::cluster::{config_key, join_checks};
use super::{
    JournalEntry, Provider, ProvisionEvent, ProvisionJournal, ProvisionPlan, ProvisionRunner,
    ProvisionStage, RunnerOptions, VmProgress,
};
use crate::config::{Config, MachineRole};
use crate::discovery::Cluster;

/// How often a journal's VMs are looked at while they are followed again.
const POLL: Duration = Duration::from_secs(1);

/// Unfinished VMs of one provider (at one endpoint) and role from a cluster's journal.
pub struct FollowGroup {
    pub cluster: Cluster,
    /// The cluster's key in taloscope's config, as its journal is named.
    pub key: String,
    pub provider: String,
    /// Where the VMs' ids belong; empty in a journal from before endpoints were kept.
    pub endpoint: String,
    role: String,
    vms: Vec<VmProgress>,
}

/// What the provision journals under `state_dir` of `clusters` left: the unfinished VMs
/// grouped to be followed again, every VM to show by the key its cluster's journal is named
/// by, the clusters with one, and why a journal could not be read.
#[derive(Default)]
pub struct LeftUnfinished {
    pub groups: Vec<FollowGroup>,
    pub vms: Vec<(String, JournalEntry)>,
    pub clusters: Vec<String>,
    pub errors: Vec<String>,
}

/// Every cluster's provision journal under `state_dir` read (by its key in `config`): what
/// they left.
pub fn left_in_journals(state_dir: &Path, clusters: &[Cluster], config: &Config) -> LeftUnfinished {
    let mut left = LeftUnfinished::default();
    for c in clusters {
        let key = config_key(config, c);
        let journal = match ProvisionJournal::open(state_dir, &key) {
            Ok(j) => j,
            Err(e) => {
                left.errors.push(e.to_string());
                continue;
            }
        };
        let (unfinished, shown) = left_unfinished(&journal, c, &key);
        if !shown.is_empty() {
            left.clusters.push(c.name.clone());
        }
        left.vms.extend(shown.into_iter().map(|e| (key.clone(), e)));
        left.groups.extend(unfinished);
    }
    left
}

/// What `journal` of `cluster` (its key `key`) left: the unfinished VMs grouped to be followed
/// again, and every VM to show (the unfinished, and the failed ones the provider knows by id,
/// which a terminate may end).
fn left_unfinished(
    journal: &ProvisionJournal,
    cluster: &Cluster,
    key: &str,
) -> (Vec<FollowGroup>, Vec<JournalEntry>) {
    let mut by_group: BTreeMap<(String, String, String), Vec<VmProgress>> = BTreeMap::new();
    let mut shown = Vec::new();
    for e in journal.entries() {
        let failed = e.progress.stage == ProvisionStage::Failed && e.progress.id.is_some();
        if !e.progress.stage.is_final() {
            let group = (e.provider.clone(), e.endpoint.clone(), e.role.clone());
            by_group.entry(group).or_default().push(e.progress.clone());
        } else if !failed {
            continue;
        }
        shown.push(e.clone());
    }
    let groups = by_group
        .into_iter()
        .map(|((provider, endpoint, role), vms)| FollowGroup {
            cluster: cluster.clone(),
            key: key.to_string(),
            provider,
            endpoint,
            role,
            vms,
        });
    (groups.collect(), shown)
}

impl FollowGroup {
    /// The group's VMs followed again to a final stage on `provider` (its runner's events on
    /// `events`, its journal under `state_dir`, the join checks through `kubeconfig`): how
    /// that ended.
    pub async fn follow(
        self,
        provider: Result<Provider, String>,
        kubeconfig: Option<kube::config::Kubeconfig>,
        state_dir: PathBuf,
        events: mpsc::Sender<ProvisionEvent>,
    ) -> Result<String, String> {
        let parts = async {
            let provider = provider?;
            if !self.endpoint.is_empty() && provider.endpoint != self.endpoint {
                return Err(format!(
                    "provider {} is now {}, but the journal's VMs are on {}; their ids mean other VMs there",
                    provider.name, provider.endpoint, self.endpoint
                ));
            }
            let (checks, _) = join_checks(&self.cluster, kubeconfig.as_ref()).await?;
            let journal = ProvisionJournal::open(&state_dir, &self.key).map_err(|e| e.to_string())?;
            Ok::<_, String>((provider, checks, journal))
        }
        .await;
        let (provider, checks, journal) =
            parts.map_err(|e| format!("cannot follow the journal's VMs again: {e}"))?;
        let role = MachineRole::parse(&self.role).unwrap_or(MachineRole::Worker);
        let plan = ProvisionPlan::following(&self.key, &provider, role, self.vms.len());
        let options = RunnerOptions {
            poll: POLL,
            ..RunnerOptions::default()
        };
        let runner = ProvisionRunner::new(plan, provider, checks, Some(journal), options, events);
        runner.follow_again(self.vms).await.result()
    }
}
