//! Pre-flight guards, the part every guarded change shares: a guard's verdict (pass, warn,
//! fail) with its one-line reason and typed acknowledgement, and the guards by name with the
//! `?` explanation of each. Upgrades and provisions build their own lists from these.
use serde::Serialize;

mod id;

pub use id::GuardId;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Warn,
    Fail,
}

/// One guard's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Guard {
    pub id: GuardId,
    pub verdict: Verdict,
    /// One line.
    pub reason: String,
    /// The text the operator must type to go ahead despite this warning.
    pub needs_ack: Option<String>,
}

impl Guard {
    pub(crate) fn new(id: GuardId, verdict: Verdict, reason: impl Into<String>) -> Guard {
        Guard {
            id,
            verdict,
            reason: reason.into(),
            needs_ack: None,
        }
    }
    pub(crate) fn pass(id: GuardId, reason: impl Into<String>) -> Guard {
        Guard::new(id, Verdict::Pass, reason)
    }
    pub(crate) fn warn(id: GuardId, reason: impl Into<String>) -> Guard {
        Guard::new(id, Verdict::Warn, reason)
    }
    pub(crate) fn fail(id: GuardId, reason: impl Into<String>) -> Guard {
        Guard::new(id, Verdict::Fail, reason)
    }
    pub(crate) fn acked_by(mut self, text: &str) -> Guard {
        self.needs_ack = Some(text.to_string());
        self
    }

    /// Whether this guard stops the rollout, given the acknowledgements typed so far.
    pub fn blocks(&self, acks: &[String]) -> bool {
        match self.verdict {
            Verdict::Pass => false,
            Verdict::Fail => true,
            Verdict::Warn => self
                .needs_ack
                .as_ref()
                .is_some_and(|needed| !acks.iter().any(|typed| typed.trim() == needed)),
        }
    }
}

/// Any failure, or a warning whose acknowledgement was not typed.
pub fn blocking(guards: &[Guard], acks: &[String]) -> bool {
    guards.iter().any(|g| g.blocks(acks))
}
