//! A whole cluster's deletion for the event loop: its plan read off the UI thread with
//! `prepare_delete` (the function `taloscope delete` calls), and an approved delete run through
//! the operation runner (as the command runs it), its lines forwarded to the app channel.
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::run::Console;
use crate::app::action::AppEvent;
use crate::app::actions::ActionUpdate;
use crate::approval::ApprovedAction;
use crate::cluster_lifecycle::{DeletePlan, DeleteSources, ProviderDelete, prepare_delete};
use crate::discovery::Discovery;
use crate::operation::delete::ClusterDelete;
use crate::operation::{CancelSignal, OperationEvent, Runner};

/// How often the run looks at the VMs, and how long they may take to be gone (`taloscope
/// delete`'s defaults).
const POLL: Duration = Duration::from_secs(1);
const GONE_BOUND: Duration = Duration::from_secs(600);
/// Reading the create journal, the provider's VMs and the Lease.
const PLAN_BOUND: Duration = Duration::from_secs(60);

fn send(app: &mpsc::Sender<AppEvent>, update: ActionUpdate) -> impl Future<Output = ()> {
    let app = app.clone();
    async move {
        let _ = app.send(AppEvent::Action(Box::new(update))).await;
    }
}

/// Reads the delete plan of `cluster`; it comes back as `ActionUpdate::DeletePlanned`.
pub(super) fn plan(console: &Console, cluster: String, app_tx: &mpsc::Sender<AppEvent>) {
    let state = &console.state;
    let config = Arc::clone(&state.provision.config);
    let one_env = Arc::clone(&state.provision.one_env);
    let discovery = Discovery {
        clusters: state.clusters.clone(),
        kubeconfig: state.provision.kubeconfig.clone(),
        ..Discovery::default()
    };
    let state_dir = console.paths.state_dir.clone();
    let app = app_tx.clone();
    tokio::spawn(async move {
        let sources = DeleteSources {
            config: &config,
            discovery: &discovery,
            one_env: &one_env,
            state_dir: &state_dir,
        };
        let read = tokio::time::timeout(PLAN_BOUND, prepare_delete(&sources, &cluster, &[]))
            .await
            .unwrap_or_else(|_| Err(format!("the plan was not read within {PLAN_BOUND:?}")))
            .map(|p| (p.plan, p.warnings));
        send(
            &app,
            ActionUpdate::DeletePlanned {
                cluster,
                plan: read,
            },
        )
        .await;
    });
}

/// Runs an approved delete in its own task: its notes come back as `ActionUpdate::Line`, its
/// end as `ActionUpdate::Finished`, and the dispatcher records how it ended.
pub(super) fn run(
    console: &Console,
    approved: ApprovedAction,
    (plan, acks): (DeletePlan, Vec<String>),
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let state = &console.state;
    let steps = state
        .actions
        .context_files
        .clone()
        .ok_or_else(|| "no talosconfig and kubeconfig file to remove the contexts from".to_string())
        .and_then(|files| {
            ProviderDelete::for_plan(
                &plan,
                &state.provision.config,
                &state.provision.one_env,
                files,
            )
        });
    let dispatcher = console.dispatcher.clone();
    let state_dir = console.paths.state_dir.clone();
    let app = app_tx.clone();
    tokio::spawn(async move {
        let (lines, mut rx) = mpsc::unbounded_channel::<String>();
        let forward = app.clone();
        let forwarder = tokio::spawn(async move {
            while let Some(line) = rx.recv().await {
                send(&forward, ActionUpdate::Line(line)).await;
            }
        });
        let result = match steps {
            Ok(world) => {
                let events = move |event: OperationEvent| {
                    let _ = lines.send(event.text());
                };
                let mut operation = ClusterDelete::new(plan, world, (POLL, GONE_BOUND));
                let runner = Runner {
                    approved: &approved,
                    dispatcher: &dispatcher,
                    state_dir: &state_dir,
                    acks: &acks,
                    cancel: CancelSignal::never(),
                    events: &events,
                };
                crate::operation::run(&mut operation, runner).await
            }
            Err(e) => {
                drop(lines);
                if let Err(audit) = dispatcher.finished(&approved, Err(e.clone())) {
                    tracing::warn!("{audit}");
                }
                Err(e)
            }
        };
        let _ = forwarder.await;
        super::run_actions::report_end(result, &app).await;
    });
}
