//! The provision wizard's IO from the event loop: the provider's sources listed and the plan
//! made, each in a task that reports through the app channel; and at startup the provision
//! journals read, their unfinished VMs followed again, told as a provision's progress.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::run::Console;
use crate::app::action::{Action, AppEvent};
use crate::app::message::Message;
use crate::app::provision::{ProvisionEffect, ProvisionUpdate, SourceChoice};
use crate::app::state::AppState;
use crate::cluster_lifecycle::provider_named;
use crate::config::{Config, MachineRole};
use crate::discovery::Cluster;
use crate::opennebula::auth::OneEnvironment;
use crate::operation::OperationKind;
use crate::operation::progress::ProgressEvent;
use crate::operation::runner_events::ProvisionSteps;
use crate::provision::cluster::{config_key, join_checks, machine_config_endpoint, names_in_use};
use crate::provision::{
    JournalEntry, PlanRequest, PlanSource, Provider, ProviderClients, ProvisionJournal,
    ProvisionPlan, ProvisionRunner, RunnerOptions, plan,
};

/// How often a journal's VMs are looked at while they are followed again.
const POLL: Duration = Duration::from_secs(1);

type Kubeconfig = Option<kube::config::Kubeconfig>;

fn send(app: &mpsc::Sender<AppEvent>, update: ProvisionUpdate) -> impl Future<Output = ()> {
    let app = app.clone();
    async move {
        let _ = app.send(AppEvent::Provision(Box::new(update))).await;
    }
}

fn provider(config: &Config, env: &OneEnvironment, name: &str) -> Result<Provider, String> {
    provider_named(config, env, name)
        .map(|(provider, _)| provider)
        .map_err(|e| e.to_string())
}

fn cluster(state: &AppState, name: &str) -> Result<Cluster, String> {
    state
        .clusters
        .iter()
        .find(|c| c.name == name)
        .cloned()
        .ok_or_else(|| format!("cluster {name} is no longer in the talosconfig"))
}

async fn list_sources(provider: Provider) -> Result<Vec<SourceChoice>, String> {
    match &provider.clients {
        ProviderClients::Templates(client) => client
            .templates()
            .await
            .map(|list| {
                list.into_iter()
                    .map(|t| SourceChoice {
                        id: t.id,
                        name: t.name,
                        roles: Vec::new(),
                    })
                    .collect()
            })
            .map_err(|e| e.to_string()),
        ProviderClients::Flow { flow, .. } => flow
            .services()
            .await
            .map(|list| {
                list.into_iter()
                    .map(|s| SourceChoice {
                        id: s.id,
                        name: s.name,
                        roles: s.roles.into_iter().map(|r| r.name).collect(),
                    })
                    .collect()
            })
            .map_err(|e| e.to_string()),
    }
}

/// Runs one effect of the wizard; what comes back is fed to update.
pub(super) fn perform(
    console: &mut Console,
    effect: ProvisionEffect,
    app: &mpsc::Sender<AppEvent>,
) -> Option<Action> {
    let io = WizardIo {
        one_env: Arc::clone(&console.state.provision.one_env),
        kubeconfig: console.state.provision.kubeconfig.clone(),
        app: app.clone(),
    };
    match effect {
        ProvisionEffect::ListSources { cluster, provider } => {
            let config = Arc::clone(&console.state.provision.config);
            tokio::spawn(io.list_sources(config, cluster, provider));
        }
        ProvisionEffect::Plan {
            cluster: name,
            asked,
            config,
            request,
        } => {
            let found = cluster(&console.state, &name);
            tokio::spawn(io.plan(found, name, asked, config, request));
        }
    }
    None
}

/// What the wizard's tasks take from the console: OpenNebula's environment, the kubeconfig,
/// and the app channel they report on.
struct WizardIo {
    one_env: Arc<OneEnvironment>,
    kubeconfig: Kubeconfig,
    app: mpsc::Sender<AppEvent>,
}

impl WizardIo {
    /// The provider's templates or services, for the plan form.
    async fn list_sources(self, config: Arc<Config>, cluster: String, name: String) {
        let result = match provider(&config, &self.one_env, &name) {
            Ok(p) => list_sources(p).await,
            Err(e) => Err(e),
        };
        let update = ProvisionUpdate::Sources {
            cluster,
            provider: name,
            result,
        };
        send(&self.app, update).await;
    }
    /// The plan, made with the headless command's planner and the names already taken, and its
    /// machine config's endpoint (read here: the wizard's guards are evaluated in update).
    async fn plan(
        self,
        found: Result<Cluster, String>,
        cluster: String,
        asked: u64,
        planning: Box<Config>,
        request: PlanRequest,
    ) {
        let result = async {
            let found = found?;
            let name = request.provider.clone().unwrap_or_default();
            let provider = provider(&planning, &self.one_env, &name)?;
            let (checks, _) = join_checks(&found, self.kubeconfig.as_ref()).await?;
            let taken = names_in_use(&checks).await;
            plan(&planning, &provider, &request, &taken)
                .await
                .map(Box::new)
                .map_err(|e| e.to_string())
        }
        .await;
        let machine_config_endpoint = result
            .as_ref()
            .ok()
            .and_then(|p| machine_config_endpoint(p));
        let update = ProvisionUpdate::Planned {
            cluster,
            asked,
            result,
            machine_config_endpoint,
        };
        send(&self.app, update).await;
    }
}

/// The provision journals of the discovered clusters, read once at startup: their unfinished
/// VMs followed again (reading only: polling the provider, then the join checks), told as one
/// provision's progress whose VMs are its steps.
pub(super) fn startup(state: &AppState, dir: &Path, app: &mpsc::Sender<AppEvent>) -> Vec<Action> {
    let config = Arc::clone(&state.provision.config);
    let mut actions = Vec::new();
    let mut clusters = Vec::new();
    let mut unfinished: Vec<JournalEntry> = Vec::new();
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
        for e in journal
            .entries()
            .iter()
            .filter(|e| !e.progress.stage.is_final())
        {
            let group = (e.provider.clone(), e.endpoint.clone(), e.role.clone());
            by_group.entry(group).or_default().push(e.clone());
        }
        if by_group.is_empty() {
            continue;
        }
        clusters.push(c.name.clone());
        for ((provider, endpoint, role), entries) in by_group {
            unfinished.extend(entries.iter().cloned());
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
    if groups.is_empty() {
        return actions;
    }
    let names = unfinished.iter().map(|e| e.progress.name.clone()).collect();
    let io = WizardIo {
        one_env: Arc::clone(&state.provision.one_env),
        kubeconfig: state.provision.kubeconfig.clone(),
        app: app.clone(),
    };
    tokio::spawn(follow_all(groups, config, io, names));
    actions.push(Action::Event(AppEvent::Provision(Box::new(
        ProvisionUpdate::FollowedAgain {
            clusters,
            entries: unfinished,
        },
    ))));
    actions
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
    io: WizardIo,
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
    io: &WizardIo,
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
    // Only what the runner's following reads: who, where, which role.
    let plan = ProvisionPlan {
        cluster: group.key.clone(),
        provider: provider.name.clone(),
        provider_kind: provider.kind,
        endpoint: provider.endpoint.clone(),
        role: MachineRole::parse(&group.role).unwrap_or(MachineRole::Worker),
        count: group.vms.len(),
        source: PlanSource::Template {
            id: 0,
            name: "from the journal".into(),
        },
        machine_config: None,
        name_pattern: String::new(),
        vm_names: Vec::new(),
        room: Default::default(),
    };
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
