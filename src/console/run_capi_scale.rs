//! A CAPI scale for the event loop: its plan read off the UI thread with `prepare_scale`
//! (the function `taloscope scale` calls), and an approved scale run by `run_scale` (the
//! command's runner), its events forwarded to the app channel, its end audited.
use std::time::Duration;

use tokio::sync::mpsc;

use super::run::Console;
use crate::app::action::AppEvent;
use crate::app::actions::ActionUpdate;
use crate::app::capi_scale::{CapiScaleAsk, CapiScaleRun};
use crate::approval::ApprovedAction;
use crate::capi_scale::{ScaleOptions, ScaleSources, prepare_scale};
use crate::fleet::CollectOptions;
use crate::operation::scale::CapiScale;
use crate::operation::{CancelSignal, Runner};

/// Reading both sides for a plan.
const PLAN_BOUND: Duration = Duration::from_secs(60);
/// `taloscope scale`'s defaults: a poll every 2 s, 20 minutes in all, a 60 s Lease.
const OPTIONS: (Duration, Duration, Duration) = (
    Duration::from_secs(2),
    Duration::from_secs(1200),
    Duration::from_secs(60),
);

fn send(app: &mpsc::Sender<AppEvent>, update: ActionUpdate) -> impl Future<Output = ()> {
    let app = app.clone();
    async move {
        let _ = app.send(AppEvent::Action(Box::new(update))).await;
    }
}

/// What connecting to both sides of `cluster` needs, taken from the console's state.
fn connect(
    console: &Console,
    cluster: &str,
) -> Result<impl Future<Output = Result<ScaleSources, String>> + use<>, String> {
    let state = &console.state;
    let found = state
        .clusters
        .iter()
        .find(|c| c.name == cluster)
        .cloned()
        .ok_or_else(|| format!("cluster {cluster} is no longer discovered"))?;
    let owner = state
        .fleet
        .capi
        .owner(cluster)
        .cloned()
        .ok_or_else(|| format!("{cluster} is no longer owned by Cluster API"))?;
    let kubeconfig = state.provision.kubeconfig.clone().ok_or_else(|| {
        "no kubeconfig was read: the management cluster cannot be reached".to_string()
    })?;
    Ok(async move {
        ScaleSources::connect(&found, &owner, &kubeconfig, CollectOptions::default()).await
    })
}

/// Reads the plan of `ask`; it comes back as `ActionUpdate::CapiScalePlanned`.
pub(super) fn plan(console: &Console, ask: CapiScaleAsk, app_tx: &mpsc::Sender<AppEvent>) {
    let sources = connect(console, &ask.cluster);
    let me = console.state.identity.clone();
    let app = app_tx.clone();
    tokio::spawn(async move {
        let read = async {
            let sources = sources?.await?;
            prepare_scale(&sources, &ask.request, &me)
                .await
                .map_err(|e| e.to_string())
        };
        let read = tokio::time::timeout(PLAN_BOUND, read)
            .await
            .unwrap_or_else(|_| Err(format!("the plan was not read within {PLAN_BOUND:?}")));
        let cluster = ask.cluster;
        let read = Box::new(read);
        send(&app, ActionUpdate::CapiScalePlanned { cluster, read }).await;
    });
}

/// Runs an approved scale in its own task through the operation runner: its events come back
/// as `ActionUpdate::CapiScale`, its end as `ActionUpdate::Finished`; the runner keeps its
/// journal and audits how it ended.
pub(super) fn run(
    console: &Console,
    approved: ApprovedAction,
    run: CapiScaleRun,
    app_tx: &mpsc::Sender<AppEvent>,
) {
    let sources = connect(console, &run.plan.cluster);
    let dispatcher = console.dispatcher.clone();
    let state_dir = console.paths.state_dir.clone();
    let app = app_tx.clone();
    let (poll, timeout, lease_duration) = OPTIONS;
    let options = ScaleOptions {
        poll,
        timeout,
        lease_duration,
    };
    tokio::spawn(async move {
        let (events, mut rx) = mpsc::channel(64);
        let forward = app.clone();
        let forwarder = tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                send(&forward, ActionUpdate::CapiScale(event)).await;
            }
        });
        let connected = match sources {
            Ok(connecting) => connecting.await,
            Err(e) => Err(e),
        };
        let result = match connected {
            Ok(sources) => {
                let started = std::time::Instant::now();
                let mut scale = CapiScale::new(run.plan, sources, options, events);
                let runner = Runner {
                    approved: &approved,
                    dispatcher: &dispatcher,
                    state_dir: &state_dir,
                    acks: &run.acks,
                    cancel: CancelSignal::never(),
                    // The scale's own typed events carry its lines.
                    events: &|_| {},
                };
                let result = crate::operation::run(&mut scale, runner).await;
                let outcome = scale.outcome(result, started.elapsed().as_secs());
                drop(scale);
                let told = format!(
                    "{} ({} polls, {} s)",
                    outcome.message, outcome.polls, outcome.seconds
                );
                outcome.succeeded.then_some(told.clone()).ok_or(told)
            }
            Err(e) => {
                drop(events);
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
