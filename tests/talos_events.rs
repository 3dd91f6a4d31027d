//! The Events stream against the sim: typed events with ids, and a stream that
//! survives a reboot of its node (EOF, reconnect, replay of the new boot).
mod talos_common;

use std::time::Duration;

use futures::StreamExt;
use talos_common::{scenario, start, within};
use taloscope::talos::events::{ResumePoint, SequenceAction};
use taloscope::talos::{EventsItem, EventsOptions, MachineEvent, MachineStage, RebootMode};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_stream_reconnects_across_a_reboot() {
    let sim = start(scenario("healthy")).await;
    let client = sim.client("healthy");
    let w1 = sim.address("healthy", 3);
    let mut events = client.events(
        &w1,
        EventsOptions {
            tail_events: -1,
            backoff_min: Duration::from_millis(20),
            backoff_max: Duration::from_millis(200),
            give_up_after: Some(Duration::from_secs(20)),
            ..Default::default()
        },
    );

    // The boot's buffered events come first; they carry ids.
    let first = within(10, "first event", events.next()).await;
    match first {
        Some(EventsItem::Event(e)) => assert!(!e.id.is_empty() && e.node == w1, "{e:?}"),
        other => panic!("expected a buffered event: {other:?}"),
    }

    let ack = within(10, "reboot", client.reboot(&w1, RebootMode::Default))
        .await
        .expect("reboot accepted");

    let (mut saw_reboot_start, mut saw_disconnect, mut resumed) = (false, false, None);
    within(30, "the node back running and ready", async {
        while let Some(item) = events.next().await {
            match item {
                EventsItem::Event(e) => match &e.event {
                    MachineEvent::Sequence {
                        sequence, action, ..
                    } if sequence == "reboot" && *action == SequenceAction::Start => {
                        assert_eq!(e.actor_id, ack.actor_id);
                        saw_reboot_start = true;
                    }
                    MachineEvent::MachineStatus(s)
                        if resumed.is_some() && s.stage == MachineStage::Running && s.ready =>
                    {
                        return;
                    }
                    _ => {}
                },
                EventsItem::Disconnected { node, .. } => {
                    assert_eq!(node, w1);
                    saw_disconnect = true;
                }
                EventsItem::Resumed { from, .. } => resumed = Some(from),
            }
        }
        panic!("the event stream ended");
    })
    .await;
    assert!(saw_reboot_start, "the reboot sequence was seen");
    assert!(saw_disconnect, "the stream broke when the node went down");
    assert_eq!(resumed, Some(ResumePoint::WholeBuffer));
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_resume_after_the_last_id_when_the_endpoint_goes_away() {
    let sim = start(scenario("healthy")).await;
    let client = sim.client("healthy");
    let cp1 = sim.address("healthy", 0);
    let w1 = sim.address("healthy", 3);
    let mut events = client.events(
        &w1,
        EventsOptions {
            tail_events: -1,
            backoff_min: Duration::from_millis(20),
            backoff_max: Duration::from_millis(200),
            give_up_after: Some(Duration::from_secs(20)),
            ..Default::default()
        },
    );
    // Drain w-1's buffered events, remembering the last id.
    let mut last_id = String::new();
    within(10, "buffered events", async {
        loop {
            tokio::select! {
                item = events.next() => match item {
                    Some(EventsItem::Event(e)) => last_id = e.id,
                    other => panic!("unexpected {other:?}"),
                },
                _ = tokio::time::sleep(Duration::from_millis(300)) => break,
            }
        }
    })
    .await;
    assert!(!last_id.is_empty());
    assert!(
        client
            .current_endpoint()
            .await
            .is_some_and(|e| e.starts_with(&format!("{cp1}:")))
    );

    // The endpoint (cp-1) reboots; w-1 does not. The stream resumes elsewhere after our id.
    within(10, "reboot cp-1", client.reboot(&cp1, RebootMode::Default))
        .await
        .expect("reboot accepted");
    let resumed = within(20, "resume", async {
        while let Some(item) = events.next().await {
            if let EventsItem::Resumed { from, .. } = item {
                return from;
            }
        }
        panic!("the event stream ended");
    })
    .await;
    assert_eq!(resumed, ResumePoint::AfterId(last_id));
    sim.fleet.shutdown().await;
}
