//! The console's one runner of an approved operation (a node or etcd action, a CAPI doctor's
//! fix, a cluster's create or delete, a CAPI scale, a Talos, Kubernetes or CAPI-way upgrade
//! started or resumed from its journal, a provision or a failed VM's terminate): it runs the
//! runner the headless command
//! runs in its own task, tells the app its events as progress events of its kind
//! (`operation::runner_events` maps each runner's own), then how it ended, after the
//! dispatcher audited it.
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::run::Console;
use super::run_create::FingerprintAnswer;
use crate::app::action::AppEvent;
use crate::app::actions::{ActionRun, CapiFixRun, SNAPSHOT_BOUND};
use crate::app::capi_scale::CapiScaleRun;
use crate::app::plan_screen::PlannedRollout;
use crate::app::state::AppState;
use crate::approval::{ApprovedAction, Dispatcher, MutatingAction};
use crate::capi_scale::ScaleOptions;
use crate::cluster_config::ContextFiles;
use crate::cluster_lifecycle::{
    CreateOptions, CreatePlan, DeletePlan, FingerprintPolicy, FingerprintQuestion, ProviderDelete,
    RunSummary, create_runner, provider_named,
};
use crate::config::Config;
use crate::etcd_maintenance::{SNAPSHOT_MAX_BYTES, SnapshotLimits};
use crate::node_actions::NodeActionOptions;
use crate::opennebula::auth::OneEnvironment;
use crate::operation::capi_fix::CapiFix;
use crate::operation::capi_upgrade::{CapiUpgrade, CapiUpgradeOptions, interrupted_run};
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
    CancelSignal, Events, OperationEvent, OperationKind, Runner, runner_events,
};
use crate::provision::cluster::{GuardInputs, cluster_addresses, config_key, join_checks};
use crate::provision::{Provider, ProvisionJournal, ProvisionPlan, ProvisionRunner, RunnerOptions};
use crate::rollout::{RolloutControl, RolloutEvent, RolloutJournal, RolloutKind, RolloutOutcome};
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
const SCALE_OPTIONS: (Duration, Duration, Duration) = (
    Duration::from_secs(2),
    Duration::from_secs(1200),
    Duration::from_secs(60),
);

/// How often a provision's runner looks at its VMs.
const PROVISION_POLL: Duration = Duration::from_secs(1);

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

/// A node or etcd action, a CAPI fix or a CAPI-way upgrade: on a connection to the cluster,
/// stopped between steps by `cancel` (the operation runner keeps its action journal).
struct OnCluster {
    run: ActionRun,
    cluster: Option<crate::discovery::Cluster>,
    options: RunOptions,
    cancel: CancelSignal,
}

/// A cluster's delete: its plan and the provider's steps.
struct DeleteRun {
    plan: DeletePlan,
    steps: Result<ProviderDelete, String>,
}

/// A CAPI scale: its plan and acknowledgements, both sides being connected to, its timing.
struct ScaleRun {
    run: CapiScaleRun,
    sources: Result<super::read_plans::Connecting, String>,
    options: ScaleOptions,
}

/// A new cluster: its plan, what its runner needs, and where the operator's answers to its
/// fingerprint questions arrive.
struct CreateRun {
    plan: CreatePlan,
    config: Arc<Config>,
    one_env: Arc<OneEnvironment>,
    files: Result<ContextFiles, String>,
    options: CreateOptions,
    answers: mpsc::Receiver<FingerprintAnswer>,
}

/// New VMs: the plan, the cluster they join, its Cluster API owner as the wizard's guards saw
/// it (the runner checks `capi_owned` with it again before each VM), the provider's settings.
struct ProvisionRun {
    plan: ProvisionPlan,
    cluster: Option<crate::discovery::Cluster>,
    capi_owner: Option<crate::capi::CapiOwner>,
    providers: Providers,
}

/// What a provision or a terminate reaches its provider and the cluster's API with.
struct Providers {
    config: Arc<Config>,
    one_env: Arc<OneEnvironment>,
    kubeconfig: Option<kube::config::Kubeconfig>,
}

impl Providers {
    fn of(state: &AppState) -> Providers {
        Providers {
            config: Arc::clone(&state.provision.config),
            one_env: Arc::clone(&state.provision.one_env),
            kubeconfig: state.provision.kubeconfig.clone(),
        }
    }

    fn named(&self, name: &str) -> Result<Provider, String> {
        provider_named(&self.config, &self.one_env, name)
            .map(|(provider, _)| provider)
            .map_err(|e| e.to_string())
    }
}

/// An in-place upgrade's runner, started (it takes the rollout Lease and keeps its journal),
/// and its events; or why it could not start.
struct RolloutRun {
    task: tokio::task::JoinHandle<RolloutOutcome>,
    events: mpsc::UnboundedReceiver<RolloutEvent>,
}

/// What a run takes from the console before its task starts.
enum Prepared {
    Upgrade(Result<RolloutRun, String>),
    OnCluster(Box<OnCluster>),
    Delete(Box<DeleteRun>),
    Scale(Box<ScaleRun>),
    Create(Box<CreateRun>),
    Provision(Box<ProvisionRun>),
    TerminateVm(Box<Providers>),
}

/// What every run hands the operation runner: the approval, the audit, the journal's place,
/// the acknowledgements typed on the plan screen.
#[derive(Clone)]
struct Approved {
    approved: ApprovedAction,
    dispatcher: Dispatcher,
    state_dir: PathBuf,
    acks: Vec<String>,
}

impl Approved {
    /// The runner of one operation, its events told to `events`.
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

    /// A run that ends before the operation runner (which audits its own): audited here.
    fn not_started(&self, why: String) -> Result<String, String> {
        if let Err(e) = self.dispatcher.finished(&self.approved, Err(why.clone())) {
            tracing::warn!("{e}");
        }
        Err(why)
    }
}

/// Runs an approved operation in its own task through the operation runner: its progress
/// comes back as `AppEvent::Progress`, its end as `ProgressEvent::Finished` once the runner
/// recorded it in the journal and the audit log.
pub(super) fn run(
    console: &mut Console,
    approved: ApprovedAction,
    (run, acks): (ActionRun, Vec<String>),
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let kind = OperationKind::of(approved.action());
    let prepared = prepare(console, &approved, run, &acks);
    let approved = Approved {
        approved,
        dispatcher: console.dispatcher.clone(),
        state_dir: console.paths.state_dir.clone(),
        acks,
    };
    let app = app_tx.clone();
    tokio::spawn(async move {
        let (progress, mut rx) = mpsc::unbounded_channel::<ProgressEvent>();
        let forward = app.clone();
        let forwarder = tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                if forward.send(AppEvent::Progress(kind, event)).await.is_err() {
                    break;
                }
            }
        });
        let result = carry_out(prepared, &approved, progress).await;
        let _ = forwarder.await;
        let end = ProgressEvent::Finished(result);
        let _ = app.send(AppEvent::Progress(kind, end)).await;
    });
}

/// What each kind needs from the console, taken before the task starts.
fn prepare(
    console: &mut Console,
    approved: &ApprovedAction,
    run: ActionRun,
    acks: &[String],
) -> Prepared {
    console.rollout_control = None;
    match run {
        ActionRun::Upgrade(_) | ActionRun::ResumeUpgrade => {
            let started = start_upgrade(console, approved, run, acks.to_vec());
            Prepared::Upgrade(started.map(|(control, run)| {
                console.rollout_control = Some(control);
                run
            }))
        }
        ActionRun::Delete(plan) => {
            let state = &console.state;
            let steps = state
                .actions
                .context_files
                .clone()
                .ok_or_else(|| {
                    "no talosconfig and kubeconfig file to remove the contexts from".to_string()
                })
                .and_then(|files| {
                    ProviderDelete::for_plan(
                        &plan,
                        &state.provision.config,
                        &state.provision.one_env,
                        files,
                    )
                });
            Prepared::Delete(Box::new(DeleteRun { plan, steps }))
        }
        ActionRun::Create(plan) => {
            let (tx, answers) = mpsc::channel(8);
            console.creates.answers.insert(plan.cluster.clone(), tx);
            Prepared::Create(Box::new(CreateRun {
                plan: *plan,
                config: Arc::clone(&console.state.provision.config),
                one_env: Arc::clone(&console.state.provision.one_env),
                files: console.creates.files.clone(),
                options: console.creates.options,
                answers,
            }))
        }
        ActionRun::CapiScale(run) => {
            let (poll, timeout, lease_duration) = SCALE_OPTIONS;
            let options = ScaleOptions {
                poll,
                timeout,
                lease_duration,
            };
            let sources = super::read_plans::connect(console, &run.plan.cluster);
            Prepared::Scale(Box::new(ScaleRun {
                run: *run,
                sources,
                options,
            }))
        }
        ActionRun::Provision(plan) => {
            // The wizard shows the cluster by name; the plan and approval by its config key.
            let state = &console.state;
            let cluster = state
                .clusters
                .iter()
                .find(|c| config_key(&state.provision.config, c) == plan.cluster)
                .cloned();
            let capi_owner = cluster
                .as_ref()
                .and_then(|c| state.fleet.capi.owner(&c.name).cloned());
            Prepared::Provision(Box::new(ProvisionRun {
                plan: *plan,
                cluster,
                capi_owner,
                providers: Providers::of(state),
            }))
        }
        ActionRun::TerminateVm => Prepared::TerminateVm(Box::new(Providers::of(&console.state))),
        run => {
            let name = approved.action().cluster().to_string();
            let (cluster, options) = connection(&console.state, &name);
            let (cancel_tx, cancel) = CancelSignal::new();
            console.action_cancel = Some(cancel_tx);
            Prepared::OnCluster(Box::new(OnCluster {
                run,
                cluster,
                options,
                cancel,
            }))
        }
    }
}

/// Each kind's operation through the runner, its events told to `progress` (dropped when done,
/// so that every event reaches the app before the end).
async fn carry_out(
    prepared: Prepared,
    approved: &Approved,
    progress: Progress,
) -> Result<String, String> {
    match prepared {
        Prepared::Upgrade(Err(e)) => approved.not_started(e),
        Prepared::Upgrade(Ok(RolloutRun { task, mut events })) => {
            // Its end is told once, by the caller, from how the task ended.
            let forward = async {
                while let Some(event) = events.recv().await {
                    if !matches!(event, RolloutEvent::Finished { .. }) {
                        tell(&progress, runner_events::rollout(&event));
                    }
                }
            };
            let (ended, ()) = tokio::join!(task, forward);
            let outcome = ended.map_err(|e| format!("the run ended abnormally: {e}"))?;
            runner_events::rollout_end(&outcome)
        }
        Prepared::OnCluster(on) => {
            let OnCluster {
                run,
                cluster,
                options,
                cancel,
            } = *on;
            let name = approved.approved.action().cluster().to_string();
            let kubeconfig = options.kubeconfig.clone();
            match observer(cluster, options, &name).await {
                Ok(observer) => {
                    run_on(observer, run, kubeconfig, (approved, cancel), progress).await
                }
                Err(e) => approved.not_started(e),
            }
        }
        Prepared::Delete(delete) => {
            let DeleteRun { plan, steps } = *delete;
            let world = match steps {
                Ok(world) => world,
                Err(e) => return approved.not_started(e),
            };
            let cluster = plan.cluster.clone();
            let told =
                |event: OperationEvent| tell(&progress, runner_events::operation(&event, None));
            let mut delete = ClusterDelete::new(plan, world, DELETE_BOUNDS);
            let runner = approved.runner(CancelSignal::never(), &told);
            crate::operation::run(&mut delete, runner)
                .await
                .map(|_| format!("cluster {cluster} deleted: no VM, context or journal of it left"))
        }
        Prepared::Create(create) => {
            let cluster = create.plan.cluster.clone();
            runner_events::create_end(&cluster, run_create(*create, approved, progress).await)
        }
        Prepared::Scale(scale) => {
            let ScaleRun {
                run,
                sources,
                options,
            } = *scale;
            let connected = match sources {
                Ok(connecting) => connecting.await,
                Err(e) => Err(e),
            };
            let sources = match connected {
                Ok(sources) => sources,
                Err(e) => return approved.not_started(e),
            };
            let (events, teller) = teller(progress.clone(), runner_events::scale);
            let started = std::time::Instant::now();
            let mut scale = CapiScale::new(run.plan, sources, options, events);
            let acks = Approved {
                acks: run.acks,
                ..approved.clone()
            };
            // The scale's own typed events carry its lines.
            let runner = acks.runner(CancelSignal::never(), &|_| {});
            let result = crate::operation::run(&mut scale, runner).await;
            let outcome = scale.outcome(result, started.elapsed().as_secs());
            drop(scale);
            let _ = teller.await;
            let told = format!(
                "{} ({} polls, {} s)",
                outcome.message, outcome.polls, outcome.seconds
            );
            outcome.succeeded.then_some(told.clone()).ok_or(told)
        }
        Prepared::Provision(provision) => run_provision(*provision, approved, progress).await,
        Prepared::TerminateVm(providers) => terminate_vm(&providers, approved).await,
    }
}

/// `provision`'s operation over the approved plan, the cluster's join checks and journal, each
/// VM told as a step of the run until it joined.
async fn run_provision(
    run: ProvisionRun,
    approved: &Approved,
    progress: Progress,
) -> Result<String, String> {
    let ProvisionRun {
        plan,
        cluster,
        capi_owner,
        providers,
    } = run;
    let parts = async {
        let cluster =
            cluster.ok_or_else(|| format!("cluster {} is no longer discovered", plan.cluster))?;
        let provider = providers.named(&plan.provider)?;
        let (checks, warning) = join_checks(&cluster, providers.kubeconfig.as_ref()).await?;
        let journal = ProvisionJournal::open(&approved.state_dir, &plan.cluster)
            .map_err(|e| e.to_string())?;
        // The acknowledgements typed in the wizard: the runner checks them before each VM.
        let guards = GuardInputs {
            config: (*providers.config).clone(),
            addresses: cluster_addresses(&cluster),
            nodes: cluster.nodes().to_vec(),
            acks: approved.acks.clone(),
            capi_owner,
        };
        Ok::<_, String>((provider, checks, warning, journal, guards))
    };
    let (provider, checks, warning, journal, guards) = match parts.await {
        Ok(parts) => parts,
        Err(e) => return approved.not_started(e),
    };
    if let Some(warning) = warning {
        tell(&progress, vec![ProgressEvent::Line(warning)]);
    }
    let mut vms = ProvisionSteps::new(&plan.cluster, &plan.provider, plan.vm_names.clone());
    let (events, teller) = teller(progress, move |event| vms.events(&event));
    let options = RunnerOptions {
        poll: PROVISION_POLL,
        ..RunnerOptions::default()
    };
    let runner = ProvisionRunner::new(plan, provider, checks, Some(journal), options, events)
        .with_guards(guards);
    let mut provisioning = Provisioning::new(runner);
    // The provision's own events carry its lines.
    let result = crate::operation::run(
        &mut provisioning,
        approved.runner(CancelSignal::never(), &|_| {}),
    )
    .await;
    let summary = provisioning.summary(&result).await;
    drop(provisioning);
    let _ = teller.await;
    let line = summary.line();
    summary.succeeded().then_some(line.clone()).ok_or(line)
}

/// The approved VM terminated through its operation (which notes it in the cluster's journal).
async fn terminate_vm(providers: &Providers, approved: &Approved) -> Result<String, String> {
    let MutatingAction::TerminateVm {
        provider,
        cluster,
        vm,
    } = approved.approved.action()
    else {
        return approved.not_started("not a VM's terminate".to_string());
    };
    let provider = match providers.named(provider) {
        Ok(provider) => provider,
        Err(e) => return approved.not_started(e),
    };
    let journal = ProvisionJournal::open(&approved.state_dir, cluster).ok();
    let mut termination = VmTermination::new((cluster.clone(), vm.clone()), provider, journal);
    let runner = approved.runner(CancelSignal::never(), &|_| {});
    crate::operation::run(&mut termination, runner).await?;
    termination
        .progress()
        .map(|vm| format!("{} terminated", vm.name))
        .ok_or_else(|| "the VM was not terminated".to_string())
}

/// Starts the upgrade runner of an approved plan, or resumes the journal of its cluster a run
/// that did not end left (`operation::upgrade`, as `taloscope upgrade` does): its control
/// channel (pause, resume, abort) and its run.
fn start_upgrade(
    console: &Console,
    approved: &ApprovedAction,
    run: ActionRun,
    acks: Vec<String>,
) -> Result<(mpsc::UnboundedSender<RolloutControl>, RolloutRun), String> {
    let name = approved.action().cluster().to_string();
    let cluster = connection(&console.state, &name)
        .0
        .ok_or_else(|| format!("cluster {name} is no longer in the talosconfig"))?;
    let (events, rx) = mpsc::unbounded_channel();
    let dir = console.paths.state_dir.clone();
    let (approved, dispatcher) = (approved.clone(), console.dispatcher.clone());
    let handle = match run {
        ActionRun::Upgrade(planned) => {
            let options = RunOptions {
                state_dir: Some(dir),
                ..RunOptions::default()
            };
            let with = (approved, dispatcher, acks, cluster, options);
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
    let run = RolloutRun {
        task: handle.task,
        events: rx,
    };
    Ok((handle.control, run))
}

/// A new upgrade of kind `K` of `plan`, approved, with its acknowledgements, cluster and options.
fn fresh<K: UpgradeKind>(
    plan: K::Plan,
    (approved, dispatcher, acks, cluster, options): UpgradeWith,
    events: mpsc::UnboundedSender<RolloutEvent>,
) -> crate::rollout::RolloutHandle {
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

/// The node and etcd actions, the CAPI fix and the CAPI-way upgrade on the cluster's
/// connection, through the runner; a CAPI fix's cluster then followed until its finding
/// clears.
async fn run_on(
    observer: ClusterObserver,
    run: ActionRun,
    kubeconfig: Option<kube::config::Kubeconfig>,
    (approved, cancel): (&Approved, CancelSignal),
    progress: Progress,
) -> Result<String, String> {
    match run {
        ActionRun::Node(plan) => {
            let node = plan.node.clone();
            let told = |event: OperationEvent| {
                tell(&progress, runner_events::operation(&event, Some(&node)))
            };
            let mut action = NodeAction::new(plan, observer, NodeActionOptions::console());
            crate::operation::run(&mut action, approved.runner(cancel, &told)).await
        }
        ActionRun::Etcd(plan) => {
            let limits = SnapshotLimits {
                bound: SNAPSHOT_BOUND,
                max_bytes: SNAPSHOT_MAX_BYTES,
            };
            let told =
                |event: OperationEvent| tell(&progress, runner_events::operation(&event, None));
            let mut etcd = EtcdOperation::new(plan, observer, limits);
            crate::operation::run(&mut etcd, approved.runner(cancel, &told)).await
        }
        ActionRun::CapiFix(fix) => {
            run_capi_fix(observer, *fix, kubeconfig, (approved, cancel), progress).await
        }
        ActionRun::Forget(plan) => {
            let told =
                |event: OperationEvent| tell(&progress, runner_events::operation(&event, None));
            let mut forget = NodeForget::new(*plan, observer);
            crate::operation::run(&mut forget, approved.runner(cancel, &told)).await
        }
        ActionRun::CapiUpgrade(plan) => {
            let Some(kubeconfig) = kubeconfig else {
                let why = "no kubeconfig was read: the management cluster cannot be reached";
                return approved.not_started(why.to_string());
            };
            // A killed run of this same upgrade is resumed: its Lease taken over.
            let options = CapiUpgradeOptions {
                displaces: interrupted_run(&approved.state_dir, &plan).map(|r| r.holder),
                ..CapiUpgradeOptions::default()
            };
            let connected = CapiUpgrade::connect(*plan, &kubeconfig, observer.kube, options);
            let mut upgrade = match connected.await {
                Ok(upgrade) => upgrade,
                Err(e) => return approved.not_started(e),
            };
            let told =
                |event: OperationEvent| tell(&progress, runner_events::operation(&event, None));
            crate::operation::run(&mut upgrade, approved.runner(cancel, &told)).await
        }
        ActionRun::Delete(plan) => Err(format!(
            "the delete of {} runs on the provider's steps, not on a cluster connection",
            plan.cluster
        )),
        ActionRun::CapiScale(scale) => Err(format!(
            "the scale of {} runs on the management cluster, not on a cluster connection",
            scale.plan.cluster
        )),
        ActionRun::Create(plan) => Err(format!(
            "the create of {} runs on its provider, not on a cluster connection",
            plan.cluster
        )),
        ActionRun::Provision(plan) => Err(format!(
            "the provision of {} runs on its provider, not on a cluster connection",
            plan.cluster
        )),
        ActionRun::TerminateVm => Err("a VM's terminate runs on its provider".to_string()),
        ActionRun::Upgrade(_) | ActionRun::ResumeUpgrade => {
            Err("an in-place upgrade runs on its own rollout runner".to_string())
        }
    }
}

/// `capi doctor --fix`'s operation, then the cluster followed until the finding clears, their
/// lines told to `progress`.
async fn run_capi_fix(
    observer: ClusterObserver,
    fix: CapiFixRun,
    kubeconfig: Option<kube::config::Kubeconfig>,
    (approved, cancel): (&Approved, CancelSignal),
    progress: Progress,
) -> Result<String, String> {
    let management = async {
        let kubeconfig = kubeconfig.ok_or_else(|| {
            "no kubeconfig was read: the management cluster cannot be reached".to_string()
        })?;
        crate::kube::KubeClient::new(&kubeconfig, &fix.owner.management, Default::default())
            .await
            .map_err(|e| crate::error_chain(&e))
    };
    let management = match management.await {
        Ok(management) => management,
        Err(e) => return approved.not_started(e),
    };
    let told = |event: OperationEvent| tell(&progress, runner_events::operation(&event, None));
    let mut operation = CapiFix::new(
        fix.plan,
        observer.clone(),
        (management.clone(), fix.owner.clone()),
        CAPI_FOLLOW,
    );
    crate::operation::run(&mut operation, approved.runner(cancel, &told)).await?;
    let say = |line: String| tell(&progress, vec![ProgressEvent::Line(line)]);
    crate::capi_doctor::follow(
        &fix.finding,
        &management,
        &fix.owner,
        &observer,
        CAPI_FOLLOW,
        say,
    )
    .await
}

/// The create command's operation over the plan, its events and fingerprint questions told,
/// the operator's answers passed back, until it ends.
async fn run_create(
    create: CreateRun,
    approved: &Approved,
    progress: Progress,
) -> Result<(), String> {
    let CreateRun {
        plan,
        config,
        one_env,
        files,
        options,
        mut answers,
    } = create;
    let prepared = provider_named(&config, &one_env, &plan.provider)
        .map_err(|e| e.to_string())
        .and_then(|(provider, _)| Ok((provider, files?)));
    let (provider, files) = match prepared {
        Ok(prepared) => prepared,
        Err(e) => return approved.not_started(e).map(|_| ()),
    };
    let (events_tx, mut events) = mpsc::channel(64);
    let (questions_tx, mut questions) = mpsc::channel(8);
    let runner = create_runner(
        &approved.state_dir,
        plan,
        provider,
        files,
        options,
        FingerprintPolicy::Ask(questions_tx),
        events_tx,
    );
    let runner = match runner {
        Ok(runner) => runner,
        Err(e) => return approved.not_started(e.to_string()).map(|_| ()),
    };
    let for_task = approved.clone();
    let mut task = tokio::spawn(async move {
        let mut create = ClusterCreate::new(runner);
        // The create's own events carry its lines.
        let runner = for_task.runner(CancelSignal::never(), &|_| {});
        let result = crate::operation::run(&mut create, runner).await;
        create.summary(&result).await
    });
    let mut waiting: HashMap<u64, oneshot::Sender<bool>> = HashMap::new();
    let mut asked = 0u64;
    let summary: RunSummary = loop {
        tokio::select! {
            Some(event) = events.recv() => tell(&progress, runner_events::lifecycle(&event)),
            Some(q) = questions.recv() => {
                asked += 1;
                let FingerprintQuestion { vm, address, fingerprint, answer } = q;
                waiting.insert(asked, answer);
                let question = runner_events::fingerprint_question(asked, &vm, &address, &fingerprint);
                tell(&progress, vec![question]);
            }
            Some((id, trust)) = answers.recv() => {
                if let Some(answer) = waiting.remove(&id) {
                    let _ = answer.send(trust);
                }
            }
            ended = &mut task => {
                break ended.map_err(|e| format!("the run ended abnormally: {e}"))?;
            }
        }
    };
    while let Ok(event) = events.try_recv() {
        tell(&progress, runner_events::lifecycle(&event));
    }
    summary.error.map_or(Ok(()), Err)
}
