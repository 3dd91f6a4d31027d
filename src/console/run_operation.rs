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
use crate::app::action::{AppEvent, progress};
use crate::app::state::AppState;
use crate::approval::{ApprovedAction, Dispatcher, MutatingAction};
use crate::capi_scale::ScaleOptions;
use crate::cluster_config::ContextFiles;
use crate::cluster_lifecycle::{
    CreateOptions, CreatePlan, FingerprintPolicy, FingerprintQuestion, LifecycleEvent,
    ProviderDelete, RunSummary, create_runner,
};
use crate::etcd_maintenance::SnapshotLimits;
use crate::node_actions::NodeActionOptions;
use crate::operation::capi_fix::CapiFix;
use crate::operation::capi_upgrade::{CapiUpgrade, CapiUpgradeOptions, interrupted_run};
use crate::operation::config_patch::ConfigPatchRollout;
use crate::operation::create::ClusterCreate;
use crate::operation::delete::ClusterDelete;
use crate::operation::etcd::EtcdOperation;
use crate::operation::forget::NodeForget;
use crate::operation::node::NodeAction;
use crate::operation::planned::{ActionRun, CapiFixRun, SNAPSHOT_BOUND};
use crate::operation::progress::ProgressEvent;
use crate::operation::provision::Provisioning;
use crate::operation::runner_events::ProvisionSteps;
use crate::operation::scale::CapiScale;
use crate::operation::terminate::VmTermination;
use crate::operation::upgrade::resume_from_journal;
use crate::operation::{
    CancelSignal, Operation, OperationEvent, OperationKind, Runner, runner_events,
};
use crate::provision::cluster::{GuardInputs, join_checks, keyed};
use crate::provision::{Provider, ProvisionJournal, ProvisionPlan, ProvisionRunner, RunnerOptions};
use crate::rollout::RolloutEvent;
use crate::upgrade::observe::ClusterObserver;

/// Where a runner's progress events go: to the app, in the order told.
type Progress = mpsc::UnboundedSender<ProgressEvent>;

fn tell(progress: &Progress, events: Vec<ProgressEvent>) {
    for event in events {
        let _ = progress.send(event);
    }
}

/// A channel for a runner's own events, each told to `progress` as `map` maps it until the
/// runner drops its sender; the task ends then, and with it its hold on `progress`, so the
/// run's end is told after its last event ([`run`] waits for every holder).
fn teller<E: Send + 'static>(
    progress: Progress,
    mut map: impl FnMut(E) -> Vec<ProgressEvent> + Send + 'static,
) -> mpsc::Sender<E> {
    let (events, mut rx) = mpsc::channel(64);
    tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            tell(&progress, map(event));
        }
    });
    events
}

/// How long the console follows a CAPI fix until its finding clears, and how often it reads.
const CAPI_FOLLOW: (Duration, Duration) = crate::capi_doctor::FOLLOW_BOUNDS;
/// `taloscope delete`'s defaults: how often the run looks at the VMs, and how long they may
/// take to be gone.
const DELETE_BOUNDS: (Duration, Duration) = crate::cluster_lifecycle::DELETE_BOUNDS;
/// `taloscope scale`'s defaults: a poll every 2 s, 20 minutes in all, a 60 s Lease.
const SCALE_OPTIONS: ScaleOptions = ScaleOptions::DEFAULT;
/// How often a provision's runner looks at its VMs.
const PROVISION_POLL: Duration = Duration::from_secs(1);
const NO_KUBECONFIG: &str = "no kubeconfig was read: the management cluster cannot be reached";

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
    /// `operation` through the one runner, stopped between steps by `cancel`, each of its
    /// events told as `told` maps it (one whose own typed events carry its lines runs
    /// [`Approved::to_its_end`]).
    async fn carry<O: Operation>(
        &self,
        operation: &mut O,
        cancel: CancelSignal,
        told: impl Fn(&OperationEvent) -> Vec<ProgressEvent> + Send + Sync,
    ) -> Result<String, String> {
        let events = |event: OperationEvent| tell(&self.progress, told(&event));
        let runner = Runner {
            approved: &self.approved,
            dispatcher: &self.dispatcher,
            state_dir: &self.state_dir,
            acks: &self.acks,
            cancel,
            events: &events,
        };
        crate::operation::run(operation, runner).await
    }

    /// `operation` through the one runner to its end (its kind's cancel rule: nothing
    /// cancels it), its own typed events carrying its lines: the runner's tell nothing more.
    async fn to_its_end<O: Operation>(&self, operation: &mut O) -> Result<String, String> {
        self.carry(operation, CancelSignal::never(), |_| Vec::new())
            .await
    }
}

/// The runner's events of an operation about no one node.
fn lines(event: &OperationEvent) -> Vec<ProgressEvent> {
    runner_events::operation(event, None)
}

/// Runs an approved operation in its own task through the operation runner: its progress
/// told to the progress screen as its news, its end as `ProgressEvent::Finished` once the
/// runner recorded it in the journal and the audit log (or, when it could not open its operation,
/// once that is audited here).
pub(super) fn run(
    console: &mut Console,
    approved: ApprovedAction,
    (run, acks): (ActionRun, Vec<String>),
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let kind = OperationKind::of(approved.action());
    let audit = (approved.clone(), console.dispatcher.clone());
    let (told, mut rx) = mpsc::unbounded_channel::<ProgressEvent>();
    let on = Approved {
        approved,
        dispatcher: console.dispatcher.clone(),
        state_dir: console.paths.state_dir.clone(),
        acks,
        progress: told,
    };
    let carried = open(console, on, run);
    let app = app_tx.clone();
    tokio::spawn(async move {
        let forward = app.clone();
        let forwarder = tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                if forward.send(progress(kind, event)).await.is_err() {
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
        let _ = app
            .send(progress(kind, ProgressEvent::Finished(result)))
            .await;
    });
}

/// Each kind's operation opened from the approved request, with what it takes from the
/// console before its task starts (the upgrade's control, an action's cancel, a create's
/// fingerprint answers).
fn open(console: &mut Console, on: Approved, run: ActionRun) -> Carried {
    console.rollout_control = None;
    let state = &console.state;
    let kubeconfig = state.provision.kubeconfig.clone();
    match run {
        // Started from its plan, or resumed from the journal a run that did not end left
        // (`operation::upgrade`, as `taloscope upgrade` does); its handle pauses, resumes and
        // aborts it.
        ActionRun::Upgrade(_) | ActionRun::ResumeUpgrade => {
            let (events, mut rx) = mpsc::unbounded_channel();
            let approval = (on.approved.clone(), on.dispatcher.clone());
            let cluster = super::cluster(state, on.approved.action().cluster());
            let started = cluster.and_then(|cluster| match run {
                ActionRun::Upgrade(planned) => {
                    let acks = on.acks.clone();
                    Ok((*planned).spawn(approval, acks, cluster, &on.state_dir, events))
                }
                _ => resume_from_journal(&on.state_dir, cluster, approval, events),
            });
            let started = started.map(|handle| {
                console.rollout_control = Some(handle.control);
                handle.task
            });
            Box::pin(async move {
                let task = started?;
                // Its end is told once, by `run`, from how the task ended.
                let forward = async {
                    while let Some(event) = rx.recv().await {
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
            let node = plan.node.clone();
            let told = move |e: &OperationEvent| runner_events::operation(e, Some(&node));
            let options = NodeActionOptions::console();
            operate(console, on, told, move |observer| {
                NodeAction::new(plan, observer, options)
            })
        }
        ActionRun::Etcd(plan) => operate(console, on, lines, |observer| {
            EtcdOperation::new(plan, observer, SnapshotLimits::within(SNAPSHOT_BOUND))
        }),
        ActionRun::ConfigPatch(plan) => {
            let owner = state.fleet.capi.owner(&plan.cluster).cloned();
            let options = NodeActionOptions::console();
            operate(console, on, runner_events::node_phases, move |observer| {
                ConfigPatchRollout::new(*plan, observer, options, owner)
            })
        }
        ActionRun::Forget(plan) => operate(console, on, lines, |observer| {
            NodeForget::new(*plan, observer)
        }),
        ActionRun::CapiFix(fix) => on_cluster(console, on, |on, observer, cancel| async move {
            let kubeconfig = kubeconfig.ok_or_else(|| NO_KUBECONFIG.to_string())?;
            let CapiFixRun {
                plan,
                finding,
                owner,
            } = *fix;
            let fixing = CapiFix::connect(plan, observer, &kubeconfig, owner, CAPI_FOLLOW);
            let mut operation = fixing.await?;
            if let Err(e) = on.carry(&mut operation, cancel, lines).await {
                return Ok(Err(e));
            }
            let say = |line| tell(&on.progress, vec![ProgressEvent::Line(line)]);
            Ok(operation.follow(&finding, say).await)
        }),
        ActionRun::CapiUpgrade(plan) => {
            on_cluster(console, on, |on, observer, cancel| async move {
                let kubeconfig = kubeconfig.ok_or_else(|| NO_KUBECONFIG.to_string())?;
                // A killed run of this same upgrade is resumed: its Lease taken over.
                let options = CapiUpgradeOptions {
                    displaces: interrupted_run(&on.state_dir, &plan).map(|r| r.holder),
                    ..CapiUpgradeOptions::default()
                };
                let connected = CapiUpgrade::connect(*plan, &kubeconfig, observer.kube, options);
                let mut upgrade = connected.await?;
                Ok(on.carry(&mut upgrade, cancel, lines).await)
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
                let mut delete = ClusterDelete::new(plan, steps?, DELETE_BOUNDS);
                Ok(on.carry(&mut delete, CancelSignal::never(), lines).await)
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
        ActionRun::CapiScale(plan) => {
            let sources = super::read_plans::connect(console, &plan.cluster);
            Box::pin(async move {
                let events = teller(on.progress.clone(), runner_events::scale);
                let started = std::time::Instant::now();
                let sources = sources.await?;
                let mut operation = CapiScale::new(*plan, sources, SCALE_OPTIONS, events);
                let result = on.to_its_end(&mut operation).await;
                let outcome = operation.outcome(result, started.elapsed().as_secs());
                let told = format!(
                    "{} ({} polls, {} s)",
                    outcome.message, outcome.polls, outcome.seconds
                );
                Ok(outcome.succeeded.then_some(told.clone()).ok_or(told))
            })
        }
        ActionRun::Provision(plan) => {
            let opened = provision_inputs(state, &plan, on.acks.clone());
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
                let terminated = on.to_its_end(&mut termination).await;
                Ok(terminated.and_then(|_| {
                    let vm = termination.progress();
                    vm.map(|vm| format!("{} terminated", vm.name))
                        .ok_or_else(|| "the VM was not terminated".to_string())
                }))
            })
        }
    }
}

/// A run on a connection to the approved action's cluster, which the operator may cancel
/// (`c` on the progress: the console keeps its sender).
fn on_cluster<F: Future<Output = Ended> + Send + 'static>(
    console: &mut Console,
    on: Approved,
    run: impl FnOnce(Approved, ClusterObserver, CancelSignal) -> F + Send + 'static,
) -> Carried {
    let connecting = super::connect(&console.state, on.approved.action().cluster());
    let (cancel_tx, cancel) = CancelSignal::new();
    console.action_cancel = Some(cancel_tx);
    Box::pin(async move { run(on, connecting.await?, cancel).await })
}

/// The operation `make` makes on a connection to the approved action's cluster, carried
/// through the one runner with its events told as `told` maps them; the operator may cancel it.
fn operate<O: Operation + Sync + 'static>(
    console: &mut Console,
    on: Approved,
    told: impl Fn(&OperationEvent) -> Vec<ProgressEvent> + Send + Sync + 'static,
    make: impl FnOnce(ClusterObserver) -> O + Send + 'static,
) -> Carried {
    on_cluster(console, on, |on, observer, cancel| async move {
        Ok(on.carry(&mut make(observer), cancel, told).await)
    })
}

/// The provider named `name` in the operator's config.
fn provider(state: &AppState, name: &str) -> Result<Provider, String> {
    let (config, one_env) = (&state.provision.config, &state.provision.one_env);
    super::run_provision_wizard::provider(config, one_env, name)
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
    let cluster = keyed(config, &state.clusters, &plan.cluster).cloned();
    let cluster =
        cluster.ok_or_else(|| format!("cluster {} is no longer discovered", plan.cluster))?;
    let owner = state.fleet.capi.owner(&cluster.name).cloned();
    let guards = GuardInputs::of(config, &cluster, acks, owner);
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
    let events = teller(on.progress.clone(), move |event| vms.events(&event));
    let options = RunnerOptions {
        poll: PROVISION_POLL,
        ..RunnerOptions::default()
    };
    let runner = ProvisionRunner::new(plan, provider, checks, Some(journal), options, events)
        .with_guards(guards);
    let mut provisioning = Provisioning::new(runner);
    let result = on.to_its_end(&mut provisioning).await;
    Ok(provisioning.summary(&result).await.result())
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
    let lines = |event: LifecycleEvent| runner_events::lifecycle(&event);
    let events = teller(on.progress.clone(), lines);
    let (questions_tx, mut questions) = mpsc::channel(8);
    let asking = FingerprintPolicy::Ask(questions_tx);
    let runner = create_runner(
        &on.state_dir,
        plan,
        provider,
        files,
        options,
        asking,
        events,
    );
    let runner = runner.map_err(|e| e.to_string())?;
    let for_task = on.clone();
    let mut task = tokio::spawn(async move {
        let mut create = ClusterCreate::new(runner);
        let result = for_task.to_its_end(&mut create).await;
        create.summary(&result).await
    });
    let mut waiting: HashMap<u64, oneshot::Sender<bool>> = HashMap::new();
    let mut asked = 0u64;
    let ended: Result<RunSummary, String> = loop {
        tokio::select! {
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
    let ended = ended.and_then(|summary| summary.error.map_or(Ok(()), Err));
    Ok(runner_events::create_end(&cluster, ended))
}
