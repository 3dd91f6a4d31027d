//! How a headless rollout is followed to its end: one line per step change (or a JSON line),
//! "[2/5] cp-2: rebooting (phase kexec)", the last line with the outcome, and the exit code
//! (the runner audits the outcome).
use std::process::ExitCode;

use crate::cli::OutputFormat;
use crate::commands::exit::exit_if;
use crate::commands::progress::print_progress;
use crate::rollout::{RolloutEvent, RolloutOutcome, StepPhase, StepProgress};
use crate::upgrade::RolloutHandle;

/// How a spawned rollout is followed to its end.
pub(super) struct Follow<'a> {
    pub cluster: &'a str,
    pub target: &'a str,
    pub line: fn(usize, usize, &StepProgress) -> String,
    pub output: OutputFormat,
}

/// Prints one line per step change (as `how.line` words it, or a JSON line) until the rollout
/// ends, and gives the exit code: 0 when it completed, 1 otherwise.
pub(super) fn finish(
    runtime: &tokio::runtime::Runtime,
    handle: RolloutHandle,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<RolloutEvent>,
    how: Follow<'_>,
) -> ExitCode {
    let mut shown: Vec<StepProgress> = Vec::new();
    let mut outcome = None;
    let ended = runtime.block_on(async {
        while let Some(event) = rx.recv().await {
            match event {
                RolloutEvent::Started(summary) => shown = summary.steps,
                RolloutEvent::Step {
                    index, progress, ..
                } => {
                    let same = shown.get(index).is_some_and(|s| {
                        s.phase == progress.phase
                            && s.detail == progress.detail
                            && s.error == progress.error
                    });
                    if !same {
                        let count = shown.len().max(index + 1);
                        let step = serde_json::json!({
                            "index": index + 1, "count": count, "step": &progress,
                        });
                        let line = (how.line)(index, count, &progress);
                        print_progress(how.output, "step", &step, &line);
                    }
                    if let Some(slot) = shown.get_mut(index) {
                        *slot = progress;
                    }
                }
                RolloutEvent::Finished { outcome: o, .. } => {
                    let finished = serde_json::json!({
                        "cluster": how.cluster, "target": how.target, "outcome": &o,
                    });
                    let line = outcome_line(how.cluster, how.target, &o);
                    print_progress(how.output, "finished", &finished, &line);
                    outcome = Some(o);
                }
                RolloutEvent::Log { .. }
                | RolloutEvent::Paused { .. }
                | RolloutEvent::Resumed { .. } => {}
            }
        }
        handle.task.await
    });
    let outcome = match ended {
        Ok(o) => outcome.unwrap_or(o),
        Err(e) => RolloutOutcome::Halted(format!("the rollout task stopped: {e}")),
    };
    exit_if(outcome != RolloutOutcome::Completed)
}

/// "[2/5] cp-2: rebooting (phase kexec)"; a failure carries its reason.
pub fn progress_line(index: usize, total: usize, step: &StepProgress) -> String {
    let mut line = format!(
        "[{}/{total}] {}: {}",
        index + 1,
        step.node,
        step.phase.as_str()
    );
    if step.phase == StepPhase::Failed {
        if let Some(error) = &step.error {
            line.push_str(&format!(": {error}"));
        }
    } else if !step.detail.is_empty() {
        line.push_str(&format!(" ({})", step.detail));
    }
    line
}

/// "[3/17] cp-3 kube-apiserver v1.35.0: waiting for ready (...)": the step's label after the
/// node, for rollouts with several steps per node.
pub fn labelled_progress_line(index: usize, total: usize, step: &StepProgress) -> String {
    let mut named = step.clone();
    if !step.label.is_empty() {
        named.node = format!("{} {}", step.node, step.label);
    }
    progress_line(index, total, &named)
}

/// The last line of a run.
pub fn outcome_line(cluster: &str, target: &str, outcome: &RolloutOutcome) -> String {
    match outcome {
        RolloutOutcome::Completed => format!("upgrade of {cluster} to {target} completed"),
        RolloutOutcome::Aborted => format!("upgrade of {cluster} to {target} aborted"),
        RolloutOutcome::Halted(reason) => {
            format!("upgrade of {cluster} to {target} halted: {reason}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_read_like_the_issue() {
        let mut s = StepProgress::pending("talos-cp-2", "upgrade to v1.12.0");
        s.phase = StepPhase::Rebooting;
        s.detail = "phase kexec".into();
        assert_eq!(
            progress_line(1, 5, &s),
            "[2/5] talos-cp-2: rebooting (phase kexec)"
        );
        s.phase = StepPhase::Failed;
        s.error = Some("timed out after 15m".into());
        assert_eq!(
            progress_line(1, 5, &s),
            "[2/5] talos-cp-2: failed: timed out after 15m"
        );
    }
}
