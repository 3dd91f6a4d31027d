//! Provisioning IO from the event loop: the provider's sources listed, the
//! plan made, an approved plan run and a VM terminated, each in a task that
//! reports through the app channel; the approvals audited when they end;
//! and at startup the provision journals read, their unfinished VMs followed.
use crate::capi::CapiOwner;
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
use crate::approval::{ApprovedAction, Dispatcher, MutatingAction};
use crate::config::{Config, MachineRole};
use crate::discovery::Cluster;
use crate::opennebula::auth::OneEnvironment;
use crate::operation::provision::Provisioning;
use crate::operation::terminate::VmTermination;
use crate::operation::{CancelSignal, Runner};
use crate::provision::GuardInputs;
use crate::provision::cluster::{
    cluster_addresses, config_key, join_checks, machine_config_endpoint, names_in_use,
};
use crate::provision::{
    JoinChecks, PlanRequest, PlanSource, Provider, ProviderClients, ProvisionEvent,
    ProvisionJournal, ProvisionPlan, ProvisionRunner, RunnerOptions, VmProgress, connect, plan,
};

/// How often the console's runners look at their VMs.
const POLL: Duration = Duration::from_secs(1);

type Kubeconfig = Option<kube::config::Kubeconfig>;

fn send(app: &mpsc::Sender<AppEvent>, update: ProvisionUpdate) -> impl Future<Output = ()> {
    let app = app.clone();
    async move {
        let _ = app.send(AppEvent::Provision(Box::new(update))).await;
    }
}

fn provider(config: &Config, env: &OneEnvironment, name: &str) -> Result<Provider, String> {
    let cfg = config.providers.get(name).ok_or_else(|| {
        format!(
            "{}: no provider named {name:?} under providers:",
            config.file_label()
        )
    })?;
    connect(name, cfg, env).map_err(|e| e.to_string())
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

/// Runs one provisioning effect; what comes back is fed to update.
pub(super) fn perform(
    console: &mut Console,
    effect: ProvisionEffect,
    app: &mpsc::Sender<AppEvent>,
) -> Option<Action> {
    let io = ProvisionIo {
        config: Arc::clone(&console.state.provision.config),
        one_env: Arc::clone(&console.state.provision.one_env),
        kubeconfig: console.state.provision.kubeconfig.clone(),
        state_dir: console.paths.state_dir.clone(),
        dispatcher: console.dispatcher.clone(),
        app: app.clone(),
    };
    match effect {
        ProvisionEffect::ListSources { cluster, provider } => {
            tokio::spawn(io.list_sources(cluster, provider));
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
        ProvisionEffect::Start {
            cluster: name,
            approved,
            plan,
            acks,
        } => {
            let found = cluster(&console.state, &name);
            // The owner the wizard's guards saw: the runner checks capi_owned with it again.
            let owner = console.state.fleet.capi.owner(&name).cloned();
            tokio::spawn(io.start(found, owner, name, approved, plan, acks));
        }
        ProvisionEffect::Terminate { cluster, approved } => {
            tokio::spawn(io.terminate(cluster, approved));
        }
    }
    None
}

/// What a provisioning task takes from the console: the config, OpenNebula's environment, the
/// kubeconfig, the state dir for journals, and the app channel it reports on.
struct ProvisionIo {
    config: Arc<Config>,
    one_env: Arc<OneEnvironment>,
    kubeconfig: Kubeconfig,
    state_dir: PathBuf,
    /// Audits an approved run that ends before the operation runner (which audits its own).
    dispatcher: Dispatcher,
    app: mpsc::Sender<AppEvent>,
}

/// What an approved plan runs with, once its cluster and provider answered.
struct StartParts {
    provider: Provider,
    checks: JoinChecks,
    /// Said on the progress pane before the first VM (a join check that is skipped).
    warning: Option<String>,
    journal: ProvisionJournal,
    /// What the guards are re-checked with before each VM.
    guards: GuardInputs,
}

impl ProvisionIo {
    /// The provider's templates or services, for the plan form.
    async fn list_sources(self, cluster: String, name: String) {
        let result = match provider(&self.config, &self.one_env, &name) {
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

    /// Runs an approved plan, its progress forwarded, and says how it ended.
    async fn start(
        self,
        found: Result<Cluster, String>,
        capi_owner: Option<CapiOwner>,
        name: String,
        approved: ApprovedAction,
        plan: Box<ProvisionPlan>,
        acks: Vec<String>,
    ) {
        let result = match self
            .start_parts(found, capi_owner, &plan, acks.clone())
            .await
        {
            Ok(parts) => self.run_plan(&name, (&approved, &acks), *plan, parts).await,
            Err(e) => {
                // The runner was not reached: the end is audited here.
                if let Err(audit) = self.dispatcher.finished(&approved, Err(e.clone())) {
                    tracing::warn!("{audit}");
                }
                Err(e)
            }
        };
        let ended = ProvisionUpdate::Ended {
            cluster: name,
            approved: Some(approved),
            result,
        };
        send(&self.app, ended).await;
    }

    async fn start_parts(
        &self,
        found: Result<Cluster, String>,
        capi_owner: Option<CapiOwner>,
        plan: &ProvisionPlan,
        acks: Vec<String>,
    ) -> Result<StartParts, String> {
        let found = found?;
        let provider = provider(&self.config, &self.one_env, &plan.provider)?;
        let (checks, warning) = join_checks(&found, self.kubeconfig.as_ref()).await?;
        let journal =
            ProvisionJournal::open(&self.state_dir, &plan.cluster).map_err(|e| e.to_string())?;
        // The acknowledgements typed in the wizard: the runner checks them before each VM.
        let guards = GuardInputs {
            config: (*self.config).clone(),
            addresses: cluster_addresses(&found),
            nodes: found.nodes().to_vec(),
            acks,
            capi_owner,
        };
        Ok(StartParts {
            provider,
            checks,
            warning,
            journal,
            guards,
        })
    }

    /// `plan` run through the operation runner, its events forwarded until it ends; `Err`
    /// says what failed.
    async fn run_plan(
        &self,
        name: &str,
        (approved, acks): (&ApprovedAction, &[String]),
        plan: ProvisionPlan,
        parts: StartParts,
    ) -> Result<(), String> {
        let role = plan.role.as_str().to_string();
        let provider_name = plan.provider.clone();
        if let Some(w) = parts.warning {
            let note = ProvisionEvent::Note(w);
            send(&self.app, run_update(name, &provider_name, &role, note)).await;
        }
        let (tx, rx) = mpsc::channel(64);
        let options = RunnerOptions {
            poll: POLL,
            ..RunnerOptions::default()
        };
        let journal = Some(parts.journal);
        let runner = ProvisionRunner::new(plan, parts.provider, parts.checks, journal, options, tx)
            .with_guards(parts.guards);
        let forwarding = forward(&self.app, name, &provider_name, &role, rx);
        let run = async {
            let mut provisioning = Provisioning::new(runner);
            let runner = Runner {
                approved,
                dispatcher: &self.dispatcher,
                state_dir: &self.state_dir,
                acks,
                cancel: CancelSignal::never(),
                // The provision's own events carry its lines.
                events: &|_| {},
            };
            let result = crate::operation::run(&mut provisioning, runner).await;
            provisioning.summary(&result).await
            // Dropped here: its sender closes, and the forwarding ends.
        };
        let (summary, ()) = tokio::join!(run, forwarding);
        if summary.succeeded() {
            Ok(())
        } else {
            Err(summary.line())
        }
    }

    /// Terminates the approved VM through the operation runner (which audits how it ended),
    /// noted in the cluster's journal.
    async fn terminate(self, cluster: String, approved: ApprovedAction) {
        let dispatcher = &self.dispatcher;
        let prepared = match approved.action() {
            MutatingAction::TerminateVm {
                provider: name,
                cluster: key,
                vm,
            } => provider(&self.config, &self.one_env, name).map(|provider| {
                let journal = ProvisionJournal::open(&self.state_dir, key).ok();
                VmTermination::new((key.clone(), vm.clone()), provider, journal)
            }),
            _ => Err("not a VM termination".to_string()),
        };
        let result = match prepared {
            Err(e) => {
                // The runner was not reached: the end is audited here.
                if let Err(audit) = dispatcher.finished(&approved, Err(e.clone())) {
                    tracing::warn!("{audit}");
                }
                Err(e)
            }
            Ok(mut termination) => {
                let runner = Runner {
                    approved: &approved,
                    dispatcher,
                    state_dir: &self.state_dir,
                    acks: &[],
                    cancel: CancelSignal::never(),
                    events: &|_| {},
                };
                crate::operation::run(&mut termination, runner)
                    .await
                    .and_then(|_| {
                        termination
                            .progress()
                            .cloned()
                            .ok_or_else(|| "the VM was not terminated".to_string())
                    })
            }
        };
        let update = ProvisionUpdate::Terminated {
            cluster,
            approved,
            result,
        };
        send(&self.app, update).await;
    }
}

fn run_update(cluster: &str, provider: &str, role: &str, event: ProvisionEvent) -> ProvisionUpdate {
    ProvisionUpdate::Run {
        cluster: cluster.to_string(),
        provider: provider.to_string(),
        role: role.to_string(),
        event,
    }
}

/// Forwards a runner's events to the app until the runner is done.
async fn forward(
    app: &mpsc::Sender<AppEvent>,
    cluster: &str,
    provider: &str,
    role: &str,
    mut rx: mpsc::Receiver<ProvisionEvent>,
) {
    while let Some(event) = rx.recv().await {
        send(app, run_update(cluster, provider, role, event)).await;
    }
}

/// The provision journals of the discovered clusters, read once at startup:
/// their VMs are shown, and the unfinished ones followed again (reading
/// only: polling the provider, then the join checks).
pub(super) fn startup(state: &AppState, dir: &Path, app: &mpsc::Sender<AppEvent>) -> Vec<Action> {
    let config = Arc::clone(&state.provision.config);
    let mut actions = Vec::new();
    for c in &state.clusters {
        let key = config_key(&config, c);
        let journal = match ProvisionJournal::open(dir, &key) {
            Ok(j) => j,
            Err(e) => {
                actions.push(Action::Notify(Message::error(e.to_string())));
                continue;
            }
        };
        let entries = journal.entries().to_vec();
        if entries.is_empty() {
            continue;
        }
        let mut groups: BTreeMap<(String, String, String), Vec<VmProgress>> = BTreeMap::new();
        for e in entries.iter().filter(|e| !e.progress.stage.is_final()) {
            groups
                .entry((e.provider.clone(), e.endpoint.clone(), e.role.clone()))
                .or_default()
                .push(e.progress.clone());
        }
        let following = !groups.is_empty();
        for ((provider, endpoint, role), vms) in groups {
            let group = FollowGroup {
                cluster: c.clone(),
                key: key.clone(),
                provider,
                endpoint,
                role,
                vms,
                state_dir: dir.to_path_buf(),
            };
            tokio::spawn(follow_again(
                group,
                Arc::clone(&config),
                Arc::clone(&state.provision.one_env),
                state.provision.kubeconfig.clone(),
                app.clone(),
            ));
        }
        actions.push(Action::Event(AppEvent::Provision(Box::new(
            ProvisionUpdate::Journal {
                cluster: c.name.clone(),
                key,
                entries,
                following,
            },
        ))));
    }
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
    vms: Vec<VmProgress>,
    state_dir: PathBuf,
}

async fn follow_again(
    group: FollowGroup,
    config: Arc<Config>,
    one_env: Arc<OneEnvironment>,
    kubeconfig: Kubeconfig,
    app: mpsc::Sender<AppEvent>,
) {
    let name = group.cluster.name.clone();
    let parts = async {
        let provider = provider(&config, &one_env, &group.provider)?;
        if !group.endpoint.is_empty() && provider.endpoint != group.endpoint {
            return Err(format!(
                "provider {} is now {}, but the journal's VMs are on {}; their ids mean other VMs there",
                provider.name, provider.endpoint, group.endpoint
            ));
        }
        let (checks, _) = join_checks(&group.cluster, kubeconfig.as_ref()).await?;
        let journal =
            ProvisionJournal::open(&group.state_dir, &group.key).map_err(|e| e.to_string())?;
        Ok::<_, String>((provider, checks, journal))
    }
    .await;
    let (provider, checks, journal) = match parts {
        Ok(parts) => parts,
        Err(e) => {
            let ended = ProvisionUpdate::Ended {
                cluster: name,
                approved: None,
                result: Err(format!("cannot follow the journal's VMs again: {e}")),
            };
            send(&app, ended).await;
            return;
        }
    };
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
    let (tx, rx) = mpsc::channel(64);
    let options = RunnerOptions {
        poll: POLL,
        ..RunnerOptions::default()
    };
    let runner = ProvisionRunner::new(plan, provider, checks, Some(journal), options, tx);
    let vms = group.vms;
    let run = tokio::spawn(async move { runner.follow_again(vms).await });
    forward(&app, &name, &group.provider, &group.role, rx).await;
    let result = match run.await {
        Ok(summary) if summary.succeeded() => Ok(()),
        Ok(summary) => Err(summary.line()),
        Err(e) => Err(format!("following the journal's VMs ended abnormally: {e}")),
    };
    let ended = ProvisionUpdate::Ended {
        cluster: name,
        approved: None,
        result,
    };
    send(&app, ended).await;
}
