//! Runs the health checks the checklist screen asked for: the headless command's own loop
//! (`fleet::health_check::follow_health_check`) on the route the app chose, each progress
//! message sent on to the checklist screen as a `HealthReport` stamped with when it came.
use std::time::Instant;

use tokio::sync::mpsc;

use crate::app::action::AppEvent;
use crate::fleet::health_check::{DEFAULT_WAIT, follow_health_check};
use crate::talos::{ClientOptions, TalosClient};
use crate::views::health::{HealthNews, HealthReport, HealthRun, NAME};

/// Starts the run on its own task; its reports end with `Finished`.
pub(super) fn start_health_check(run: HealthRun, app_tx: &mpsc::Sender<AppEvent>) {
    let tx = app_tx.clone();
    tokio::spawn(async move {
        let report = |news| HealthReport {
            cluster: run.cluster.name.clone(),
            run: run.run,
            at: Instant::now(),
            news,
        };
        if !super::tell_screen(&tx, NAME, report(HealthNews::Started)).await {
            return;
        }
        let ended = match &run.cluster.talos {
            None => Some(format!("cluster {} has no Talos context", run.cluster.name)),
            Some(ctx) => match TalosClient::new(ctx, ClientOptions::default()) {
                Err(e) => Some(e.to_string()),
                Ok(talos) => follow(&talos, &run, &tx, &report).await,
            },
        };
        super::tell_screen(&tx, NAME, report(HealthNews::Finished(ended))).await;
    });
}

/// Follows the stream, forwarding each message as it comes; returns how it ended.
async fn follow(
    talos: &TalosClient,
    run: &HealthRun,
    tx: &mpsc::Sender<AppEvent>,
    report: &impl Fn(HealthNews) -> HealthReport,
) -> Option<String> {
    // The stream's callback cannot wait for the app channel; this queue holds what the node
    // sent (one message per check change) until it is forwarded.
    let (queue, mut queued) = mpsc::unbounded_channel();
    let checks = async move {
        let ended = follow_health_check(talos, &run.route.address, DEFAULT_WAIT, |progress| {
            queue.send(progress).map_err(|_| ())
        })
        .await;
        ended.unwrap_or(None)
    };
    let forward = async {
        while let Some(progress) = queued.recv().await {
            if !super::tell_screen(tx, NAME, report(HealthNews::Progress(progress))).await {
                break;
            }
        }
    };
    let (ended, ()) = tokio::join!(checks, forward);
    ended
}
