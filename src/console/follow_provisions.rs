//! Provisions a killed console left unfinished: the provision journals of the discovered
//! clusters read once at startup, their unfinished VMs followed again (reading only, so no
//! approval: the provider polled, then the join checks), told as one provision's progress
//! whose VMs are its steps; failed VMs shown there too, offering their terminate.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::run_provision_wizard::provider;
use crate::app::action::{Action, AppEvent};
use crate::app::message::Message;
use crate::app::provision::JournalVms;
use crate::app::state::AppState;
use crate::config::{Config, MachineRole};
use crate::discovery::Cluster;
use crate::opennebula::auth::OneEnvironment;
use crate::operation::OperationKind;
use crate::operation::progress::ProgressEvent;
use crate::operation::runner_events::ProvisionSteps;
use crate::provision::cluster::{config_key, join_checks};
use crate::provision::{
    JournalEntry, ProvisionJournal, ProvisionPlan, ProvisionRunner, ProvisionStage, RunnerOptions,
};

/// How often a journal's VMs are looked at while they are followed again.
const POLL: Duration = Duration::from_secs(1);

/// Every discovered cluster's provision journal read; the followers of their unfinished VMs
/// started, and the action that puts them and the failed ones on the progress screen.
pub(super) fn startup(state: &AppState, dir: &Path, app: &mpsc::Sender<AppEvent>) -> Vec<Action> {
    let config = Arc::clone(&state.provision.config);
    let mut actions = Vec::new();
    let mut clusters = Vec::new();
    let mut vms: Vec<(String, JournalEntry)> = Vec::new();
    let mut groups = Vec::new();
    for c in &state.clusters {
        let key = config_key(&config, c);
        let journal = match ProvisionJournal::open(dir, &key) {
            Ok(j) => j,
            Err(e) => {
                actions.push(Action::Notify(Message::error(e.to_string())));
                continue;
            }
        };
        let mut by_group: BTreeMap<(String, String, String), Vec<JournalEntry>> = BTreeMap::new();
        let before = vms.len();
        for e in journal.entries() {
            let failed = e.progress.stage == ProvisionStage::Failed && e.progress.id.is_some();
            if !e.progress.stage.is_final() {
                let group = (e.provider.clone(), e.endpoint.clone(), e.role.clone());
                by_group.entry(group).or_default().push(e.clone());
            } else if !failed {
                continue;
            }
            vms.push((key.clone(), e.clone()));
        }
        if vms.len() > before {
            clusters.push(c.name.clone());
        }
        for ((provider, endpoint, role), entries) in by_group {
            groups.push(FollowGroup {
                cluster: c.clone(),
                key: key.clone(),
                provider,
                endpoint,
                role,
                vms: entries.into_iter().map(|e| e.progress).collect(),
                state_dir: dir.to_path_buf(),
            });
        }
    }
    if vms.is_empty() {
        return actions;
    }
    if !groups.is_empty() {
        let names = vms.iter().map(|(_, e)| e.progress.name.clone()).collect();
        let io = ProvisionIo {
            one_env: Arc::clone(&state.provision.one_env),
            kubeconfig: state.provision.kubeconfig.clone(),
            app: app.clone(),
        };
        tokio::spawn(follow_all(groups, config, io, names));
    }
    let from_journals = JournalVms { clusters, vms };
    actions.push(Action::Event(AppEvent::Provision(Box::new(from_journals))));
    actions
}

/// What the followers take from the console: OpenNebula's environment, the kubeconfig, and
/// the app channel they report on.
struct ProvisionIo {
    one_env: Arc<OneEnvironment>,
    kubeconfig: Option<kube::config::Kubeconfig>,
    app: mpsc::Sender<AppEvent>,
}

/// Unfinished VMs of one provider (at one endpoint) and role from a journal.
struct FollowGroup {
    cluster: Cluster,
    key: String,
    provider: String,
    /// Where the VMs' ids belong; empty in a journal from before endpoints were kept.
    endpoint: String,
    role: String,
    vms: Vec<crate::provision::VmProgress>,
    state_dir: PathBuf,
}

/// Every group followed at once, each VM a step of the one progress, then how they ended.
async fn follow_all(
    groups: Vec<FollowGroup>,
    config: Arc<Config>,
    io: ProvisionIo,
    names: Vec<String>,
) {
    let app = io.app.clone();
    let tell = |event: ProgressEvent| {
        let app = app.clone();
        async move {
            let _ = app
                .send(AppEvent::Progress(OperationKind::Provision, event))
                .await;
        }
    };
    let follows = groups.into_iter().map(|group| {
        let steps = ProvisionSteps::new(&group.key, &group.provider, names.clone());
        follow_again(group, &config, &io, steps, &tell)
    });
    let results = futures::future::join_all(follows).await;
    let failed: Vec<String> = results.iter().filter_map(|r| r.clone().err()).collect();
    let end = if failed.is_empty() {
        let joined: Vec<String> = results.into_iter().filter_map(Result::ok).collect();
        Ok(joined.join("; "))
    } else {
        Err(failed.join("; "))
    };
    tell(ProgressEvent::Finished(end)).await;
}

/// One group's VMs followed to a final stage; how that ended.
async fn follow_again<F: Future<Output = ()>>(
    group: FollowGroup,
    config: &Config,
    io: &ProvisionIo,
    mut steps: ProvisionSteps,
    tell: &impl Fn(ProgressEvent) -> F,
) -> Result<String, String> {
    let parts = async {
        let provider = provider(config, &io.one_env, &group.provider)?;
        if !group.endpoint.is_empty() && provider.endpoint != group.endpoint {
            return Err(format!(
                "provider {} is now {}, but the journal's VMs are on {}; their ids mean other VMs there",
                provider.name, provider.endpoint, group.endpoint
            ));
        }
        let (checks, _) = join_checks(&group.cluster, io.kubeconfig.as_ref()).await?;
        let journal =
            ProvisionJournal::open(&group.state_dir, &group.key).map_err(|e| e.to_string())?;
        Ok::<_, String>((provider, checks, journal))
    }
    .await;
    let (provider, checks, journal) =
        parts.map_err(|e| format!("cannot follow the journal's VMs again: {e}"))?;
    let role = MachineRole::parse(&group.role).unwrap_or(MachineRole::Worker);
    let plan = ProvisionPlan::following(&group.key, &provider, role, group.vms.len());
    let (tx, mut rx) = mpsc::channel(64);
    let options = RunnerOptions {
        poll: POLL,
        ..RunnerOptions::default()
    };
    let runner = ProvisionRunner::new(plan, provider, checks, Some(journal), options, tx);
    let vms = group.vms;
    let run = tokio::spawn(async move { runner.follow_again(vms).await });
    while let Some(event) = rx.recv().await {
        for told in steps.events(&event) {
            tell(told).await;
        }
    }
    match run.await {
        Ok(summary) if summary.succeeded() => Ok(summary.line()),
        Ok(summary) => Err(summary.line()),
        Err(e) => Err(format!("following the journal's VMs ended abnormally: {e}")),
    }
}
