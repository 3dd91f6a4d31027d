//! The console's one runner of an approved operation (a node or etcd action, a CAPI doctor's
//! fix, a cluster's create or delete, a CAPI scale, a Talos, Kubernetes or CAPI-way upgrade
//! started or resumed from its journal, a provision or a failed VM's terminate, a machine
//! configuration patch): each kind
//! says only how it opens its operation from the approved request; the run in its own task,
//! the operation runner's approval, journal, cancel and audit, its events told to the app as
//! progress events (`operation::runner_events` maps each runner's own) and how it ended are
//! written once.
use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::run::Console;
use super::run_create::FingerprintAnswer;
use crate::app::action::AppEvent;
use crate::app::actions::{ActionRun, CapiFixRun, SNAPSHOT_BOUND};
use crate::app::plan_screen::PlannedRollout;
use crate::app::state::AppState;
use crate::approval::{ApprovedAction, Dispatcher, MutatingAction};
use crate::capi_scale::ScaleOptions;
use crate::cluster_config::ContextFiles;
use crate::cluster_lifecycle::{
    CreateOptions, CreatePlan, FingerprintPolicy, FingerprintQuestion, ProviderDelete, RunSummary,
    create_runner, provider_named,
};
use crate::etcd_maintenance::{SNAPSHOT_MAX_BYTES, SnapshotLimits};
use crate::node_actions::NodeActionOptions;
use crate::operation::capi_fix::CapiFix;
use crate::operation::capi_upgrade::{CapiUpgrade, CapiUpgradeOptions, interrupted_run};
use crate::operation::config_patch::ConfigPatchRollout;
use crate::operation::create::ClusterCreate;
use crate::operation::delete::ClusterDelete;
use crate::operation::etcd::EtcdOperation;
use crate::operation::forget::NodeForget;
use crate::operation::node::NodeAction;
use crate::operation::progress::ProgressEvent;
use crate::operation::provision::Provisioning;
use crate::operation::runner_events::ProvisionSteps;
use crate::operation::scale::CapiScale;
use crate::operation::terminate::VmTermination;
use crate::operation::upgrade::{UpgradeRun, resume_upgrade_with, spawn_upgrade};
use crate::operation::{
    CancelSignal, Events, Operation, OperationEvent, OperationKind, Runner, runner_events,
};
use crate::provision::cluster::{GuardInputs, cluster_addresses, config_key, join_checks};
use crate::provision::{Provider, ProvisionJournal, ProvisionPlan, ProvisionRunner, RunnerOptions};
use crate::rollout::{RolloutEvent, RolloutHandle, RolloutJournal, RolloutKind};
use crate::upgrade::kubernetes::Kubernetes;
use crate::upgrade::launch::connect;
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::{RunOptions, TalosOs, UpgradeKind};

/// Where a runner's progress events go: to the app, in the order told.
type Progress = mpsc::UnboundedSender<ProgressEvent>;

fn tell(progress: &Progress, events: Vec<ProgressEvent>) {
    for event in events {
        let _ = progress.send(event);
    }
}

/// A channel for a runner's own events, each told to `progress` as `map` maps it until the
/// runner drops its sender; the task ends then.
fn teller<E: Send + 'static>(
    progress: Progress,
    mut map: impl FnMut(E) -> Vec<ProgressEvent> + Send + 'static,
) -> (mpsc::Sender<E>, tokio::task::JoinHandle<()>) {
    let (events, mut rx) = mpsc::channel(64);
    let task = tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            tell(&progress, map(event));
        }
    });
    (events, task)
}

/// How long the console follows a CAPI fix until its finding clears, and how often it reads.
const CAPI_FOLLOW: (Duration, Duration) = (Duration::from_secs(1800), Duration::from_secs(5));
/// `taloscope delete`'s defaults: how often the run looks at the VMs, and how long they may
/// take to be gone.
const DELETE_BOUNDS: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(600));
/// `taloscope scale`'s defaults: a poll every 2 s, 20 minutes in all, a 60 s Lease.
const SCALE_OPTIONS: ScaleOptions = ScaleOptions {
    poll: Duration::from_secs(2),
    timeout: Duration::from_secs(1200),
    lease_duration: Duration::from_secs(60),
};
/// How often a provision's runner looks at its VMs.
const PROVISION_POLL: Duration = Duration::from_secs(1);
const NO_KUBECONFIG: &str = "no kubeconfig was read: the management cluster cannot be reached";

/// The discovered cluster `name` and how to reach it, as the rollouts do: its talosconfig
/// context, its kube context through the operator's kubeconfig.
pub(super) fn connection(
    state: &AppState,
    name: &str,
) -> (Option<crate::discovery::Cluster>, RunOptions) {
    let cluster = state.clusters.iter().find(|c| c.name == name).cloned();
    let options = RunOptions {
        kubeconfig: state.provision.kubeconfig.clone(),
        ..RunOptions::default()
    };
    (cluster, options)
}

/// Connects to `name`'s cluster.
pub(super) async fn observer(
    cluster: Option<crate::discovery::Cluster>,
    options: RunOptions,
    name: &str,
) -> Result<ClusterObserver, String> {
    let cluster =
        cluster.ok_or_else(|| format!("cluster {name} is no longer in the talosconfig"))?;
    connect(&cluster, &options).await
}

/// How a run ended (`Ok`: what its runner said), or why its operation could not be opened
/// (`Err`: audited by [`run`], as the operation runner audits every run it carries out).
type Ended = Result<Result<String, String>, String>;

/// A kind's run, opened from the approved request, to be carried out in the run's task.
type Carried = Pin<Box<dyn Future<Output = Ended> + Send>>;

/// What every run hands the operation runner (the approval, the audit, the journal's place,
/// the acknowledgements typed on the plan screen) and where its progress goes.
#[derive(Clone)]
struct Approved {
    approved: ApprovedAction,
    dispatcher: Dispatcher,
    state_dir: PathBuf,
    acks: Vec<String>,
    progress: Progress,
}

impl Approved {
    fn runner<'a>(&'a self, cancel: CancelSignal, events: Events<'a>) -> Runner<'a> {
        Runner {
            approved: &self.approved,
            dispatcher: &self.dispatcher,
            state_dir: &self.state_dir,
            acks: &self.acks,
            cancel,
            events,
        }
    }

    /// `operation` through the one runner, stopped between steps by `cancel`, its events told
    /// as progress events (about `node`).
    async fn carry<O: Operation>(
        &self,
        operation: &mut O,
        cancel: CancelSignal,
        node: Option<&str>,
    ) -> Result<String, String> {
        let told =
            |event: OperationEvent| tell(&self.progress, runner_events::operation(&event, node));
        crate::operation::run(operation, self.runner(cancel, &told)).await
    }

    /// `carry` for a rollout whose lines name their step's node: each its row's phase.
    async fn carry_phases<O: Operation>(
        &self,
        operation: &mut O,
        cancel: CancelSignal,
    ) -> Result<String, String> {
        let told = |event: OperationEvent| tell(&self.progress, runner_events::node_phases(&event));
        crate::operation::run(operation, self.runner(cancel, &told)).await
    }

    /// `operation` through the one runner to its end; its own typed events carry its lines.
    async fn carry_quietly<O: Operation>(&self, operation: &mut O) -> Result<String, String> {
        crate::operation::run(operation, self.runner(CancelSignal::never(), &|_| {})).await
    }
}

/// Runs an approved operation in its own task through the operation runner: its progress
/// comes back as `AppEvent::Progress`, its end as `ProgressEvent::Finished` once the runner
/// recorded it in the journal and the audit log (or, when it could not open its operation,
/// once that is audited here).
pub(super) fn run(
    console: &mut Console,
    approved: ApprovedAction,
    (run, acks): (ActionRun, Vec<String>),
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let kind = OperationKind::of(approved.action());
    let audit = (approved.clone(), console.dispatcher.clone());
    let (progress, mut rx) = mpsc::unbounded_channel::<ProgressEvent>();
    let on = Approved {
        approved,
        dispatcher: console.dispatcher.clone(),
        state_dir: console.paths.state_dir.clone(),
        acks,
        progress,
    };
    let carried = open(console, on, run);
    let app = app_tx.clone();
    tokio::spawn(async move {
        let forward = app.clone();
        let forwarder = tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                if forward.send(AppEvent::Progress(kind, event)).await.is_err() {
                    break;
                }
            }
        });
        // The run's future, done, has dropped every sender of its progress.
        let result = match carried.await {
            Ok(ran) => ran,
            Err(why) => {
                let (approved, dispatcher) = audit;
                if let Err(e) = dispatcher.finished(&approved, Err(why.clone())) {
                    tracing::warn!("{e}");
                }
                Err(why)
            }
        };
        let _ = forwarder.await;
        let end = ProgressEvent::Finished(result);
        let _ = app.send(AppEvent::Progress(kind, end)).await;
    });
}

/// Each kind's operation opened from the approved request, with what it takes from the
/// console before its task starts (the upgrade's control, an action's cancel, a create's
/// fingerprint answers).
fn open(console: &mut Console, on: Approved, run: ActionRun) -> Carried {
    console.rollout_control = None;
    let state = &console.state;
    match run {
        ActionRun::Upgrade(_) | ActionRun::ResumeUpgrade => {
            let started = start_upgrade(state, &on, run).map(|(handle, events)| {
                console.rollout_control = Some(handle.control);
                (handle.task, events)
            });
            Box::pin(async move {
                let (task, mut events) = started?;
                // Its end is told once, by `run`, from how the task ended.
                let forward = async {
                    while let Some(event) = events.recv().await {
                        if !matches!(event, RolloutEvent::Finished { .. }) {
                            tell(&on.progress, runner_events::rollout(&event));
                        }
                    }
                };
                let (ended, ()) = tokio::join!(task, forward);
                let outcome = ended.map_err(|e| format!("the run ended abnormally: {e}"));
                Ok(outcome.and_then(|outcome| runner_events::rollout_end(&outcome)))
            })
        }
        ActionRun::Node(plan) => {
            let (cluster, _, cancel) = connecting(console, &on);
            Box::pin(async move {
                let node = plan.node.clone();
                let mut action =
                    NodeAction::new(plan, cluster.await?, NodeActionOptions::console());
                Ok(on.carry(&mut action, cancel, Some(&node)).await)
            })
        }
        ActionRun::Etcd(plan) => {
            let (cluster, _, cancel) = connecting(console, &on);
            Box::pin(async move {
                let limits = SnapshotLimits {
                    bound: SNAPSHOT_BOUND,
                    max_bytes: SNAPSHOT_MAX_BYTES,
                };
                let mut etcd = EtcdOperation::new(plan, cluster.await?, limits);
                Ok(on.carry(&mut etcd, cancel, None).await)
            })
        }
        ActionRun::ConfigPatch(plan) => {
            let owner = state.fleet.capi.owner(&plan.cluster).cloned();
            let (cluster, _, cancel) = connecting(console, &on);
            Box::pin(async move {
                let options = NodeActionOptions::console();
                let mut patch = ConfigPatchRollout::new(*plan, cluster.await?, options, owner);
                Ok(on.carry_phases(&mut patch, cancel).await)
            })
        }
        ActionRun::Forget(plan) => {
            let (cluster, _, cancel) = connecting(console, &on);
            Box::pin(async move {
                let mut forget = NodeForget::new(*plan, cluster.await?);
                Ok(on.carry(&mut forget, cancel, None).await)
            })
        }
        ActionRun::CapiFix(fix) => {
            let (cluster, kubeconfig, cancel) = connecting(console, &on);
            Box::pin(async move {
                let observer = cluster.await?;
                capi_fix(&on, *fix, observer, kubeconfig, cancel).await
            })
        }
        ActionRun::CapiUpgrade(plan) => {
            let (cluster, kubeconfig, cancel) = connecting(console, &on);
            Box::pin(async move {
                let observer = cluster.await?;
                let kubeconfig = kubeconfig.ok_or_else(|| NO_KUBECONFIG.to_string())?;
                // A killed run of this same upgrade is resumed: its Lease taken over.
                let options = CapiUpgradeOptions {
                    displaces: interrupted_run(&on.state_dir, &plan).map(|r| r.holder),
                    ..CapiUpgradeOptions::default()
                };
                let connected = CapiUpgrade::connect(*plan, &kubeconfig, observer.kube, options);
                let mut upgrade = connected.await?;
                Ok(on.carry(&mut upgrade, cancel, None).await)
            })
        }
        ActionRun::Delete(plan) => {
            let files = state.actions.context_files.clone().ok_or_else(|| {
                "no talosconfig and kubeconfig file to remove the contexts from".to_string()
            });
            let (config, one_env) = (&state.provision.config, &state.provision.one_env);
            let steps =
                files.and_then(|files| ProviderDelete::for_plan(&plan, config, one_env, files));
            Box::pin(async move {
                let cluster = plan.cluster.clone();
                let mut delete = ClusterDelete::new(plan, steps?, DELETE_BOUNDS);
                let deleted = on.carry(&mut delete, CancelSignal::never(), None).await;
                Ok(deleted.map(|_| {
                    format!("cluster {cluster} deleted: no VM, context or journal of it left")
                }))
            })
        }
        ActionRun::Create(plan) => {
            let opened = provider(state, &plan.provider)
                .and_then(|provider| Ok((provider, console.creates.files.clone()?)));
            let (tx, answers) = mpsc::channel(8);
            console.creates.answers.insert(plan.cluster.clone(), tx);
            let options = console.creates.options;
            Box::pin(create(on, *plan, opened, options, answers))
        }
        ActionRun::CapiScale(scale) => {
            let sources = super::read_plans::connect(console, &scale.plan.cluster);
            Box::pin(async move {
                let sources = sources?.await?;
                let (events, teller) = teller(on.progress.clone(), runner_events::scale);
                let started = std::time::Instant::now();
                let mut operation = CapiScale::new(scale.plan, sources, SCALE_OPTIONS, events);
                // The acknowledgements typed on the scale's own plan.
                let on = Approved {
                    acks: scale.acks,
                    ..on
                };
                let result = on.carry_quietly(&mut operation).await;
                let outcome = operation.outcome(result, started.elapsed().as_secs());
                drop(operation);
                let _ = teller.await;
                let told = format!(
                    "{} ({} polls, {} s)",
                    outcome.message, outcome.polls, outcome.seconds
                );
                Ok(outcome.succeeded.then_some(told.clone()).ok_or(told))
            })
        }
        ActionRun::Provision(plan) => {
            let opened = provision_inputs(state, &plan, on.acks.clone());
            let kubeconfig = state.provision.kubeconfig.clone();
            Box::pin(provision(on, *plan, opened, kubeconfig))
        }
        ActionRun::TerminateVm => {
            let opened = match on.approved.action() {
                MutatingAction::TerminateVm {
                    provider: name,
                    cluster,
                    vm,
                } => provider(state, name).map(|p| (p, cluster.clone(), vm.clone())),
                _ => Err("not a VM's terminate".to_string()),
            };
            Box::pin(async move {
                let (provider, cluster, vm) = opened?;
                let journal = ProvisionJournal::open(&on.state_dir, &cluster).ok();
                let mut termination = VmTermination::new((cluster, vm), provider, journal);
                let terminated = on.carry_quietly(&mut termination).await;
                Ok(terminated.and_then(|_| {
                    let vm = termination.progress();
                    vm.map(|vm| format!("{} terminated", vm.name))
                        .ok_or_else(|| "the VM was not terminated".to_string())
                }))
            })
        }
    }
}

/// The approved action's cluster being connected to, the kubeconfig it was read with, and the
/// cancel the console keeps for the run (`c` on the progress).
fn connecting(
    console: &mut Console,
    on: &Approved,
) -> (
    impl Future<Output = Result<ClusterObserver, String>> + Send + 'static,
    Option<kube::config::Kubeconfig>,
    CancelSignal,
) {
    let name = on.approved.action().cluster().to_string();
    let (cluster, options) = connection(&console.state, &name);
    let kubeconfig = options.kubeconfig.clone();
    let (cancel_tx, cancel) = CancelSignal::new();
    console.action_cancel = Some(cancel_tx);
    let observer = async move { observer(cluster, options, &name).await };
    (observer, kubeconfig, cancel)
}

/// The provider named `name` in the operator's config.
fn provider(state: &AppState, name: &str) -> Result<Provider, String> {
    provider_named(&state.provision.config, &state.provision.one_env, name)
        .map(|(provider, _)| provider)
        .map_err(|e| e.to_string())
}

/// `capi doctor --fix`'s operation, then the cluster followed until the finding clears, their
/// lines told as progress.
async fn capi_fix(
    on: &Approved,
    fix: CapiFixRun,
    observer: ClusterObserver,
    kubeconfig: Option<kube::config::Kubeconfig>,
    cancel: CancelSignal,
) -> Ended {
    let kubeconfig = kubeconfig.ok_or_else(|| NO_KUBECONFIG.to_string())?;
    let management =
        crate::kube::KubeClient::new(&kubeconfig, &fix.owner.management, Default::default())
            .await
            .map_err(|e| crate::error_chain(&e))?;
    let mut operation = CapiFix::new(
        fix.plan,
        observer.clone(),
        (management.clone(), fix.owner.clone()),
        CAPI_FOLLOW,
    );
    if let Err(e) = on.carry(&mut operation, cancel, None).await {
        return Ok(Err(e));
    }
    let say = |line: String| tell(&on.progress, vec![ProgressEvent::Line(line)]);
    let (finding, owner) = (&fix.finding, &fix.owner);
    let followed =
        crate::capi_doctor::follow(finding, &management, owner, &observer, CAPI_FOLLOW, say);
    Ok(followed.await)
}

/// What a provision's runner needs from the console: the cluster the VMs join (the wizard shows
/// it by name; the plan and approval by its config key), the provider, and the guards' inputs
/// (the acknowledgements typed in the wizard and the Cluster API owner as its guards saw it:
/// the runner checks `capi_owned` with it again before each VM).
fn provision_inputs(
    state: &AppState,
    plan: &ProvisionPlan,
    acks: Vec<String>,
) -> Result<(crate::discovery::Cluster, Provider, GuardInputs), String> {
    let config = &state.provision.config;
    let cluster = state
        .clusters
        .iter()
        .find(|c| config_key(config, c) == plan.cluster);
    let cluster = cluster
        .cloned()
        .ok_or_else(|| format!("cluster {} is no longer discovered", plan.cluster))?;
    let guards = GuardInputs {
        config: (**config).clone(),
        addresses: cluster_addresses(&cluster),
        nodes: cluster.nodes().to_vec(),
        acks,
        capi_owner: state.fleet.capi.owner(&cluster.name).cloned(),
    };
    Ok((cluster, provider(state, &plan.provider)?, guards))
}

/// `provision`'s operation over the approved plan, the cluster's join checks and journal, each
/// VM told as a step of the run until it joined.
async fn provision(
    on: Approved,
    plan: ProvisionPlan,
    opened: Result<(crate::discovery::Cluster, Provider, GuardInputs), String>,
    kubeconfig: Option<kube::config::Kubeconfig>,
) -> Ended {
    let (cluster, provider, guards) = opened?;
    let (checks, warning) = join_checks(&cluster, kubeconfig.as_ref()).await?;
    let journal =
        ProvisionJournal::open(&on.state_dir, &plan.cluster).map_err(|e| e.to_string())?;
    if let Some(warning) = warning {
        tell(&on.progress, vec![ProgressEvent::Line(warning)]);
    }
    let mut vms = ProvisionSteps::new(&plan.cluster, &plan.provider, plan.vm_names.clone());
    let (events, teller) = teller(on.progress.clone(), move |event| vms.events(&event));
    let options = RunnerOptions {
        poll: PROVISION_POLL,
        ..RunnerOptions::default()
    };
    let runner = ProvisionRunner::new(plan, provider, checks, Some(journal), options, events)
        .with_guards(guards);
    let mut provisioning = Provisioning::new(runner);
    let result = on.carry_quietly(&mut provisioning).await;
    let summary = provisioning.summary(&result).await;
    drop(provisioning);
    let _ = teller.await;
    let line = summary.line();
    Ok(summary.succeeded().then_some(line.clone()).ok_or(line))
}

/// The create command's operation over the plan, its events and fingerprint questions told,
/// the operator's answers passed back, until it ends.
async fn create(
    on: Approved,
    plan: CreatePlan,
    opened: Result<(Provider, ContextFiles), String>,
    options: CreateOptions,
    mut answers: mpsc::Receiver<FingerprintAnswer>,
) -> Ended {
    let cluster = plan.cluster.clone();
    let (provider, files) = opened?;
    let (events_tx, mut events) = mpsc::channel(64);
    let (questions_tx, mut questions) = mpsc::channel(8);
    let asking = FingerprintPolicy::Ask(questions_tx);
    let runner = create_runner(
        &on.state_dir,
        plan,
        provider,
        files,
        options,
        asking,
        events_tx,
    );
    let runner = runner.map_err(|e| e.to_string())?;
    let for_task = on.clone();
    let mut task = tokio::spawn(async move {
        let mut create = ClusterCreate::new(runner);
        let result = for_task.carry_quietly(&mut create).await;
        create.summary(&result).await
    });
    let mut waiting: HashMap<u64, oneshot::Sender<bool>> = HashMap::new();
    let mut asked = 0u64;
    let ended: Result<RunSummary, String> = loop {
        tokio::select! {
            Some(event) = events.recv() => tell(&on.progress, runner_events::lifecycle(&event)),
            Some(q) = questions.recv() => {
                asked += 1;
                let FingerprintQuestion { vm, address, fingerprint, answer } = q;
                waiting.insert(asked, answer);
                let question = runner_events::fingerprint_question(asked, &vm, &address, &fingerprint);
                tell(&on.progress, vec![question]);
            }
            Some((id, trust)) = answers.recv() => {
                if let Some(answer) = waiting.remove(&id) {
                    let _ = answer.send(trust);
                }
            }
            ended = &mut task => {
                break ended.map_err(|e| format!("the run ended abnormally: {e}"));
            }
        }
    };
    while let Ok(event) = events.try_recv() {
        tell(&on.progress, runner_events::lifecycle(&event));
    }
    let ended = ended.and_then(|summary| summary.error.map_or(Ok(()), Err));
    Ok(runner_events::create_end(&cluster, ended))
}

/// Starts the upgrade runner of an approved plan, or resumes the journal of its cluster a run
/// that did not end left (`operation::upgrade`, as `taloscope upgrade` does): its handle
/// (pause, resume, abort; its task) and its events.
fn start_upgrade(
    state: &AppState,
    on: &Approved,
    run: ActionRun,
) -> Result<(RolloutHandle, mpsc::UnboundedReceiver<RolloutEvent>), String> {
    let name = on.approved.action().cluster().to_string();
    let cluster = connection(state, &name)
        .0
        .ok_or_else(|| format!("cluster {name} is no longer in the talosconfig"))?;
    let (events, rx) = mpsc::unbounded_channel();
    let dir = on.state_dir.clone();
    let (approved, dispatcher) = (on.approved.clone(), on.dispatcher.clone());
    let handle = match run {
        ActionRun::Upgrade(planned) => {
            let options = RunOptions {
                state_dir: Some(dir),
                ..RunOptions::default()
            };
            let with = (approved, dispatcher, on.acks.clone(), cluster, options);
            match *planned {
                PlannedRollout::Talos(plan) => fresh::<TalosOs>(plan, with, events),
                PlannedRollout::Kubernetes(plan) => fresh::<Kubernetes>(plan, with, events),
            }
        }
        _ => {
            let journal = RolloutJournal::load_unfinished(&dir, &name)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| {
                    format!(
                        "no unfinished rollout journal of {name} under {}",
                        dir.display()
                    )
                })?;
            let options = RunOptions {
                state_dir: Some(dir),
                ..RunOptions::from_journal(&journal.options)
            };
            let resume = match journal.kind {
                RolloutKind::TalosUpgrade => resume_upgrade_with::<TalosOs>,
                RolloutKind::KubernetesUpgrade => resume_upgrade_with::<Kubernetes>,
            };
            resume(journal, approved, dispatcher, cluster, options, events)
        }
    };
    Ok((handle, rx))
}

/// A new upgrade of kind `K` of `plan`, approved, with its acknowledgements, cluster and options.
fn fresh<K: UpgradeKind>(
    plan: K::Plan,
    (approved, dispatcher, acks, cluster, options): UpgradeWith,
    events: mpsc::UnboundedSender<RolloutEvent>,
) -> RolloutHandle {
    let run = UpgradeRun::<K> {
        approved,
        dispatcher,
        plan,
        acks,
        cluster,
        options,
    };
    spawn_upgrade(run, events)
}

/// What a new upgrade starts with besides its plan.
type UpgradeWith = (
    ApprovedAction,
    Dispatcher,
    Vec<String>,
    crate::discovery::Cluster,
    RunOptions,
);
