//! The console's one runner of an approved operation (a node or etcd action, a CAPI doctor's
//! fix, a cluster's create or delete, a CAPI scale): it runs the runner the headless command
//! runs in its own task, tells the app its events as progress events of its kind
//! (`operation::runner_events` maps each runner's own), then how it ended, after the
//! dispatcher audited it.
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::run::Console;
use super::run_create::FingerprintAnswer;
use crate::app::action::AppEvent;
use crate::app::actions::{ActionRun, CapiFixRun, SNAPSHOT_BOUND};
use crate::app::capi_scale::CapiScaleRun;
use crate::app::state::AppState;
use crate::approval::ApprovedAction;
use crate::capi_scale::{ScaleOptions, run_scale};
use crate::cluster_config::ContextFiles;
use crate::cluster_lifecycle::{
    CreateOptions, CreatePlan, DeletePlan, FingerprintPolicy, FingerprintQuestion, ProviderDelete,
    RunSummary, create_runner, provider_named, run_delete,
};
use crate::config::Config;
use crate::etcd_maintenance::{SNAPSHOT_MAX_BYTES, SnapshotLimits, run_plan};
use crate::journal::action::{RunningAction, begin_action};
use crate::node_actions::{CancelSignal, NodeActionOptions, NodeActionRun, run_node_action};
use crate::opennebula::auth::OneEnvironment;
use crate::operation::progress::ProgressEvent;
use crate::operation::{OperationKind, runner_events};
use crate::upgrade::RunOptions;
use crate::upgrade::launch::connect;
use crate::upgrade::observe::ClusterObserver;

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
    map: fn(E) -> Vec<ProgressEvent>,
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

/// A node or etcd action or a CAPI fix: on a connection to the cluster, in the action
/// journal, stopped between steps by `cancel`.
struct OnCluster {
    run: ActionRun,
    cluster: Option<crate::discovery::Cluster>,
    options: RunOptions,
    journal: Result<crate::journal::action::ActionJournal, String>,
    cancel: CancelSignal,
}

/// A cluster's delete: its plan, the provider's steps, where its journals are.
struct DeleteRun {
    plan: DeletePlan,
    steps: Result<ProviderDelete, String>,
    state_dir: std::path::PathBuf,
}

/// A CAPI scale: its plan and acknowledgements, both sides being connected to, its timing.
struct ScaleRun {
    run: CapiScaleRun,
    sources: Result<super::run_capi_scale::Connecting, String>,
    options: ScaleOptions,
}

/// A new cluster: its plan, what its runner needs, and where the operator's answers to its
/// fingerprint questions arrive.
struct CreateRun {
    plan: CreatePlan,
    config: Arc<Config>,
    one_env: Arc<OneEnvironment>,
    state_dir: std::path::PathBuf,
    files: Result<ContextFiles, String>,
    options: CreateOptions,
    answers: mpsc::Receiver<FingerprintAnswer>,
}

/// What a run takes from the console before its task starts.
enum Prepared {
    OnCluster(Box<OnCluster>),
    Delete(Box<DeleteRun>),
    Scale(Box<ScaleRun>),
    Create(Box<CreateRun>),
}

/// Runs an approved operation in its own task: its progress comes back as
/// `AppEvent::Progress`, its end as `ProgressEvent::Finished` once the dispatcher recorded it.
pub(super) fn run(
    console: &mut Console,
    approved: ApprovedAction,
    run: ActionRun,
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let kind = OperationKind::of(approved.action());
    let prepared = prepare(console, &approved, run);
    let dispatcher = console.dispatcher.clone();
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
        if let Err(e) = dispatcher.finished(&approved, result.clone().map(|_| ())) {
            tracing::warn!("{e}");
        }
        let end = ProgressEvent::Finished(result);
        let _ = app.send(AppEvent::Progress(kind, end)).await;
    });
}

/// What each kind needs from the console, taken before the task starts.
fn prepare(console: &mut Console, approved: &ApprovedAction, run: ActionRun) -> Prepared {
    let state_dir = console.paths.state_dir.clone();
    match run {
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
            Prepared::Delete(Box::new(DeleteRun {
                plan,
                steps,
                state_dir,
            }))
        }
        ActionRun::Create(plan) => {
            let (tx, answers) = mpsc::channel(8);
            console.creates.answers.insert(plan.cluster.clone(), tx);
            Prepared::Create(Box::new(CreateRun {
                plan: *plan,
                config: Arc::clone(&console.state.provision.config),
                one_env: Arc::clone(&console.state.provision.one_env),
                state_dir,
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
                acks: run.acks.clone(),
                state_dir,
            };
            let sources = super::run_capi_scale::connect(console, &run.plan.cluster);
            Prepared::Scale(Box::new(ScaleRun {
                run: *run,
                sources,
                options,
            }))
        }
        run => {
            let name = approved.action().cluster().to_string();
            let (cluster, options) = connection(&console.state, &name);
            let (cancel_tx, cancel) = CancelSignal::new();
            console.action_cancel = Some(cancel_tx);
            let node = match &run {
                ActionRun::Node(plan) => Some(plan.node.clone()),
                _ => None,
            };
            let describe = approved.action().describe();
            let journal = begin_action(&state_dir, &name, &describe, node.as_deref())
                .map_err(|e| e.to_string());
            Prepared::OnCluster(Box::new(OnCluster {
                run,
                cluster,
                options,
                journal,
                cancel,
            }))
        }
    }
}

/// The headless command's runner of each kind, its events told to `progress` (dropped when
/// done, so that every event reaches the app before the end).
async fn carry_out(
    prepared: Prepared,
    approved: &ApprovedAction,
    progress: Progress,
) -> Result<String, String> {
    match prepared {
        Prepared::OnCluster(on) => {
            let OnCluster {
                run,
                cluster,
                options,
                journal,
                cancel,
            } = *on;
            let journal = RunningAction::new(journal?);
            let name = approved.action().cluster().to_string();
            let kubeconfig = options.kubeconfig.clone();
            let observer = match observer(cluster, options, &name).await {
                Ok(observer) => observer,
                Err(e) => {
                    let result = Err(e);
                    journal.end(&result);
                    return result;
                }
            };
            let on = RunOn {
                observer: &observer,
                approved,
                kubeconfig,
                journal: &journal,
                cancel,
            };
            let result = run_on(on, run, progress).await;
            if journal.snapshot().outcome.is_none() {
                journal.end(&result);
            }
            result
        }
        Prepared::Delete(delete) => {
            let DeleteRun {
                plan,
                steps,
                state_dir,
            } = *delete;
            let steps = steps?;
            let (events, teller) = teller(progress, |e| runner_events::lifecycle(&e));
            let summary =
                run_delete(&plan, &steps, approved, DELETE_BOUNDS, &state_dir, events).await;
            let _ = teller.await;
            summary.error.map_or_else(
                || {
                    Ok(format!(
                        "cluster {} deleted: no VM, context or journal of it left",
                        plan.cluster
                    ))
                },
                Err,
            )
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
            let sources = sources?.await?;
            let (events, teller) = teller(progress, runner_events::scale);
            let outcome = run_scale(approved, &run.plan, &sources, &options, &events).await;
            drop(events);
            let _ = teller.await;
            let told = format!(
                "{} ({} polls, {} s)",
                outcome.message, outcome.polls, outcome.seconds
            );
            outcome.succeeded.then_some(told.clone()).ok_or(told)
        }
    }
}

/// What an approved action on a cluster connection runs with besides its plan.
struct RunOn<'a> {
    observer: &'a ClusterObserver,
    approved: &'a ApprovedAction,
    kubeconfig: Option<kube::config::Kubeconfig>,
    journal: &'a RunningAction,
    cancel: CancelSignal,
}

/// The node and etcd actions' and the CAPI fix's runners.
async fn run_on(on: RunOn<'_>, run: ActionRun, progress: Progress) -> Result<String, String> {
    let RunOn {
        observer,
        approved,
        kubeconfig,
        journal,
        cancel,
    } = on;
    match run {
        ActionRun::Node(plan) => {
            let node = plan.node.clone();
            let say =
                move |line: String| tell(&progress, runner_events::node_action_line(&node, line));
            let run = NodeActionRun {
                approved,
                observer,
                options: NodeActionOptions::console(),
                progress: &say,
                journal: Some(journal),
                cancel,
            };
            run_node_action(&plan, run).await
        }
        ActionRun::Etcd(plan) => {
            let limits = SnapshotLimits {
                bound: SNAPSHOT_BOUND,
                max_bytes: SNAPSHOT_MAX_BYTES,
            };
            let outcome = run_plan(
                &observer.talos,
                approved,
                &plan,
                limits,
                &cancel,
                |i, total, line| {
                    journal.record(|r| r.step = format!("[{}/{total}] {line}", i + 1));
                    tell(&progress, runner_events::etcd_step(i, total, line));
                },
            )
            .await?;
            Ok(format!(
                "{} in {}: {} step(s) done",
                plan.action.as_str(),
                plan.cluster,
                outcome.steps.len()
            ))
        }
        ActionRun::CapiFix(fix) => {
            run_capi_fix(observer, approved, &fix, journal, (kubeconfig, progress)).await
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
    }
}

/// `capi doctor --fix`'s runner and follower, their lines told to `progress`.
async fn run_capi_fix(
    observer: &ClusterObserver,
    approved: &ApprovedAction,
    fix: &CapiFixRun,
    journal: &RunningAction,
    (kubeconfig, progress): (Option<kube::config::Kubeconfig>, Progress),
) -> Result<String, String> {
    let kubeconfig = kubeconfig.ok_or_else(|| {
        "no kubeconfig was read: the management cluster cannot be reached".to_string()
    })?;
    let management =
        crate::kube::KubeClient::new(&kubeconfig, &fix.owner.management, Default::default())
            .await
            .map_err(|e| crate::error_chain(&e))?;
    let say = |line: String| tell(&progress, vec![ProgressEvent::Line(line)]);
    crate::capi_doctor::apply_fix(
        &fix.plan,
        approved,
        observer,
        &management,
        CAPI_FOLLOW,
        journal,
        say,
    )
    .await?;
    crate::capi_doctor::follow(
        &fix.finding,
        &management,
        &fix.owner,
        observer,
        CAPI_FOLLOW,
        say,
    )
    .await
}

/// The create command's runner over the plan, its events and fingerprint questions told, the
/// operator's answers passed back, until it ends.
async fn run_create(
    create: CreateRun,
    approved: &ApprovedAction,
    progress: Progress,
) -> Result<(), String> {
    let CreateRun {
        plan,
        config,
        one_env,
        state_dir,
        files,
        options,
        mut answers,
    } = create;
    let (provider, _) =
        provider_named(&config, &one_env, &plan.provider).map_err(|e| e.to_string())?;
    let (events_tx, mut events) = mpsc::channel(64);
    let (questions_tx, mut questions) = mpsc::channel(8);
    let runner = create_runner(
        &state_dir,
        plan,
        provider,
        files?,
        options,
        FingerprintPolicy::Ask(questions_tx),
        events_tx,
    )
    .map_err(|e| e.to_string())?;
    let for_runner = approved.clone();
    let mut task = tokio::spawn(async move { runner.run(&for_runner).await });
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
