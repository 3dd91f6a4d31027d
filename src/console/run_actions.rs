//! The node and etcd actions' and CAPI fixes' IO for the event loop: the survey a node
//! plan's guards need, a guard's refusal audited, and an approved action run by the same
//! runner the headless commands run, its lines forwarded to the app channel and its end audited.
use std::time::Duration;

use tokio::sync::mpsc;

use super::run::Console;
use crate::app::action::{Action, AppEvent};
use crate::app::actions::{ActionRun, ActionUpdate, CapiFixRun, SNAPSHOT_BOUND};
use crate::app::message::Message;
use crate::app::state::AppState;
use crate::approval::{ApprovedAction, MutatingAction};
use crate::etcd_maintenance::{SNAPSHOT_MAX_BYTES, SnapshotLimits, run_plan};
use crate::journal::action::{RunningAction, begin_action, interrupted_actions};
use crate::node_actions::{
    CancelSignal, NodeActionOptions, NodeActionPlan, NodeActionRun, NodeSurvey, run_node_action,
};
use crate::upgrade::RunOptions;
use crate::upgrade::launch::connect;
use crate::upgrade::observe::ClusterObserver;

/// Connects to `cluster` as the rollouts do: its talosconfig context, its kube context.
async fn observer(
    cluster: Option<crate::discovery::Cluster>,
    options: RunOptions,
    name: &str,
) -> Result<ClusterObserver, String> {
    let cluster =
        cluster.ok_or_else(|| format!("cluster {name} is no longer in the talosconfig"))?;
    connect(&cluster, &options).await
}

fn connection(state: &AppState, name: &str) -> (Option<crate::discovery::Cluster>, RunOptions) {
    let cluster = state.clusters.iter().find(|c| c.name == name).cloned();
    let options = RunOptions {
        kubeconfig: state.provision.kubeconfig.clone(),
        ..RunOptions::default()
    };
    (cluster, options)
}

/// Reads the survey of `plan` off the event loop; it comes back as `AppEvent::Action`.
pub(super) fn survey(state: &AppState, plan: NodeActionPlan, app_tx: &mpsc::Sender<AppEvent>) {
    let (cluster, options) = connection(state, &plan.cluster);
    let app = app_tx.clone();
    tokio::spawn(async move {
        let survey = match observer(cluster, options, &plan.cluster).await {
            Ok(observer) => Ok(NodeSurvey::read(&plan, &observer).await),
            Err(e) => Err(e),
        };
        let update = ActionUpdate::Surveyed {
            cluster: plan.cluster.clone(),
            node: plan.node.clone(),
            survey,
        };
        let _ = app.send(AppEvent::Action(Box::new(update))).await;
    });
}

/// The node and etcd actions a console or command now gone left unfinished: each audited as
/// interrupted and told once, as a warning the first frame shows; a node one left cordoned is
/// remembered, so the node's action menu offers its uncordon first.
pub(super) fn startup(console: &mut Console) -> Vec<Action> {
    let (found, errors) = interrupted_actions(&console.paths.state_dir);
    let mut actions: Vec<Action> = errors
        .into_iter()
        .map(|e| Action::Notify(Message::warn(e)))
        .collect();
    for interrupted in found {
        let record = &interrupted.record;
        if let Err(e) = console
            .dispatcher
            .interrupted(&record.cluster, &record.action)
        {
            tracing::warn!("{e}");
        }
        if let Err(e) = interrupted.mark_reported() {
            tracing::warn!("{e}");
        }
        if let Some(node) = &record.left_cordoned {
            actions.push(Action::Event(AppEvent::Action(Box::new(
                ActionUpdate::LeftCordoned {
                    cluster: record.cluster.clone(),
                    node: node.clone(),
                    by: record.action.clone(),
                },
            ))));
        }
        actions.push(Action::Notify(Message::warn(interrupted.describe())));
    }
    actions
}

impl Console {
    /// Cancels the running node action after its current step.
    pub(super) fn cancel_action(&mut self) -> Option<Action> {
        if let Some(cancel) = &self.action_cancel {
            let _ = cancel.send(true);
        }
        None
    }

    /// A guard refused `action` on its plan: audited as the command line's refusal is.
    pub(super) fn refuse_action(&self, action: &MutatingAction, why: &str) -> Action {
        Action::Notify(Message::warn(self.dispatcher.refused(action, why)))
    }
}

/// Runs an approved action in its own task: the runner's lines and its end come back as
/// `AppEvent::Action`, and the dispatcher records how it ended.
pub(super) fn run(
    console: &mut Console,
    approved: ApprovedAction,
    run: ActionRun,
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let run = match run {
        ActionRun::Delete(plan) => return super::run_delete::run(console, approved, plan, app_tx),
        ActionRun::CapiScale(scale) => {
            return super::run_capi_scale::run(console, approved, *scale, app_tx);
        }
        other => other,
    };
    let name = approved.action().cluster().to_string();
    let (cluster, options) = connection(&console.state, &name);
    let kubeconfig = options.kubeconfig.clone();
    let dispatcher = console.dispatcher.clone();
    let (cancel_tx, cancel) = CancelSignal::new();
    console.action_cancel = Some(cancel_tx);
    let node = match &run {
        ActionRun::Node(plan) => Some(plan.node.clone()),
        _ => None,
    };
    let journal = begin_action(
        &console.paths.state_dir,
        &name,
        &approved.action().describe(),
        node.as_deref(),
    );
    let (lines, mut rx) = mpsc::unbounded_channel::<String>();
    let app = app_tx.clone();
    tokio::spawn(async move {
        let forward = app.clone();
        let forwarder = tokio::spawn(async move {
            while let Some(line) = rx.recv().await {
                let update = ActionUpdate::Line(line);
                if forward
                    .send(AppEvent::Action(Box::new(update)))
                    .await
                    .is_err()
                {
                    break;
                }
            }
        });
        let result = match (journal, observer(cluster, options, &name).await) {
            (Err(e), _) => {
                drop(lines);
                Err(e.to_string())
            }
            (Ok(_), Err(e)) => {
                drop(lines);
                Err(e)
            }
            (Ok(journal), Ok(observer)) => {
                let journal = RunningAction::new(journal);
                let on = RunOn {
                    observer: &observer,
                    approved: &approved,
                    kubeconfig,
                    journal: &journal,
                    cancel,
                };
                let result = run_on(on, run, lines).await;
                if journal.snapshot().outcome.is_none() {
                    journal.end(&result);
                }
                result
            }
        };
        ended(forwarder, &dispatcher, &approved, result, &app).await;
    });
}

/// An action's end: every line forwarded first, then how it ended audited and reported.
pub(super) async fn ended(
    forwarder: tokio::task::JoinHandle<()>,
    dispatcher: &crate::approval::Dispatcher,
    approved: &ApprovedAction,
    result: Result<String, String>,
    app: &mpsc::Sender<AppEvent>,
) {
    let _ = forwarder.await;
    if let Err(e) = dispatcher.finished(approved, result.clone().map(|_| ())) {
        tracing::warn!("{e}");
    }
    let _ = app
        .send(AppEvent::Action(Box::new(ActionUpdate::Finished(result))))
        .await;
}

/// What an approved action runs with besides its plan.
struct RunOn<'a> {
    observer: &'a ClusterObserver,
    approved: &'a ApprovedAction,
    kubeconfig: Option<kube::config::Kubeconfig>,
    journal: &'a RunningAction,
    cancel: CancelSignal,
}

/// The headless commands' runners, their lines sent to `lines` (dropped when done).
async fn run_on(
    on: RunOn<'_>,
    run: ActionRun,
    lines: mpsc::UnboundedSender<String>,
) -> Result<String, String> {
    let RunOn {
        observer,
        approved,
        kubeconfig,
        journal,
        cancel,
    } = on;
    match run {
        ActionRun::Node(plan) => {
            let say = move |line: String| {
                let _ = lines.send(line);
            };
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
                    let line = format!("[{}/{total}] {line}", i + 1);
                    journal.record(|r| r.step = line.clone());
                    let _ = lines.send(line);
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
            let to = (kubeconfig, lines);
            run_capi_fix(observer, approved, &fix, journal, to).await
        }
        ActionRun::Delete(plan) => Err(format!(
            "the delete of {} runs on its own runner, not on a cluster connection",
            plan.cluster
        )),
        ActionRun::CapiScale(scale) => Err(format!(
            "the scale of {} runs on its own runner, not on a cluster connection",
            scale.plan.cluster
        )),
    }
}

/// How long the console follows a CAPI fix until its finding clears, and how often it reads.
const CAPI_FOLLOW: (Duration, Duration) = (Duration::from_secs(1800), Duration::from_secs(5));

/// `capi doctor --fix`'s runner and follower, their lines sent to `lines`.
async fn run_capi_fix(
    observer: &ClusterObserver,
    approved: &ApprovedAction,
    fix: &CapiFixRun,
    journal: &RunningAction,
    (kubeconfig, lines): (
        Option<kube::config::Kubeconfig>,
        mpsc::UnboundedSender<String>,
    ),
) -> Result<String, String> {
    let kubeconfig = kubeconfig.ok_or_else(|| {
        "no kubeconfig was read: the management cluster cannot be reached".to_string()
    })?;
    let management =
        crate::kube::KubeClient::new(&kubeconfig, &fix.owner.management, Default::default())
            .await
            .map_err(|e| crate::error_chain(&e))?;
    let say = |line: String| {
        let _ = lines.send(line);
    };
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
