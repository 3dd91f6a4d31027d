//! Per-node machine events: a bounded ring buffer cleared on every boot (as machined's is), the
//! `talos/runtime/machine.*` payloads, and the server side of `MachineService.Events` with
//! tail_events / tail_id / tail_seconds / with_actor_id and EOF when the node reboots.
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use prost::Message;
use tokio::sync::{mpsc, watch};
use tonic::Status;

use super::clock::event_id;
use super::state::MachineStage;
use taloscope_proto::common::Metadata;
use taloscope_proto::machine::{
    Event, EventsRequest, MachineStatusEvent, PhaseEvent, SequenceEvent, ServiceHealth,
    ServiceStateEvent, TaskEvent, machine_status_event, phase_event, sequence_event,
    service_state_event, task_event,
};

/// How many events one boot keeps (older ones fall off).
const CAPACITY: usize = 1000;

/// One buffered event.
pub(crate) struct StoredEvent {
    pub id: String,
    pub actor_id: String,
    pub at: SystemTime,
    pub data: prost_types::Any,
}

struct LogInner {
    /// Boot the buffer belongs to; a new boot starts a new epoch.
    epoch: u64,
    /// machined stopped: streams of this epoch end.
    closed: bool,
    /// Sequence number of `events[0]`.
    first_seq: u64,
    events: VecDeque<Arc<StoredEvent>>,
}

/// A node's event buffer plus a wake-up for live streams.
pub(crate) struct EventLog {
    inner: Mutex<LogInner>,
    notify: watch::Sender<u64>,
}

impl EventLog {
    pub fn new() -> EventLog {
        EventLog {
            inner: Mutex::new(LogInner {
                epoch: 0,
                closed: false,
                first_seq: 0,
                events: VecDeque::new(),
            }),
            notify: watch::channel(0).0,
        }
    }

    fn lock(&self) -> MutexGuard<'_, LogInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wake(&self) {
        self.notify.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Appends an event to the current boot's buffer.
    pub fn push(&self, actor_id: &str, data: prost_types::Any) {
        {
            let mut inner = self.lock();
            if inner.events.len() >= CAPACITY {
                inner.events.pop_front();
                inner.first_seq += 1;
            }
            inner.events.push_back(Arc::new(StoredEvent {
                id: event_id(),
                actor_id: actor_id.to_string(),
                at: SystemTime::now(),
                data,
            }));
        }
        self.wake();
    }

    /// machined stops: every open stream ends with EOF.
    pub fn close(&self) {
        self.lock().closed = true;
        self.wake();
    }

    /// A new boot: an empty buffer, open for streams.
    pub fn reset(&self) {
        {
            let mut inner = self.lock();
            inner.epoch += 1;
            inner.closed = false;
            inner.first_seq = 0;
            inner.events.clear();
        }
        self.wake();
    }

    /// Events of the current boot, oldest first.
    #[cfg(test)]
    pub fn snapshot(&self) -> Vec<Arc<StoredEvent>> {
        self.lock().events.iter().cloned().collect()
    }
}

fn any(name: &str, msg: &impl Message) -> prost_types::Any {
    prost_types::Any {
        type_url: format!("talos/runtime/machine.{name}"),
        value: msg.encode_to_vec(),
    }
}

pub(crate) fn sequence(name: &str, action: sequence_event::Action) -> prost_types::Any {
    any(
        "SequenceEvent",
        &SequenceEvent {
            sequence: name.into(),
            action: action as i32,
            error: None,
        },
    )
}

pub(crate) fn phase(name: &str, action: phase_event::Action) -> prost_types::Any {
    any(
        "PhaseEvent",
        &PhaseEvent {
            phase: name.into(),
            action: action as i32,
        },
    )
}

pub(crate) fn task(name: &str, action: task_event::Action) -> prost_types::Any {
    any(
        "TaskEvent",
        &TaskEvent {
            task: name.into(),
            action: action as i32,
        },
    )
}

pub(crate) fn service(name: &str, action: service_state_event::Action) -> prost_types::Any {
    let running = action == service_state_event::Action::Running;
    any(
        "ServiceStateEvent",
        &ServiceStateEvent {
            service: name.into(),
            action: action as i32,
            message: if running {
                "Health check successful".into()
            } else {
                String::new()
            },
            health: Some(ServiceHealth {
                unknown: !running,
                healthy: running,
                last_message: String::new(),
                last_change: None,
            }),
        },
    )
}

/// The unmet readiness conditions Talos reports while a node is not ready.
pub(crate) fn unmet_conditions(
    stage: MachineStage,
    ready: bool,
) -> Vec<(&'static str, &'static str)> {
    match (stage, ready) {
        (_, true) => vec![],
        (MachineStage::Booting, false) => vec![
            ("services", "service \"kubelet\" not running"),
            ("nodeReady", "node is not ready"),
        ],
        _ => vec![],
    }
}

pub(crate) fn machine_status(stage: MachineStage, ready: bool) -> prost_types::Any {
    use machine_status_event::machine_status::UnmetCondition;
    any(
        "MachineStatusEvent",
        &MachineStatusEvent {
            stage: stage as i32,
            status: Some(machine_status_event::MachineStatus {
                ready,
                unmet_conditions: unmet_conditions(stage, ready)
                    .into_iter()
                    .map(|(name, reason)| UnmetCondition {
                        name: name.into(),
                        reason: reason.into(),
                    })
                    .collect(),
            }),
        },
    )
}

fn to_event(e: &StoredEvent, metadata: &Option<Metadata>) -> Event {
    Event {
        metadata: metadata.clone(),
        data: Some(e.data.clone()),
        id: e.id.clone(),
        actor_id: e.actor_id.clone(),
    }
}

/// Which buffered events a new stream starts with.
fn backlog(events: &[Arc<StoredEvent>], req: &EventsRequest) -> Vec<Arc<StoredEvent>> {
    let start = if !req.tail_id.is_empty() {
        events
            .iter()
            .position(|e| e.id == req.tail_id)
            .map(|i| i + 1)
            .unwrap_or(0)
    } else if req.tail_seconds > 0 {
        let since = SystemTime::now() - Duration::from_secs(req.tail_seconds as u64);
        events
            .iter()
            .position(|e| e.at >= since)
            .unwrap_or(events.len())
    } else if req.tail_events < 0 {
        0
    } else {
        events.len().saturating_sub(req.tail_events as usize)
    };
    events[start..]
        .iter()
        .filter(|e| req.with_actor_id.is_empty() || e.actor_id == req.with_actor_id)
        .cloned()
        .collect()
}

/// Streams a node's events into `tx` until the node's machined stops, the boot changes, the
/// receiver goes away or `stop` fires (sim shutdown).
pub(crate) async fn stream_events(
    log: &EventLog,
    req: EventsRequest,
    metadata: Option<Metadata>,
    tx: mpsc::Sender<Result<Event, Status>>,
    mut stop: watch::Receiver<bool>,
) {
    let mut notify = log.notify.subscribe();
    let (epoch, mut next_seq, first) = {
        let inner = log.lock();
        if inner.closed {
            return;
        }
        let all: Vec<_> = inner.events.iter().cloned().collect();
        let first = backlog(&all, &req);
        (inner.epoch, inner.first_seq + all.len() as u64, first)
    };
    // The "hello" event Talos sends before anything else.
    let hello = Event {
        metadata: metadata.clone(),
        ..Event::default()
    };
    if tx.send(Ok(hello)).await.is_err() {
        return;
    }
    for e in first {
        if tx.send(Ok(to_event(&e, &metadata))).await.is_err() {
            return;
        }
    }
    loop {
        let (fresh, ended) = {
            let inner = log.lock();
            if inner.epoch != epoch {
                (Vec::new(), true)
            } else {
                let skip = next_seq.saturating_sub(inner.first_seq) as usize;
                let fresh: Vec<_> = inner.events.iter().skip(skip).cloned().collect();
                next_seq = inner.first_seq + inner.events.len() as u64;
                (fresh, inner.closed)
            }
        };
        for e in fresh {
            if !req.with_actor_id.is_empty() && e.actor_id != req.with_actor_id {
                continue;
            }
            if tx.send(Ok(to_event(&e, &metadata))).await.is_err() {
                return;
            }
        }
        if ended || *stop.borrow() {
            return;
        }
        tokio::select! {
            changed = notify.changed() => if changed.is_err() { return },
            _ = stop.changed() => return,
            _ = tx.closed() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backlog_honours_tail_options() {
        let log = EventLog::new();
        for i in 0..5 {
            let actor = if i % 2 == 0 { "a" } else { "b" };
            log.push(actor, phase("p", phase_event::Action::Start));
        }
        let all = log.snapshot();
        let req = |tail_events, tail_id: &str, actor: &str| EventsRequest {
            tail_events,
            tail_id: tail_id.into(),
            tail_seconds: 0,
            with_actor_id: actor.into(),
        };
        assert_eq!(backlog(&all, &req(-1, "", "")).len(), 5);
        assert_eq!(backlog(&all, &req(0, "", "")).len(), 0);
        assert_eq!(backlog(&all, &req(2, "", "")).len(), 2);
        assert_eq!(backlog(&all, &req(0, &all[2].id, "")).len(), 2);
        assert_eq!(backlog(&all, &req(-1, "", "a")).len(), 3);
        assert_eq!(backlog(&all, &req(0, "unknown-id", "")).len(), 5);
    }

    #[test]
    fn ring_buffer_is_bounded_and_reset_per_boot() {
        let log = EventLog::new();
        for _ in 0..(CAPACITY + 10) {
            log.push("", task("t", task_event::Action::Start));
        }
        assert_eq!(log.snapshot().len(), CAPACITY);
        log.reset();
        assert!(log.snapshot().is_empty());
    }

    #[test]
    fn payloads_use_talos_type_urls() {
        let a = machine_status(MachineStage::Running, true);
        assert_eq!(a.type_url, "talos/runtime/machine.MachineStatusEvent");
        let decoded = MachineStatusEvent::decode(a.value.as_slice()).expect("decodes");
        assert_eq!(decoded.stage, 4);
    }
}
