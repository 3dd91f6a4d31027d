//! The one body of `taloscope upgrade` and `taloscope upgrade-k8s`: pick the cluster named by
//! `--context`, connect to it, refuse another rollout's journal (or one whose run still lives),
//! pass the plan through the one gate ([`CommandGate::pass`]: printed with `--plan`, else
//! approved) and run it, or approve and resume the journal's run, through the one pipeline,
//! which audits how it ended; one progress line per step change on the one printer
//! ("[2/5] cp-2: rebooting (phase kexec)", or a JSON line), the last with the outcome. Each
//! command supplies its plan, guards and its part of the plan report ([`HeadlessUpgrade`]).
//! A SIGINT stops the run after the step under way, its journal left for the same command to
//! resume (the gate's signal rule). Exit 0 / 1 / 2.
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio_stream::wrappers::UnboundedReceiverStream;

use crate::cli::{GlobalArgs, RolloutArgs};
use crate::commands::exit::{EXIT_BLOCKED, Stop, exit_if, nothing_to_do, usage};
use crate::commands::gate::{CommandGate, on_signals};
use crate::commands::plan_report::PlanText;
use crate::commands::progress::{print_events, print_progress};
use crate::commands::session::{Chosen, Connected, check_gate, choose, connect, other_rollout};
use crate::fleet::ClusterStatus;
use crate::operation::upgrade::{UpgradeRun, resume_upgrade_with, spawn_upgrade};
use crate::rollout::claim::claim_run;
use crate::rollout::{
    RolloutControl, RolloutEvent, RolloutHandle, RolloutJournal, RolloutOutcome, StepPhase,
    StepProgress,
};
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::{Guard, RolloutInProgress, RunOptions, UpgradeKind, capi_owned};
use crate::versions::Version;

/// What one headless upgrade command brings to the body they share beside its flags: its run
/// options, its plan, its guards and its report.
pub(in crate::commands) trait HeadlessUpgrade {
    type Kind: UpgradeKind;

    /// Refuses, as a usage error, a target the command can tell is none (the Talos upgrade's
    /// unknown version), once connected and before the in-place or Cluster API way is taken.
    async fn check_target(&self, _status: &ClusterStatus, _target: &Version) -> Result<(), Stop> {
        Ok(())
    }
    /// The run's own options; the poll interval, the state dir and the kubeconfig are the body's.
    fn options(&self) -> RunOptions;
    /// The plan for `target`; `Stop(0, why)` when there is nothing to do.
    async fn plan(
        &self,
        status: &ClusterStatus,
        observer: &ClusterObserver,
        target: Version,
    ) -> Result<<Self::Kind as UpgradeKind>::Plan, Stop>;
    /// Every guard of the plan, over the status and the rollout another console holds.
    async fn guards(
        &self,
        plan: &<Self::Kind as UpgradeKind>::Plan,
        status: &ClusterStatus,
        observer: &ClusterObserver,
        other: Option<&RolloutInProgress>,
    ) -> Vec<Guard>;
    /// The command's own part of its plan report.
    fn report<'a>(&self, plan: &'a <Self::Kind as UpgradeKind>::Plan) -> impl PlanText + 'a;
}

/// Runs one headless upgrade command to its exit code: the target `--to` names, the files,
/// the gate's flags and the rollout's (`flags`).
pub(in crate::commands) fn run<C: HeadlessUpgrade>(
    global: &GlobalArgs,
    to: &str,
    flags: &RolloutArgs,
    command: &C,
) -> Result<ExitCode, Stop> {
    let target = Version::parse(to).map_err(|e| usage(format!("--to {to:?}: {e}")))?;
    check_gate(&flags.gate, "cluster")?;
    let chosen = choose(global)?;
    if C::Kind::NEEDS_KUBE && chosen.cluster.kube.is_none() {
        let wanted = global.context.as_deref().unwrap_or_default();
        return Err(usage(format!(
            "cluster {wanted:?} has no kube context; the {} upgrade needs the Kubernetes API",
            C::Kind::PRODUCT
        )));
    }
    let connected = connect(&chosen)?;
    let journal = unfinished_journal(&chosen)?;
    connected
        .runtime
        .block_on(command.check_target(&connected.status, &target))?;
    match connected.runtime.block_on(chosen.capi_owner()) {
        Some(owner) if !flags.in_place => {
            super::capi::run(global, flags, command, owner, (chosen, connected), target)
        }
        owner => {
            let capi_guard = capi_owned(owner.as_ref(), C::Kind::IN_PLACE);
            let connected = (chosen, connected, journal);
            run_connected(global, flags, command, connected, target, capi_guard)
        }
    }
}

/// The chosen cluster's unfinished rollout journal, if a run left one; one that cannot be read
/// is a usage error naming the file.
fn unfinished_journal(chosen: &Chosen) -> Result<Option<RolloutJournal>, Stop> {
    RolloutJournal::load_unfinished(&chosen.paths.state_dir, &chosen.cluster.name)
        .map_err(|e| usage(e.to_string()))
}

/// The body once the cluster is chosen and connected: its journal checked, then the plan
/// through the gate (printed, or approved and run), or the journal's run approved and resumed
/// (one its journal left paused goes on: no one here could resume it).
/// `extra` is a guard the command adds (the CAPI refusal).
fn run_connected<C: HeadlessUpgrade>(
    global: &GlobalArgs,
    flags: &RolloutArgs,
    command: &C,
    (chosen, connected, journal): (Chosen, Connected, Option<RolloutJournal>),
    target: Version,
    extra: Option<Guard>,
) -> Result<ExitCode, Stop> {
    let Connected {
        runtime,
        observer,
        status,
    } = connected;
    let cluster = &chosen.cluster;
    let wanted_target = C::Kind::version_text(&target);
    check_journal::<C>(&chosen, journal.as_ref(), &wanted_target)?;
    let gate = CommandGate {
        progress_only: true,
        ..CommandGate::new(global, &chosen.paths, &flags.gate)
    };
    let action = C::Kind::action(cluster.name.clone(), wanted_target.clone());
    let audited = action.clone();
    let options = RunOptions {
        poll_interval: Duration::from_millis(flags.poll_ms.max(10)),
        state_dir: Some(chosen.paths.state_dir.clone()),
        kubeconfig: chosen.discovery.kubeconfig.clone(),
        take_over: flags.take_over.clone(),
        ..command.options()
    };
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let dispatcher = gate.dispatcher.clone();
    let handle = match journal {
        Some(mut journal) if !flags.gate.plan => {
            // The runner decides again when it starts; said here first, before any approval.
            claim_run(Some(&journal), flags.take_over.as_deref())
                .map_err(|reason| Stop(EXIT_BLOCKED, reason))?;
            let approved = gate.confirm(action)?;
            resume_notice(C::Kind::WHAT, C::Kind::UNIT, &cluster.name, &journal);
            // No one here can resume a held run: the operator's confirmation means "go on".
            if std::mem::take(&mut journal.paused) {
                eprintln!(
                    "taloscope: the {} of {} was left paused; it resumes",
                    C::Kind::WHAT,
                    cluster.name
                );
            }
            let _entered = runtime.enter();
            resume_upgrade_with::<C::Kind>(
                journal,
                approved,
                dispatcher,
                cluster.clone(),
                options,
                tx,
            )
        }
        journal => {
            plan_notice(journal.as_ref(), C::Kind::WHAT, &cluster.name);
            let plan = match runtime.block_on(command.plan(&status, &observer, target)) {
                Err(Stop(0, message)) => return nothing_to_do(&flags.gate, message),
                plan => plan?,
            };
            let mut guards = runtime.block_on(async {
                let other = other_rollout(&observer).await;
                command
                    .guards(&plan, &status, &observer, other.as_ref())
                    .await
            });
            guards.extend(extra);
            let approved = gate.pass(command.report(&plan), action, &guards)?;
            let _entered = runtime.enter();
            let run = UpgradeRun::<C::Kind> {
                approved,
                dispatcher,
                plan,
                acks: flags.gate.ack.clone(),
                cluster: cluster.clone(),
                options,
            };
            spawn_upgrade(run, tx)
        }
    };
    // A signal asks the run to stop after the step under way with the rollout's own pause, its
    // controls then gone: the run detaches before the next step, its journal kept for a resume.
    let RolloutHandle { control, task } = handle;
    let cancelled = Arc::new(AtomicBool::new(false));
    on_signals(&runtime, {
        let cancelled = cancelled.clone();
        move || {
            cancelled.store(true, Ordering::SeqCst);
            let _ = control.send(RolloutControl::Pause);
        }
    });
    // One line per step change, until the rollout ends; the runner audits how it ended.
    let (name, mut shown) = (cluster.name.clone(), Vec::<StepProgress>::new());
    let ended = runtime.block_on(async {
        let events = UnboundedReceiverStream::new(rx);
        let printer = print_events(events, flags.gate.output, move |event| match event {
            RolloutEvent::Started(summary) => {
                shown = summary.steps.clone();
                None
            }
            RolloutEvent::Step {
                index, progress, ..
            } => {
                let same = shown.get(*index).is_some_and(|s| {
                    (s.phase, &s.detail, &s.error)
                        == (progress.phase, &progress.detail, &progress.error)
                });
                let count = shown.len().max(index + 1);
                if let Some(slot) = shown.get_mut(*index) {
                    *slot = progress.clone();
                }
                let step =
                    serde_json::json!({"index": index + 1, "count": count, "step": progress});
                (!same).then(|| ("step", step, C::Kind::step_line(*index, count, progress)))
            }
            RolloutEvent::Finished { outcome, .. } => {
                let target = &wanted_target;
                let finished =
                    serde_json::json!({"cluster": name, "target": target, "outcome": outcome});
                Some(("finished", finished, outcome.line(&name, target)))
            }
            RolloutEvent::Log { .. }
            | RolloutEvent::Paused { .. }
            | RolloutEvent::Resumed { .. } => None,
        });
        let ended = task.await;
        let _ = printer.await;
        ended
    });
    if cancelled.load(Ordering::SeqCst) {
        let journal = RolloutJournal::load_unfinished(&chosen.paths.state_dir, &cluster.name);
        if let Ok(Some(journal)) = journal.map(|j| j.filter(|j| j.paused)) {
            let (data, line) = left_by_cancel(C::Kind::WHAT, C::Kind::UNIT, &journal);
            let left = "stopped after the step under way, its journal kept to resume";
            if let Err(e) = gate.dispatcher.stopped(&audited, left) {
                eprintln!("taloscope: {e}");
            }
            print_progress(flags.gate.output, "cancelled", &data, &line);
        }
    }
    Ok(exit_if(!matches!(ended, Ok(RolloutOutcome::Completed))))
}

/// What a rollout a signal stopped leaves, from its journal: the steps done, the one that would
/// be next, and that the same command resumes it (`unit` is "node" or "step").
fn left_by_cancel(what: &str, unit: &str, journal: &RolloutJournal) -> (serde_json::Value, String) {
    let name = |s: &StepProgress| match unit {
        "node" => s.node.clone(),
        _ => format!("{} {}", s.node, s.label).trim_end().to_string(),
    };
    let total = journal.steps.len();
    let done: Vec<String> = journal
        .steps
        .iter()
        .filter(|s| s.phase.is_final() && s.phase != StepPhase::Failed)
        .map(name)
        .collect();
    let next = journal.summary().first_unfinished();
    let mut line = format!(
        "cancelled after the step under way: {} of {total} {unit}s done",
        done.len()
    );
    if !done.is_empty() {
        line.push_str(&format!(" ({})", done.join(", ")));
    }
    if let Some(i) = next {
        let step = name(&journal.steps[i]);
        line.push_str(&format!(
            "; {unit} {} of {total} ({step}) would be next",
            i + 1
        ));
    }
    line.push_str(&format!(
        "; its journal keeps the {what}: run the same command again to resume"
    ));
    let next = next.map(|i| name(&journal.steps[i]));
    let data = serde_json::json!({"cluster": journal.cluster, "target": journal.target, "done": done, "next": next});
    (data, line)
}

/// Refuses to go on while the cluster's unfinished journal is another rollout: of another
/// kind (when the command checks it) or to another target.
fn check_journal<C: HeadlessUpgrade>(
    chosen: &Chosen,
    journal: Option<&RolloutJournal>,
    target: &str,
) -> Result<(), Stop> {
    let Some(j) = journal else {
        return Ok(());
    };
    let cluster = &chosen.cluster.name;
    let path = crate::journal::ROLLOUTS.path_for(&chosen.paths.state_dir, cluster);
    let other_kind = C::Kind::REFUSES_OTHER_KIND && C::Kind::ROLLOUT != j.kind;
    if !other_kind && j.target == target {
        return Ok(());
    }
    // Another kind is named as the journal's; another target asks for the same --to.
    let (what, same_to) = match other_kind {
        true => (j.kind.describe(), ""),
        false => (C::Kind::WHAT, " (same --to)"),
    };
    Err(usage(format!(
        "an unfinished {what} of {cluster} to {} is in its journal {}; finish it first{same_to} or move the file away",
        j.target,
        path.display()
    )))
}

/// With `--plan`: says on stderr that `--yes` resumes the unfinished journal, if there is one,
/// or that its run is still alive (and `--yes` would be refused).
fn plan_notice(journal: Option<&RolloutJournal>, what: &str, cluster: &str) {
    if journal.is_none() {
        return;
    }
    match claim_run(journal, None) {
        Ok(_) => eprintln!(
            "taloscope: an unfinished {what} of {cluster} is in its journal; --yes --confirm {cluster} resumes it"
        ),
        Err(running) => eprintln!("taloscope: {running}"),
    }
}

/// Says on stderr which step a resumed run starts from (`unit` is "node" or "step").
fn resume_notice(what: &str, unit: &str, cluster: &str, journal: &RolloutJournal) {
    let next = journal.summary().first_unfinished().map_or(0, |i| i + 1);
    eprintln!(
        "taloscope: resuming the {what} of {cluster} to {} from its journal ({unit} {next} of {})",
        journal.target,
        journal.steps.len()
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollout::RolloutKind;

    #[test]
    fn a_cancel_names_the_steps_done_and_the_next_one_with_its_label_when_the_unit_is_a_step() {
        let mut steps = vec![
            StepProgress::pending("cp-1", "kube-apiserver"),
            StepProgress::pending("cp-1", "kubelet"),
            StepProgress::pending("w-1", "kubelet"),
        ];
        steps[0].phase = StepPhase::Done;
        steps[1].phase = StepPhase::Skipped;
        let journal = RolloutJournal {
            format: crate::rollout::journal::JOURNAL_FORMAT,
            cluster: "prod".into(),
            kind: RolloutKind::KubernetesUpgrade,
            target: "1.35.0".into(),
            holder: "alice@ops1".into(),
            acks: vec![],
            plan: serde_json::Value::Null,
            options: serde_json::Value::Null,
            steps,
            paused: true,
            outcome: None,
            updated_unix: 1,
        };
        let (data, line) = left_by_cancel("Kubernetes upgrade", "step", &journal);
        assert_eq!(
            line,
            "cancelled after the step under way: 2 of 3 steps done (cp-1 kube-apiserver, \
             cp-1 kubelet); step 3 of 3 (w-1 kubelet) would be next; its journal keeps the \
             Kubernetes upgrade: run the same command again to resume"
        );
        assert_eq!(data["next"], "w-1 kubelet");
        assert_eq!(data["done"].as_array().map(Vec::len), Some(2));
        assert_eq!(
            (&data["cluster"], &data["target"]),
            (&"prod".into(), &"1.35.0".into())
        );
    }
}
