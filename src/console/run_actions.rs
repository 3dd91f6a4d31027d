//! The node and etcd actions' and CAPI fixes' IO for the event loop: the survey a node
//! plan's guards need, a guard's refusal audited, and an approved action run by the operation
//! runner the headless commands run, its events forwarded to the app channel.
use std::time::Duration;

use tokio::sync::mpsc;

use super::run::Console;
use crate::app::action::{Action, AppEvent};
use crate::app::actions::{ActionRun, ActionUpdate, CapiFixRun, SNAPSHOT_BOUND};
use crate::app::message::Message;
use crate::app::state::AppState;
use crate::approval::{ApprovedAction, MutatingAction};
use crate::etcd_maintenance::{SNAPSHOT_MAX_BYTES, SnapshotLimits};
use crate::journal::action::interrupted_actions;
use crate::node_actions::{NodeActionOptions, NodeActionPlan, NodeSurvey};
use crate::operation::capi_fix::CapiFix;
use crate::operation::etcd::EtcdOperation;
use crate::operation::node::NodeAction;
use crate::operation::{self, CancelSignal, OperationEvent, Runner};
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

/// Runs an approved action in its own task through the operation runner: its events come
/// back as `AppEvent::Action` lines, and the runner keeps its journal and audits how it ended.
pub(super) fn run(
    console: &mut Console,
    approved: ApprovedAction,
    (run, acks): (ActionRun, Vec<String>),
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let run = match run {
        ActionRun::Delete(plan) => {
            return super::run_delete::run(console, approved, (plan, acks), app_tx);
        }
        ActionRun::CapiScale(scale) => {
            return super::run_capi_scale::run(console, approved, *scale, app_tx);
        }
        other => other,
    };
    let name = approved.action().cluster().to_string();
    let (cluster, options) = connection(&console.state, &name);
    let kubeconfig = options.kubeconfig.clone();
    let dispatcher = console.dispatcher.clone();
    let state_dir = console.paths.state_dir.clone();
    let (cancel_tx, cancel) = CancelSignal::new();
    console.action_cancel = Some(cancel_tx);
    let (lines, rx) = mpsc::unbounded_channel::<String>();
    let app = app_tx.clone();
    tokio::spawn(async move {
        let forwarder = tokio::spawn(forward(rx, app.clone()));
        let result = match observer(cluster, options, &name).await {
            Err(e) => {
                drop(lines);
                if let Err(audit) = dispatcher.finished(&approved, Err(e.clone())) {
                    tracing::warn!("{audit}");
                }
                Err(e)
            }
            Ok(observer) => {
                let events = move |event: OperationEvent| {
                    let _ = lines.send(event.text());
                };
                let runner = Runner {
                    approved: &approved,
                    dispatcher: &dispatcher,
                    state_dir: &state_dir,
                    acks: &acks,
                    cancel,
                    events: &events,
                };
                run_on(observer, run, kubeconfig, runner).await
            }
        };
        let _ = forwarder.await;
        report_end(result, &app).await;
    });
}

/// Forwards a run's lines to the app until the run drops its sender.
async fn forward(mut rx: mpsc::UnboundedReceiver<String>, app: mpsc::Sender<AppEvent>) {
    while let Some(line) = rx.recv().await {
        let update = ActionUpdate::Line(line);
        if app.send(AppEvent::Action(Box::new(update))).await.is_err() {
            break;
        }
    }
}

/// An action's end, after every line of it was forwarded.
pub(super) async fn report_end(result: Result<String, String>, app: &mpsc::Sender<AppEvent>) {
    let _ = app
        .send(AppEvent::Action(Box::new(ActionUpdate::Finished(result))))
        .await;
}

/// How long the console follows a CAPI fix until its finding clears, and how often it reads.
const CAPI_FOLLOW: (Duration, Duration) = (Duration::from_secs(1800), Duration::from_secs(5));

/// The operation of `run` on the cluster's connection, through the runner; a CAPI fix's
/// cluster then followed until its finding clears.
async fn run_on(
    observer: ClusterObserver,
    run: ActionRun,
    kubeconfig: Option<kube::config::Kubeconfig>,
    runner: Runner<'_>,
) -> Result<String, String> {
    match run {
        ActionRun::Node(plan) => {
            let mut action = NodeAction::new(plan, observer, NodeActionOptions::console());
            operation::run(&mut action, runner).await
        }
        ActionRun::Etcd(plan) => {
            let limits = SnapshotLimits {
                bound: SNAPSHOT_BOUND,
                max_bytes: SNAPSHOT_MAX_BYTES,
            };
            let mut etcd = EtcdOperation::new(plan, observer, limits);
            operation::run(&mut etcd, runner).await
        }
        ActionRun::CapiFix(fix) => run_capi_fix(observer, *fix, kubeconfig, runner).await,
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

/// `capi doctor --fix`'s operation, then the cluster followed until the finding clears.
async fn run_capi_fix(
    observer: ClusterObserver,
    fix: CapiFixRun,
    kubeconfig: Option<kube::config::Kubeconfig>,
    runner: Runner<'_>,
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
        Err(e) => {
            if let Err(audit) = runner.dispatcher.finished(runner.approved, Err(e.clone())) {
                tracing::warn!("{audit}");
            }
            return Err(e);
        }
    };
    let events = runner.events;
    let mut operation = CapiFix::new(
        fix.plan,
        observer.clone(),
        (management.clone(), fix.owner.clone()),
        CAPI_FOLLOW,
    );
    operation::run(&mut operation, runner).await?;
    let say = |line: String| {
        events(OperationEvent::Line {
            index: 0,
            total: 1,
            elapsed: Duration::ZERO,
            timeout: CAPI_FOLLOW.0,
            text: line,
        })
    };
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
