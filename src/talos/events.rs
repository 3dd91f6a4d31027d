//! The `MachineService.Events` stream of one node as a tokio Stream of typed
//! machine events. It reconnects with bounded backoff, resumes after the last
//! event id, and replays the new boot's whole buffer after a reboot.
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use super::client::{MAX_MESSAGE_SIZE, Retry, TalosClient};
use super::error::TalosError;
use super::types::{MachineStage, MachineStatus};
use crate::proto::machine::{self as pb, machine_service_client::MachineServiceClient};

/// One thing that happened on a machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MachineEvent {
    /// A whole sequence (`boot`, `upgrade`, `reboot`, ...) started or stopped.
    Sequence {
        sequence: String,
        action: SequenceAction,
        /// Set when the sequence failed.
        error: Option<String>,
    },
    Phase {
        phase: String,
        action: StepAction,
    },
    Task {
        task: String,
        action: StepAction,
    },
    ServiceState {
        service: String,
        /// `Running`, `Waiting`, `Failed`, ...
        state: String,
        message: String,
        healthy: Option<bool>,
    },
    MachineStatus(MachineStatus),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SequenceAction {
    Noop,
    Start,
    Stop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepAction {
    Start,
    Stop,
}

/// A machine event with where and why it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeEvent {
    pub node: String,
    /// Time-sortable event id, used to resume.
    pub id: String,
    /// The action (upgrade, reboot) that caused it, if any.
    pub actor_id: String,
    pub event: MachineEvent,
}

impl NodeEvent {
    /// When it happened on the node, seconds since the Unix epoch: the event id is an xid
    /// whose first four bytes are its creation time (siderolabs/talos
    /// `internal/app/machined/pkg/runtime/events.go`: `ID xid.ID`, sent as `ID.String()`;
    /// rs/xid: 12 bytes, a big-endian Unix time first, written in 20 base32hex digits).
    /// `None` for an id that is not one.
    pub fn unix_time(&self) -> Option<u64> {
        xid_unix_seconds(&self.id)
    }
}

/// The creation time of an xid in its 20-character base32hex form (`0-9a-v`).
pub fn xid_unix_seconds(id: &str) -> Option<u64> {
    if id.len() != 20 {
        return None;
    }
    let mut bits: u128 = 0;
    for c in id.bytes() {
        let digit = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'v' => c - b'a' + 10,
            _ => return None,
        };
        bits = (bits << 5) | u128::from(digit);
    }
    // 100 bits: the 96 of the id, then 4 of padding.
    let raw = bits >> 4;
    Some(((raw >> 64) & 0xffff_ffff) as u64)
}

/// What the event stream yields.
#[derive(Debug, Clone)]
pub enum EventsItem {
    Event(NodeEvent),
    /// The stream broke (EOF on reboot, node unreachable); it will retry unless
    /// the error is final (permission, TLS) or the outage outlasted `give_up_after`.
    Disconnected {
        node: String,
        error: TalosError,
    },
    /// The stream is back.
    Resumed {
        node: String,
        from: ResumePoint,
    },
}

/// Where a reconnected stream picked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumePoint {
    /// Right after the last event seen.
    AfterId(String),
    /// The node's whole event buffer (after a reboot the old id means nothing).
    WholeBuffer,
}

#[derive(Debug, Clone)]
pub struct EventsOptions {
    /// Past events to replay on the first connect (0: only new ones; -1: all buffered).
    pub tail_events: i32,
    /// Only events caused by this actor (server-side filter).
    pub with_actor_id: Option<String>,
    pub backoff_min: Duration,
    pub backoff_max: Duration,
    /// End the stream once the node has been unreachable this long (None: never).
    pub give_up_after: Option<Duration>,
}

impl Default for EventsOptions {
    fn default() -> Self {
        EventsOptions {
            tail_events: 0,
            with_actor_id: None,
            backoff_min: Duration::from_millis(200),
            backoff_max: Duration::from_secs(5),
            give_up_after: None,
        }
    }
}

/// The typed, reconnecting event stream of one node. Dropping it stops the task.
pub type EventStream = ReceiverStream<EventsItem>;

/// Decodes one wire event. `None` for the empty "hello" event and for event
/// types this client does not know (skipped like talosctl does).
pub fn decode_event(node: &str, ev: &pb::Event) -> Option<NodeEvent> {
    use prost::Message;
    let data = ev.data.as_ref()?;
    let kind = data.type_url.rsplit('/').next().unwrap_or("");
    let bytes = data.value.as_slice();
    let event = match kind {
        "machine.SequenceEvent" => {
            let e = pb::SequenceEvent::decode(bytes).ok()?;
            MachineEvent::Sequence {
                action: match pb::sequence_event::Action::try_from(e.action) {
                    Ok(pb::sequence_event::Action::Start) => SequenceAction::Start,
                    Ok(pb::sequence_event::Action::Stop) => SequenceAction::Stop,
                    _ => SequenceAction::Noop,
                },
                error: e.error.map(|e| e.message).filter(|m| !m.is_empty()),
                sequence: e.sequence,
            }
        }
        "machine.PhaseEvent" => {
            let e = pb::PhaseEvent::decode(bytes).ok()?;
            MachineEvent::Phase {
                action: step(e.action),
                phase: e.phase,
            }
        }
        "machine.TaskEvent" => {
            let e = pb::TaskEvent::decode(bytes).ok()?;
            MachineEvent::Task {
                action: step(e.action),
                task: e.task,
            }
        }
        "machine.ServiceStateEvent" => {
            let e = pb::ServiceStateEvent::decode(bytes).ok()?;
            let state = pb::service_state_event::Action::try_from(e.action)
                .map(|a| title_case(a.as_str_name()))
                .unwrap_or_else(|_| "Unknown".into());
            MachineEvent::ServiceState {
                service: e.service,
                state,
                message: e.message,
                healthy: e.health.and_then(|h| (!h.unknown).then_some(h.healthy)),
            }
        }
        "machine.MachineStatusEvent" => {
            MachineEvent::MachineStatus(pb::MachineStatusEvent::decode(bytes).ok()?.into())
        }
        _ => return None,
    };
    Some(NodeEvent {
        node: node.to_string(),
        id: ev.id.clone(),
        actor_id: ev.actor_id.clone(),
        event,
    })
}

fn step(action: i32) -> StepAction {
    if action == 1 {
        StepAction::Stop
    } else {
        StepAction::Start
    }
}

fn title_case(s: &str) -> String {
    let lower = s.to_ascii_lowercase();
    let mut chars = lower.chars();
    match chars.next() {
        Some(c) => c.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// Whether an event announces that the node is going away (so the next
/// connection lands in a new boot whose buffer does not know our last id).
fn announces_reboot(event: &MachineEvent) -> bool {
    match event {
        MachineEvent::Sequence {
            sequence, action, ..
        } => {
            *action == SequenceAction::Start
                && matches!(
                    sequence.as_str(),
                    "reboot" | "shutdown" | "upgrade" | "stageUpgrade" | "reset"
                )
        }
        MachineEvent::Task { task, .. } => task == "stopAllServices",
        MachineEvent::MachineStatus(s) => matches!(
            s.stage,
            MachineStage::Rebooting | MachineStage::ShuttingDown | MachineStage::Upgrading
        ),
        _ => false,
    }
}

impl TalosClient {
    /// Opens the reconnecting event stream of one node. Needs a tokio runtime.
    pub fn events(&self, node: &str, options: EventsOptions) -> EventStream {
        let (tx, rx) = mpsc::channel(256);
        let client = self.clone();
        let node = node.to_string();
        tokio::spawn(async move { run_events(client, node, options, tx).await });
        ReceiverStream::new(rx)
    }
}

/// How the next connection asks for events.
enum Tail {
    First,
    After(String),
    WholeBuffer,
}

/// The receiver went away, or the node stayed unreachable past `give_up_after`: stop following.
struct Ended;

/// One node's event stream followed across reconnects: where the next connection resumes, the
/// backoff before it, and the outage being reported.
struct EventsFollow {
    client: TalosClient,
    node: String,
    options: EventsOptions,
    tx: mpsc::Sender<EventsItem>,
    tail: Tail,
    backoff: Duration,
    /// When the node became unreachable; `None` while connected.
    down_since: Option<Instant>,
    /// The outage was reported (once per outage).
    reported_down: bool,
}

const EVENTS_CALL: &str = "Events";

async fn run_events(
    client: TalosClient,
    node: String,
    options: EventsOptions,
    tx: mpsc::Sender<EventsItem>,
) {
    let mut follow = EventsFollow {
        client,
        node,
        backoff: options.backoff_min,
        options,
        tx,
        tail: Tail::First,
        down_since: None,
        reported_down: false,
    };
    loop {
        let error = match follow.open().await {
            Ok(stream) => match follow.read(stream).await {
                Ok(error) => error,
                Err(Ended) => return,
            },
            Err(error) if follow.tail_unknown(&error) => {
                // The node does not know our last id: it rebooted. Replay its buffer.
                follow.tail = Tail::WholeBuffer;
                continue;
            }
            Err(error) if is_fatal(&error) => {
                let _ = follow.tx.send(follow.disconnected(error)).await;
                return;
            }
            Err(error) => error,
        };
        if let Err(Ended) = follow.back_off(error).await {
            return;
        }
    }
}

/// An error no reconnect mends: bad credentials or endpoints, a refusal, an answer that does
/// not decode.
fn is_fatal(error: &TalosError) -> bool {
    matches!(
        error,
        TalosError::PermissionDenied { .. }
            | TalosError::Tls { .. }
            | TalosError::NoEndpoints { .. }
            | TalosError::Rpc { .. }
            | TalosError::Decode { .. }
    )
}

impl EventsFollow {
    fn request(&self) -> pb::EventsRequest {
        pb::EventsRequest {
            tail_events: match self.tail {
                Tail::First => self.options.tail_events,
                Tail::After(_) => 0,
                Tail::WholeBuffer => -1,
            },
            tail_id: match &self.tail {
                Tail::After(id) => id.clone(),
                _ => String::new(),
            },
            tail_seconds: 0,
            with_actor_id: self.options.with_actor_id.clone().unwrap_or_default(),
        }
    }

    /// Opens the stream where the last connection left off.
    async fn open(&self) -> Result<tonic::Streaming<pb::Event>, TalosError> {
        let req = self.request();
        let (client, node) = (&self.client, &self.node);
        client
            .open_stream(node, EVENTS_CALL, Retry::Idempotent, |ch| {
                let req = req.clone();
                async move {
                    let r = client
                        .request(node, EVENTS_CALL, req, None)
                        .map_err(super::calls::to_status)?;
                    MachineServiceClient::new(ch)
                        .max_decoding_message_size(MAX_MESSAGE_SIZE)
                        .events(r)
                        .await
                }
            })
            .await
    }

    /// The node refused to resume after our last id (it rebooted and no longer has it).
    fn tail_unknown(&self, error: &TalosError) -> bool {
        matches!(self.tail, Tail::After(_))
            && matches!(
                error,
                TalosError::Rpc {
                    code: tonic::Code::InvalidArgument
                        | tonic::Code::NotFound
                        | tonic::Code::OutOfRange
                        | tonic::Code::FailedPrecondition,
                    ..
                }
            )
    }

    fn disconnected(&self, error: TalosError) -> EventsItem {
        EventsItem::Disconnected {
            node: self.node.clone(),
            error,
        }
    }

    /// A connected stream: says where it resumed, forwards its events until it breaks (the
    /// error) and sets where the next connection resumes: after the last id, or the whole
    /// buffer when the node announced a reboot.
    async fn read(&mut self, mut stream: tonic::Streaming<pb::Event>) -> Result<TalosError, Ended> {
        self.resumed().await?;
        self.down_since = None;
        self.reported_down = false;
        self.backoff = self.options.backoff_min;
        let mut going_away = false;
        let mut last_id = match &self.tail {
            Tail::After(id) => Some(id.clone()),
            _ => None,
        };
        let error = loop {
            let msg = tokio::select! {
                _ = self.tx.closed() => return Err(Ended),
                msg = stream.message() => msg,
            };
            match msg {
                Ok(Some(ev)) => {
                    if !ev.id.is_empty() {
                        last_id = Some(ev.id.clone());
                    }
                    let Some(event) = decode_event(&self.node, &ev) else {
                        continue;
                    };
                    going_away |= announces_reboot(&event.event);
                    self.tx
                        .send(EventsItem::Event(event))
                        .await
                        .map_err(|_| Ended)?;
                }
                Ok(None) => {
                    break TalosError::Unreachable {
                        node: self.node.clone(),
                        reason: "the event stream ended".into(),
                    };
                }
                Err(status) => break TalosError::from_status(&self.node, EVENTS_CALL, &status),
            }
        };
        self.tail = match last_id {
            Some(id) if !going_away => Tail::After(id),
            _ => Tail::WholeBuffer,
        };
        Ok(error)
    }

    /// After a reconnect: where the stream picked up again.
    async fn resumed(&self) -> Result<(), Ended> {
        let from = match &self.tail {
            Tail::First => return Ok(()),
            Tail::After(id) => ResumePoint::AfterId(id.clone()),
            Tail::WholeBuffer => ResumePoint::WholeBuffer,
        };
        let item = EventsItem::Resumed {
            node: self.node.clone(),
            from,
        };
        self.tx.send(item).await.map_err(|_| Ended)
    }

    /// The node is unreachable: said once per outage, then a wait that doubles up to
    /// `backoff_max`; past `give_up_after` the stream ends.
    async fn back_off(&mut self, error: TalosError) -> Result<(), Ended> {
        let since = *self.down_since.get_or_insert_with(Instant::now);
        if !self.reported_down {
            self.reported_down = true;
            let item = self.disconnected(error);
            self.tx.send(item).await.map_err(|_| Ended)?;
        }
        if self
            .options
            .give_up_after
            .is_some_and(|limit| since.elapsed() >= limit)
        {
            return Err(Ended);
        }
        tokio::select! {
            _ = self.tx.closed() => return Err(Ended),
            _ = tokio::time::sleep(self.backoff) => {}
        }
        self.backoff = (self.backoff * 2).min(self.options.backoff_max);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_id_says_when_it_happened() {
        // rs/xid's test vector: ID{0x4d, 0x88, 0xe1, 0x5b, ...} is "9m4e2mr0ui3e8a215n4g",
        // made at 0x4d88e15b = 1300816219.
        assert_eq!(
            xid_unix_seconds("9m4e2mr0ui3e8a215n4g"),
            Some(1_300_816_219)
        );
        assert_eq!(xid_unix_seconds("not-an-xid"), None);
        assert_eq!(xid_unix_seconds("9M4E2MR0UI3E8A215N4G"), None);
        assert_eq!(xid_unix_seconds("zzzzzzzzzzzzzzzzzzzz"), None);
    }
    use prost::Message;

    fn wire(type_url: &str, value: Vec<u8>, id: &str) -> pb::Event {
        pb::Event {
            metadata: None,
            data: Some(prost_types::Any {
                type_url: type_url.into(),
                value,
            }),
            id: id.into(),
            actor_id: "actor".into(),
        }
    }

    #[test]
    fn hello_and_unknown_events_are_skipped() {
        let hello = pb::Event::default();
        assert_eq!(decode_event("n", &hello), None);
        let unknown = wire("talos/runtime/machine.RestartEvent", vec![], "1");
        assert_eq!(decode_event("n", &unknown), None);
    }

    #[test]
    fn machine_status_event_decodes() {
        let status = pb::MachineStatusEvent {
            stage: 4,
            status: Some(pb::machine_status_event::MachineStatus {
                ready: false,
                unmet_conditions: vec![pb::machine_status_event::machine_status::UnmetCondition {
                    name: "services".into(),
                    reason: "etcd not healthy".into(),
                }],
            }),
        };
        let ev = wire(
            "talos/runtime/machine.MachineStatusEvent",
            status.encode_to_vec(),
            "c1",
        );
        let got = decode_event("10.0.0.2", &ev).expect("decoded");
        assert_eq!(got.id, "c1");
        assert_eq!(got.node, "10.0.0.2");
        let MachineEvent::MachineStatus(s) = got.event else {
            panic!("not a machine status: {got:?}");
        };
        assert_eq!(s.stage, MachineStage::Running);
        assert_eq!(s.unmet_conditions[0].name, "services");
    }

    #[test]
    fn sequence_and_service_events_decode() {
        let seq = pb::SequenceEvent {
            sequence: "reboot".into(),
            action: 1,
            error: None,
        };
        let got = decode_event(
            "n",
            &wire(
                "talos/runtime/machine.SequenceEvent",
                seq.encode_to_vec(),
                "a",
            ),
        )
        .expect("sequence");
        assert!(announces_reboot(&got.event));
        let svc = pb::ServiceStateEvent {
            service: "etcd".into(),
            action: 3,
            message: "Health check successful".into(),
            health: None,
        };
        let got = decode_event(
            "n",
            &wire(
                "talos/runtime/machine.ServiceStateEvent",
                svc.encode_to_vec(),
                "b",
            ),
        )
        .expect("service");
        assert_eq!(
            got.event,
            MachineEvent::ServiceState {
                service: "etcd".into(),
                state: "Running".into(),
                message: "Health check successful".into(),
                healthy: None,
            }
        );
        assert!(!announces_reboot(&got.event));
    }
}
