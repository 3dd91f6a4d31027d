//! What a create or delete run reports on its channel: each phase as it starts, waits and
//! ends, notes, and the summary at the end. Never a secret: paths, counts and addresses only.
//! The app and the headless commands fold these.
use serde::{Deserialize, Serialize};

/// A create's phases, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CreatePhase {
    /// The VMs (or the OneFlow service) asked for.
    Vms,
    /// Every VM RUNNING with an address.
    Booted,
    /// Every node has its machine config (applied, or read from USER_DATA).
    Configured,
    /// Bootstrap sent to the first control plane.
    Bootstrapped,
    /// etcd has every control plane as a member, and a leader.
    Etcd,
    /// The Kubernetes API answers.
    Api,
    /// Every Kubernetes node Ready.
    NodesReady,
    /// The talos and kube contexts merged into the operator's files.
    ContextsWritten,
}

impl CreatePhase {
    pub const ALL: [CreatePhase; 8] = [
        CreatePhase::Vms,
        CreatePhase::Booted,
        CreatePhase::Configured,
        CreatePhase::Bootstrapped,
        CreatePhase::Etcd,
        CreatePhase::Api,
        CreatePhase::NodesReady,
        CreatePhase::ContextsWritten,
    ];

    /// As the progress screen and lines name it.
    pub fn title(self) -> &'static str {
        match self {
            CreatePhase::Vms => "VMs",
            CreatePhase::Booted => "booted",
            CreatePhase::Configured => "configured",
            CreatePhase::Bootstrapped => "bootstrapped",
            CreatePhase::Etcd => "etcd",
            CreatePhase::Api => "API",
            CreatePhase::NodesReady => "nodes Ready",
            CreatePhase::ContextsWritten => "contexts written",
        }
    }
}

/// How one phase stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", content = "detail", rename_all = "snake_case")]
pub enum PhaseState {
    Waiting(String),
    Done(String),
    Failed(String),
}

/// What a run sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LifecycleEvent {
    /// A create phase changed.
    Phase {
        phase: CreatePhase,
        #[serde(flatten)]
        state: PhaseState,
    },
    /// Something the operator should read (a VM id, a fingerprint, a file written).
    Note { text: String },
    /// The run is over.
    Finished { summary: RunSummary },
}

impl LifecycleEvent {
    /// One line for the headless output.
    pub fn line(&self) -> String {
        match self {
            LifecycleEvent::Phase { phase, state } => match state {
                PhaseState::Waiting(d) => format!("{}: waiting: {d}", phase.title()),
                PhaseState::Done(d) => format!("{}: done: {d}", phase.title()),
                PhaseState::Failed(d) => format!("{}: FAILED: {d}", phase.title()),
            },
            LifecycleEvent::Note { text } => text.clone(),
            LifecycleEvent::Finished { summary } => summary.line(),
        }
    }
}

/// How a create or delete ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSummary {
    pub cluster: String,
    /// "create" or "delete".
    pub what: String,
    /// The furthest create phase done (creates only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reached: Option<CreatePhase>,
    pub error: Option<String>,
}

impl RunSummary {
    pub fn succeeded(&self) -> bool {
        self.error.is_none()
    }

    pub fn line(&self) -> String {
        match (&self.error, self.reached) {
            (None, _) => format!("{} {}: done", self.what, self.cluster),
            (Some(e), Some(p)) => format!(
                "{} {}: stopped after phase {}: {e}",
                self.what,
                self.cluster,
                p.title()
            ),
            (Some(e), None) => format!("{} {}: stopped: {e}", self.what, self.cluster),
        }
    }
}
