//! Following one node for its detail view: its services every interval, its
//! Events stream with each machine event summarised in one line, and a fresh
//! probe of the node whenever its machine status changes. The watch is its own
//! task, stopped when the handle is dropped.
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::fleet::collect::{NodePlan, NodeProbe, probe_node};
use crate::fleet::live::{EVENTS_PER_NODE, FleetEvent};
use crate::fleet::round::pending_or;
use crate::fleet::status::{NodeRole, NodeSource};
use crate::talos::events::{ResumePoint, SequenceAction, StepAction};
use crate::talos::{EventsItem, EventsOptions, MachineEvent, TalosClient};

/// A running node watch; dropping it stops the task and its event stream.
pub(super) struct NodeWatch {
    task: JoinHandle<()>,
}

impl Drop for NodeWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts following `node` of `cluster`.
pub(super) fn watch_node(
    client: TalosClient,
    cluster: String,
    node: String,
    every: Duration,
    events: mpsc::Sender<FleetEvent>,
) -> NodeWatch {
    NodeWatch {
        task: tokio::spawn(follow(client, cluster, node, every, events)),
    }
}

async fn follow(
    client: TalosClient,
    cluster: String,
    node: String,
    every: Duration,
    events: mpsc::Sender<FleetEvent>,
) {
    tracing::debug!(cluster, node, "watching node");
    let mut stream = client.events(
        &node,
        EventsOptions {
            // The detail view shows recent history at once.
            tail_events: i32::try_from(EVENTS_PER_NODE).unwrap_or(50),
            backoff_min: Duration::from_millis(200),
            backoff_max: Duration::from_secs(2),
            give_up_after: None,
            ..Default::default()
        },
    );
    let mut stream_open = true;
    let mut services_tick = tokio::time::interval(every.max(Duration::from_millis(10)));
    services_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // A stage change re-probes the node at once, so its row shows the new
    // stage within a second; changes during a probe are coalesced into one more.
    let plan = NodePlan {
        address: node.clone(),
        role: NodeRole::Unknown,
        hostname: None,
        // The model keeps the source the round's node list gave.
        source: NodeSource::Talosconfig,
        unknown_to_etcd_and_kubernetes: false,
    };
    let mut probe: Option<BoxFuture<'static, NodeProbe>> = None;
    let mut stage_changed = false;
    loop {
        if stage_changed && probe.is_none() {
            stage_changed = false;
            let (client, plan) = (client.clone(), plan.clone());
            probe = Some(Box::pin(async move { probe_node(&client, &plan).await }));
        }
        let sent = tokio::select! {
            probed = pending_or(probe.as_mut()), if probe.is_some() => {
                probe = None;
                events.send(FleetEvent::Node {
                    cluster: cluster.clone(),
                    node: probed.status,
                    at: Instant::now(),
                }).await
            }
            _ = services_tick.tick() => {
                let services = client.service_list(&node).await.map_err(|e| e.to_string());
                events.send(FleetEvent::NodeServices {
                    cluster: cluster.clone(),
                    node: node.clone(),
                    services,
                    at: Instant::now(),
                }).await
            }
            item = stream.next(), if stream_open => {
                let Some(item) = item else {
                    stream_open = false;
                    continue;
                };
                if let EventsItem::Event(e) = &item
                    && matches!(e.event, MachineEvent::MachineStatus(_))
                {
                    stage_changed = true;
                }
                // The node's own time of the event, so reopening the detail shows the same
                // times; what the stream itself says (lost, resumed) is stamped on arrival.
                let (unix, id) = match &item {
                    EventsItem::Event(e) => (e.unix_time(), Some(e.id.clone())),
                    _ => (None, None),
                };
                events.send(FleetEvent::NodeEvent {
                    cluster: cluster.clone(),
                    node: node.clone(),
                    summary: summarize_item(&item),
                    at: Instant::now(),
                    unix: unix.unwrap_or_else(crate::clock::unix_now),
                    id,
                }).await
            }
        };
        if sent.is_err() {
            return;
        }
    }
}

fn summarize_item(item: &EventsItem) -> String {
    match item {
        EventsItem::Event(e) => summarize_event(&e.event),
        EventsItem::Disconnected { error, .. } => format!("event stream lost: {error}"),
        EventsItem::Resumed {
            from: ResumePoint::AfterId(_),
            ..
        } => "event stream resumed".into(),
        EventsItem::Resumed {
            from: ResumePoint::WholeBuffer,
            ..
        } => "event stream resumed (new boot)".into(),
    }
}

fn step(action: StepAction) -> &'static str {
    match action {
        StepAction::Start => "START",
        StepAction::Stop => "STOP",
    }
}

/// One machine event as one line: `sequence boot STOP`, `service etcd
/// RUNNING healthy: Health check successful`, `stage running ready=true`.
pub fn summarize_event(event: &MachineEvent) -> String {
    match event {
        MachineEvent::Sequence {
            sequence,
            action,
            error,
        } => {
            let action = match action {
                SequenceAction::Start => "START",
                SequenceAction::Stop => "STOP",
                SequenceAction::Noop => "NOOP",
            };
            match error {
                Some(e) => format!("sequence {sequence} {action} failed: {e}"),
                None => format!("sequence {sequence} {action}"),
            }
        }
        MachineEvent::Phase { phase, action } => format!("phase {phase} {}", step(*action)),
        MachineEvent::Task { task, action } => format!("task {task} {}", step(*action)),
        MachineEvent::ServiceState {
            service,
            state,
            message,
            healthy,
        } => {
            let mut line = format!("service {service} {}", state.to_ascii_uppercase());
            match healthy {
                Some(true) => line.push_str(" healthy"),
                Some(false) => line.push_str(" unhealthy"),
                None => {}
            }
            if !message.is_empty() {
                line.push_str(": ");
                line.push_str(message.lines().next().unwrap_or_default());
            }
            line
        }
        MachineEvent::MachineStatus(s) => {
            let mut line = format!("stage {} ready={}", s.stage, s.ready);
            if !s.unmet_conditions.is_empty() {
                let unmet: Vec<&str> = s.unmet_conditions.iter().map(|c| c.name.as_str()).collect();
                line.push_str(" unmet: ");
                line.push_str(&unmet.join(", "));
            }
            line
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::talos::{MachineStage, MachineStatus, UnmetCondition};

    #[test]
    fn events_read_as_one_line_each() {
        let seq = MachineEvent::Sequence {
            sequence: "boot".into(),
            action: SequenceAction::Stop,
            error: None,
        };
        assert_eq!(summarize_event(&seq), "sequence boot STOP");
        let failed = MachineEvent::Sequence {
            sequence: "upgrade".into(),
            action: SequenceAction::Stop,
            error: Some("etcd is unhealthy".into()),
        };
        assert_eq!(
            summarize_event(&failed),
            "sequence upgrade STOP failed: etcd is unhealthy"
        );
        let svc = MachineEvent::ServiceState {
            service: "etcd".into(),
            state: "Running".into(),
            message: String::new(),
            healthy: None,
        };
        assert_eq!(summarize_event(&svc), "service etcd RUNNING");
        let svc = MachineEvent::ServiceState {
            service: "kubelet".into(),
            state: "Running".into(),
            message: "Health check successful\nmore".into(),
            healthy: Some(true),
        };
        assert_eq!(
            summarize_event(&svc),
            "service kubelet RUNNING healthy: Health check successful"
        );
        let task = MachineEvent::Task {
            task: "stopAllServices".into(),
            action: StepAction::Start,
        };
        assert_eq!(summarize_event(&task), "task stopAllServices START");
    }

    #[test]
    fn machine_status_names_unmet_conditions() {
        let ready = MachineEvent::MachineStatus(MachineStatus {
            stage: MachineStage::Running,
            ready: true,
            unmet_conditions: vec![],
        });
        assert_eq!(summarize_event(&ready), "stage running ready=true");
        let booting = MachineEvent::MachineStatus(MachineStatus {
            stage: MachineStage::Booting,
            ready: false,
            unmet_conditions: vec![
                UnmetCondition {
                    name: "time".into(),
                    reason: "not synced".into(),
                },
                UnmetCondition {
                    name: "services".into(),
                    reason: "etcd".into(),
                },
            ],
        });
        assert_eq!(
            summarize_event(&booting),
            "stage booting ready=false unmet: time, services"
        );
    }
}
