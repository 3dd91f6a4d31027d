//! The log screen's IO (its `LogTask`s): one task per node following its log through the
//! Talos client (the same `TalosClient::logs` the headless `logs` and `dmesg` use), reporting
//! lines in batches to the screen as its news, opening a stream that ended again after a
//! bounded backoff. Stopping the view aborts its tasks; the tasks never touch UI state.
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::mpsc;

use super::run::Console;
use crate::app::action::{Action, AppEvent};
use crate::app::message::Message;
use crate::clock::unix_now;
use crate::node_resources::NodeIdentity;
use crate::talos::{LogOptions, LogSource, TalosClient};
use crate::views::logs::{LogEvent, LogReport, LogTask, NAME};

/// Lines sent to the app in one report at most (a burst such as the tail comes in a few).
const BATCH: usize = 256;
/// The wait before opening an ended stream again, doubled each time up to [`MAX_BACKOFF`],
/// and back to this after a stream that delivered lines.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Starts or stops the streams of a view.
pub(super) fn perform(
    console: &mut Console,
    task: LogTask,
    app_tx: &mpsc::Sender<AppEvent>,
) -> Option<Action> {
    match task {
        LogTask::Stop(view) => {
            if console.logs.view == Some(view) {
                console.logs.stop();
            }
            None
        }
        LogTask::Start(request) => {
            console.logs.stop();
            let what = "following logs";
            let (_, talos) = match super::talos_of(&console.state, &request.cluster, what) {
                Ok(found) => found,
                Err(why) => return Some(Action::Notify(Message::error(why))),
            };
            console.logs.view = Some(request.view);
            for (index, node) in request.nodes.iter().enumerate() {
                let stream = NodeStream {
                    talos: talos.clone(),
                    view: request.view,
                    index,
                    source: request.subject.source_for(&node.name),
                    node: node.clone(),
                    tail: request.tail,
                    app: app_tx.clone(),
                };
                console.logs.tasks.push(tokio::spawn(stream.follow()));
            }
            None
        }
    }
}

/// One node's log followed for one view.
struct NodeStream {
    talos: TalosClient,
    view: u64,
    index: usize,
    node: NodeIdentity,
    source: LogSource,
    tail: u32,
    app: mpsc::Sender<AppEvent>,
}

impl NodeStream {
    /// Follows until aborted: the tail first, then (after an end) only new lines.
    async fn follow(self) {
        let mut backoff = FIRST_BACKOFF;
        let mut first = true;
        loop {
            let options = LogOptions {
                tail: Some(if first { self.tail } else { 0 }),
                follow: true,
            };
            let (delivered, why) = self.read(options, !first).await;
            if delivered {
                backoff = FIRST_BACKOFF;
            }
            let ended = LogReport::Ended {
                why,
                retry_in: backoff.as_secs(),
            };
            if !self.report(ended).await {
                return;
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
            first = false;
        }
    }

    /// Reads one stream to its end: whether it delivered lines, and why it ended.
    async fn read(&self, options: LogOptions, again: bool) -> (bool, String) {
        let stream = match self
            .talos
            .logs(&self.node.address, &self.source, options)
            .await
        {
            Ok(stream) => stream,
            Err(e) => return (false, e.to_string()),
        };
        if again && !self.report(LogReport::Reconnected).await {
            return (false, "the view closed".into());
        }
        let mut batches = stream.ready_chunks(BATCH);
        let mut delivered = false;
        while let Some(batch) = batches.next().await {
            let mut lines = Vec::with_capacity(batch.len());
            let mut failed = None;
            for item in batch {
                match item {
                    Ok(line) => lines.push(line.text),
                    Err(e) => failed = Some(e.to_string()),
                }
            }
            if !lines.is_empty() {
                delivered = true;
                let received = unix_now();
                if !self.report(LogReport::Lines { lines, received }).await {
                    return (delivered, "the view closed".into());
                }
            }
            if let Some(why) = failed {
                return (delivered, why);
            }
        }
        (delivered, "the node closed the stream".into())
    }

    /// Sends a report; false once the console is gone.
    async fn report(&self, report: LogReport) -> bool {
        let event = LogEvent {
            view: self.view,
            node: self.index,
            report,
        };
        super::tell_screen(&self.app, NAME, event).await
    }
}
