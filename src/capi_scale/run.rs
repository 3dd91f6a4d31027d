//! What a Cluster API scale's run is given and tells: its options, the typed events it sends
//! while it follows the Machines, and how it ended (`operation::scale` carries it out).
use std::time::Duration;

use serde::Serialize;

use crate::guards::{Guard, Verdict};

use super::follow::MachineChange;

/// The Lease's kind while a scale holds it.
pub const SCALE_LEASE_KIND: &str = "capi-scale";
/// Polls in a row etcd may go unread (a control plane's endpoint going away) before the
/// scale stops: unread is not healthy.
pub const UNREAD_ETCD_POLLS: u32 = 3;

#[derive(Debug, Clone)]
pub struct ScaleOptions {
    /// Between two looks at the Machines and etcd.
    pub poll: Duration,
    /// The whole follow, from the patch on.
    pub timeout: Duration,
    /// The Lease's term; also the bound of the patch.
    pub lease_duration: Duration,
}

impl ScaleOptions {
    /// A scale's defaults, the command's and the console's: a poll every 2 s, 20 minutes in
    /// all, a 60 s Lease.
    pub const DEFAULT: ScaleOptions = ScaleOptions {
        poll: Duration::from_secs(2),
        timeout: Duration::from_secs(1200),
        lease_duration: Duration::from_secs(60),
    };
}

/// What a running scale tells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ScaleEvent {
    Note {
        text: String,
    },
    Machine(MachineChange),
    /// etcd as one poll of a control-plane scale read it.
    Etcd {
        healthy: bool,
        members: usize,
        reason: String,
    },
    /// What the scale waits for, when that changes.
    Waiting {
        reason: String,
    },
}

impl ScaleEvent {
    pub fn line(&self) -> String {
        match self {
            ScaleEvent::Note { text } => text.clone(),
            ScaleEvent::Machine(change) => change.line(),
            ScaleEvent::Etcd { reason, .. } => format!("etcd: {reason}"),
            ScaleEvent::Waiting { reason } => format!("waiting: {reason}"),
        }
    }
}

/// How a scale ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaleOutcome {
    pub object: String,
    pub from: u32,
    pub to: u32,
    pub succeeded: bool,
    pub message: String,
    /// Polls after the patch, and how many of them found etcd healthy (control planes).
    pub polls: u32,
    pub etcd_healthy_polls: u32,
    pub seconds: u64,
}

impl ScaleOutcome {
    pub fn line(&self) -> String {
        format!(
            "scale of {} {} -> {} {}: {} ({} polls, {} s)",
            self.object,
            self.from,
            self.to,
            if self.succeeded { "done" } else { "FAILED" },
            self.message,
            self.polls,
            self.seconds
        )
    }
}

/// The blocking guards' reasons, joined.
pub fn failing(guards: &[Guard]) -> String {
    let reasons: Vec<String> = guards
        .iter()
        .filter(|g| g.verdict != Verdict::Pass)
        .map(|g| format!("{}: {}", g.id.title(), g.reason))
        .collect();
    reasons.join("; ")
}
