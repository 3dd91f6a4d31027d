//! What a running rollout tells the rest of the program: per-step phases, the event log tail and
//! the outcome, as events on a channel (the runner never touches UI state), and the commands the
//! operator sends back (pause, resume, abort).
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// Which rollout this is; also the Lease's `taloscope.dev/rollout-kind` annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RolloutKind {
    TalosUpgrade,
    KubernetesUpgrade,
}

impl RolloutKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RolloutKind::TalosUpgrade => "talos-upgrade",
            RolloutKind::KubernetesUpgrade => "kubernetes-upgrade",
        }
    }

    /// In the operator's words: "upgrade", "Kubernetes upgrade".
    pub fn describe(self) -> &'static str {
        match self {
            RolloutKind::TalosUpgrade => "upgrade",
            RolloutKind::KubernetesUpgrade => "Kubernetes upgrade",
        }
    }
}

/// Where one step (one node, or one component on one node) stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepPhase {
    Pending,
    /// Pulling the installer (or component) image.
    Pulling,
    /// The upgrade sequence runs on the node (or the new config is being applied).
    Installing,
    Rebooting,
    /// Back up; waiting for running + ready on the target, Kubernetes Ready, etcd healthy.
    WaitingForReady,
    Done,
    Failed,
    Skipped,
}

impl StepPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            StepPhase::Pending => "pending",
            StepPhase::Pulling => "pulling",
            StepPhase::Installing => "installing",
            StepPhase::Rebooting => "rebooting",
            StepPhase::WaitingForReady => "waiting for ready",
            StepPhase::Done => "done",
            StepPhase::Failed => "failed",
            StepPhase::Skipped => "skipped",
        }
    }

    /// Done, failed or skipped: nothing more happens to this step.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            StepPhase::Done | StepPhase::Failed | StepPhase::Skipped
        )
    }
}

/// One step's progress, as shown in the progress pane and kept in the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepProgress {
    /// The node's name (hostname) as in the plan.
    pub node: String,
    /// What the step does, e.g. "upgrade to v1.12.0" or "kube-apiserver 1.35.0".
    pub label: String,
    pub phase: StepPhase,
    /// The node's current Talos phase / task / stage, or a wait reason; empty when none.
    pub detail: String,
    /// Seconds since the Unix epoch when the step started / ended.
    pub started_unix: Option<u64>,
    pub finished_unix: Option<u64>,
    /// Why it failed, verbatim from the server where it came from there.
    pub error: Option<String>,
}

impl StepProgress {
    pub fn pending(node: &str, label: &str) -> StepProgress {
        StepProgress {
            node: node.to_string(),
            label: label.to_string(),
            phase: StepPhase::Pending,
            detail: String::new(),
            started_unix: None,
            finished_unix: None,
            error: None,
        }
    }

    /// Step `index` of `total` as one progress line, "[2/5] cp-2: rebooting (phase kexec)"; a
    /// failure carries its reason.
    pub fn line(&self, index: usize, total: usize) -> String {
        let mut line = format!(
            "[{}/{total}] {}: {}",
            index + 1,
            self.node,
            self.phase.as_str()
        );
        if self.phase == StepPhase::Failed {
            if let Some(error) = &self.error {
                line.push_str(&format!(": {error}"));
            }
        } else if !self.detail.is_empty() {
            line.push_str(&format!(" ({})", self.detail));
        }
        line
    }

    /// [`StepProgress::line`] with the step's label after the node, for rollouts with several
    /// steps per node: "[3/17] cp-3 kube-apiserver v1.35.0: waiting for ready (...)".
    pub fn labelled_line(&self, index: usize, total: usize) -> String {
        let mut named = self.clone();
        if !self.label.is_empty() {
            named.node = format!("{} {}", self.node, self.label);
        }
        named.line(index, total)
    }
}

/// How a rollout ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome", content = "reason")]
pub enum RolloutOutcome {
    /// Every step done or skipped.
    Completed,
    /// The operator aborted; the node in progress was finished first.
    Aborted,
    /// A guard failed, a step failed or timed out; the reason names the node.
    Halted(String),
}

impl RolloutOutcome {
    /// The last line of a run: "upgrade of prod to v1.12.0 completed".
    pub fn line(&self, cluster: &str, target: &str) -> String {
        match self {
            RolloutOutcome::Completed => format!("upgrade of {cluster} to {target} completed"),
            RolloutOutcome::Aborted => format!("upgrade of {cluster} to {target} aborted"),
            RolloutOutcome::Halted(reason) => {
                format!("upgrade of {cluster} to {target} halted: {reason}")
            }
        }
    }
}

/// The whole rollout at a glance: what the progress pane and the journal hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolloutSummary {
    pub cluster: String,
    pub kind: RolloutKind,
    /// "v1.12.0" or "1.35.0".
    pub target: String,
    /// `user@host` holding the rollout Lease.
    pub holder: String,
    pub steps: Vec<StepProgress>,
    pub paused: bool,
    pub outcome: Option<RolloutOutcome>,
}

impl RolloutSummary {
    /// Steps that are done or skipped, for the overall gauge.
    pub fn finished_steps(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(s.phase, StepPhase::Done | StepPhase::Skipped))
            .count()
    }

    /// The first step that is not final: where a resumed rollout starts.
    pub fn first_unfinished(&self) -> Option<usize> {
        self.steps.iter().position(|s| !s.phase.is_final())
    }
}

/// What the runner reports; the app folds these into state in its update step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RolloutEvent {
    /// The rollout began (or resumed from the journal) with these steps.
    Started(RolloutSummary),
    /// One step changed.
    Step {
        cluster: String,
        index: usize,
        progress: StepProgress,
    },
    /// A line for the event log tail ("talos-cp-1: phase upgrade started").
    Log {
        cluster: String,
        line: String,
        /// When it was written, seconds since the Unix epoch.
        unix: u64,
    },
    Paused {
        cluster: String,
    },
    Resumed {
        cluster: String,
    },
    Finished {
        cluster: String,
        outcome: RolloutOutcome,
    },
}

impl RolloutEvent {
    pub fn cluster(&self) -> &str {
        match self {
            RolloutEvent::Started(s) => &s.cluster,
            RolloutEvent::Step { cluster, .. }
            | RolloutEvent::Log { cluster, .. }
            | RolloutEvent::Paused { cluster }
            | RolloutEvent::Resumed { cluster }
            | RolloutEvent::Finished { cluster, .. } => cluster,
        }
    }
}

/// What the operator sends a running rollout. Abort never cuts a node mid-upgrade: the runner
/// stops before the next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RolloutControl {
    /// Stop after the current step.
    Pause,
    Resume,
    /// Stop before the next step, for good.
    Abort,
}

/// What a running step reports; its runner folds it into the summary, journal and events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepUpdate {
    Phase(StepPhase, String),
    Detail(String),
    Log(String),
}

/// A running step's way to report progress. Cheap to clone.
#[derive(Debug, Clone)]
pub struct StepReport {
    index: usize,
    node: String,
    tx: UnboundedSender<(usize, StepUpdate)>,
}

impl StepReport {
    /// The report of step `index` on `node`, its updates sent on `tx` with the index.
    pub fn new(index: usize, node: &str, tx: UnboundedSender<(usize, StepUpdate)>) -> StepReport {
        StepReport {
            index,
            node: node.to_string(),
            tx,
        }
    }

    /// For executors tested on their own: a report whose updates arrive on the receiver.
    pub fn channel(
        index: usize,
        node: &str,
    ) -> (StepReport, UnboundedReceiver<(usize, StepUpdate)>) {
        let (tx, rx) = unbounded_channel();
        let report = StepReport {
            index,
            node: node.to_string(),
            tx,
        };
        (report, rx)
    }

    pub fn node(&self) -> &str {
        &self.node
    }

    pub fn phase(&self, phase: StepPhase, detail: impl Into<String>) {
        let _ = self
            .tx
            .send((self.index, StepUpdate::Phase(phase, detail.into())));
    }

    pub fn detail(&self, detail: impl Into<String>) {
        let _ = self
            .tx
            .send((self.index, StepUpdate::Detail(detail.into())));
    }

    /// A line for the event log tail; the node's name is put in front.
    pub fn log(&self, line: impl AsRef<str>) {
        let line = format!("{}: {}", self.node, line.as_ref());
        let _ = self.tx.send((self.index, StepUpdate::Log(line)));
    }
}

/// A running rollout: send it pause / resume / abort; await the task for its outcome.
pub struct RolloutHandle {
    pub control: UnboundedSender<RolloutControl>,
    pub task: tokio::task::JoinHandle<RolloutOutcome>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_read_like_the_issue() {
        let mut s = StepProgress::pending("talos-cp-2", "upgrade to v1.12.0");
        s.phase = StepPhase::Rebooting;
        s.detail = "phase kexec".into();
        assert_eq!(s.line(1, 5), "[2/5] talos-cp-2: rebooting (phase kexec)");
        s.phase = StepPhase::Failed;
        s.error = Some("timed out after 15m".into());
        assert_eq!(
            s.line(1, 5),
            "[2/5] talos-cp-2: failed: timed out after 15m"
        );
    }
}
