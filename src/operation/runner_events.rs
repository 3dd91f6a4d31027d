//! Each domain runner's events told as progress events, in one place: the node actions' lines
//! (`cp-2: rebooting: ...`, the node a subject), the etcd actions' steps, a rollout's
//! steps, pauses and end, a provision's VMs, the cluster lifecycle's phases and notes, a CAPI
//! scale's Machines, etcd polls and waits.
use super::progress::{Check, Offer, OperationProgress, ProgressEvent, StepRow, StepState, Tally};
use crate::approval::MutatingAction;
use crate::capi::MachineRole;
use crate::capi_scale::{MachineChange, ScaleEvent, ScalePlan};
use crate::cluster_lifecycle::{CreatePhase, LifecycleEvent, PhaseState};
use crate::etcd_maintenance::EtcdPlan;
use crate::provision::{JournalEntry, ProvisionEvent, ProvisionStage};
use crate::rollout::{
    RolloutEvent, RolloutKind, RolloutOutcome, RolloutSummary, StepPhase, StepProgress,
};
use crate::upgrade::RunOptions;
use crate::upgrade::capi::CapiUpgradePlan;

use super::OperationKind;
use super::run::OperationEvent;

/// A node action's line (`node_actions::run` prefixes each with its node): the line, and the
/// node's state as the rest of it.
pub fn node_action_line(node: &str, line: String) -> Vec<ProgressEvent> {
    let mut events = Vec::with_capacity(2);
    if let Some(state) = line.strip_prefix(node).and_then(|r| r.strip_prefix(": ")) {
        events.push(ProgressEvent::Subject {
            name: node.to_string(),
            state: state.to_string(),
        });
    }
    events.push(ProgressEvent::Line(line));
    events
}

/// An event of the one runner (`operation::run`): a step's start as that step running, its
/// timeout in its detail (the one before it done: the runner runs them one at a time); a line
/// as it is (the progress stamps it with its time), and, when `node` is the run's subject, the
/// node's state as the rest of a line that names it (`cp-2: rebooting: ...`).
pub fn operation(event: &OperationEvent, node: Option<&str>) -> Vec<ProgressEvent> {
    match event {
        OperationEvent::Step {
            index,
            total,
            what,
            timeout,
        } => {
            let mut events = Vec::with_capacity(2);
            if *index > 0 {
                events.push(ProgressEvent::Step {
                    index: index - 1,
                    total: *total,
                    label: String::new(),
                    state: StepState::Done(String::new()),
                });
            }
            let bound = crate::clock::short_duration(timeout.as_secs());
            events.push(ProgressEvent::Step {
                index: *index,
                total: *total,
                label: what.clone(),
                state: StepState::Running(format!("times out after {bound}")),
            });
            events
        }
        OperationEvent::Line { text, .. } => match node {
            Some(node) => node_action_line(node, text.clone()),
            None => vec![ProgressEvent::Line(text.clone())],
        },
        OperationEvent::Note { text } => vec![ProgressEvent::Line(text.clone())],
    }
}

/// An event of a rollout whose lines name the node of their step (`w-1: applying (auto)`):
/// as `operation`, and the rest of such a line (its warnings aside) the step's state, so the
/// node's row shows the phase it is in beside its elapsed time.
pub fn node_phases(event: &OperationEvent) -> Vec<ProgressEvent> {
    let mut events = operation(event, None);
    if let OperationEvent::Line {
        index, total, text, ..
    } = event
        && let Some((_, phase)) = text.split_once(": ")
        && !phase.starts_with("warning: ")
    {
        let state = StepState::Running(phase.to_string());
        let label = String::new();
        let (index, total) = (*index, *total);
        events.insert(
            0,
            ProgressEvent::Step {
                index,
                total,
                label,
                state,
            },
        );
    }
    events
}

/// A CAPI-way upgrade's phases from its plan, every one pending, named as its operation
/// names its steps.
pub fn capi_upgrade_steps(plan: &CapiUpgradePlan) -> Vec<StepRow> {
    plan.phases
        .iter()
        .map(|p| StepRow::pending(&super::capi_upgrade::phase_step(plan, p)))
        .collect()
}

/// An etcd action's steps from its plan, every one pending: `cp-1: defragment`.
pub fn etcd_steps(plan: &EtcdPlan) -> Vec<StepRow> {
    plan.steps
        .iter()
        .map(|step| StepRow::pending(&format!("{}: {}", step.node, step.call.as_str())))
        .collect()
}

/// A rollout's event (`operation::upgrade`): its steps (node and what it does) as the step list,
/// its log lines, its pause, its end.
pub fn rollout(event: &RolloutEvent) -> Vec<ProgressEvent> {
    match event {
        RolloutEvent::Started(summary) => {
            let total = summary.steps.len();
            let steps = summary.steps.iter().enumerate();
            let steps = steps.map(|(index, step)| rollout_step(index, total, step));
            // A journal's pause holds the resumed run until `r`.
            let paused = summary.paused.then_some(ProgressEvent::Paused(true));
            steps.chain(paused).collect()
        }
        RolloutEvent::Step {
            index, progress, ..
        } => vec![rollout_step(*index, index + 1, progress)],
        RolloutEvent::Log { line, .. } => vec![ProgressEvent::Line(line.clone())],
        RolloutEvent::Paused { .. } => vec![ProgressEvent::Paused(true)],
        RolloutEvent::Resumed { .. } => vec![ProgressEvent::Paused(false)],
        RolloutEvent::Finished { outcome, .. } => {
            vec![ProgressEvent::Finished(rollout_end(outcome))]
        }
    }
}

/// How a rollout ended, as its progress says it.
pub fn rollout_end(outcome: &RolloutOutcome) -> Result<String, String> {
    match outcome {
        RolloutOutcome::Completed => Ok("completed: every node done or skipped".to_string()),
        RolloutOutcome::Aborted => Err("cancelled before the next node".to_string()),
        RolloutOutcome::Halted(why) => Err(format!("halted: {why}")),
    }
}

/// A rollout's steps as its step list starts (a journal's, or the plan's before the runner
/// reports).
pub fn rollout_steps(steps: &[StepProgress]) -> Vec<StepRow> {
    steps
        .iter()
        .enumerate()
        .filter_map(|(i, step)| match rollout_step(i, steps.len(), step) {
            ProgressEvent::Step { label, state, .. } => Some(StepRow {
                label,
                state,
                started: step.started_unix,
                ended: step.finished_unix,
            }),
            _ => None,
        })
        .collect()
}

/// An in-place upgrade's progress shaped by its steps: each node's a step bounded by the
/// runner's node timeout (a Talos upgrade's counted as nodes).
pub fn shape_rollout(progress: &mut OperationProgress, steps: &[StepProgress]) {
    progress.steps = rollout_steps(steps);
    progress.step_timeout = Some(RunOptions::default().node_timeout);
    if progress.kind == OperationKind::TalosUpgrade {
        progress.steps_word = "nodes".into();
        progress.steps_title = "Nodes".into();
    }
}

/// A rollout journal that did not end, as the progress of an interrupted run: where it
/// stopped and who ran it; its action resumes it (`resumable`). `None` when it ended.
pub fn interrupted_rollout(summary: &RolloutSummary) -> Option<OperationProgress> {
    let at = summary
        .first_unfinished()
        .filter(|_| summary.outcome.is_none())?;
    let (cluster, target) = (summary.cluster.clone(), summary.target.clone());
    let action = match summary.kind {
        RolloutKind::TalosUpgrade => MutatingAction::UpgradeTalos { cluster, target },
        RolloutKind::KubernetesUpgrade => MutatingAction::UpgradeKubernetes { cluster, target },
    };
    let kind = OperationKind::of(&action);
    let (what, cluster) = (action.describe(), &summary.cluster);
    let headline = format!("{what} in {cluster}");
    let mut progress =
        OperationProgress::start(kind, cluster, &what, headline, kind.cancel(), None);
    shape_rollout(&mut progress, &summary.steps);
    progress.lines.clear();
    progress.say(
        None,
        format!(
            "journal: stopped at node {} of {}; r resumes after the guards pass again",
            at + 1,
            summary.steps.len()
        ),
    );
    progress.outcome = Some(Err(format!(
        "interrupted: its run ({}) did not end; r resumes it from its journal",
        summary.holder
    )));
    progress.resumable = Some(action);
    Some(progress)
}

fn rollout_step(index: usize, total: usize, step: &StepProgress) -> ProgressEvent {
    let detail = step.error.clone().unwrap_or_else(|| step.detail.clone());
    let state = match step.phase {
        StepPhase::Pending => StepState::Pending,
        StepPhase::Done => StepState::Done(detail),
        StepPhase::Skipped => StepState::Skipped(detail),
        StepPhase::Failed => StepState::Failed(detail),
        phase => StepState::Running(format!("{}: {detail}", phase.as_str())),
    };
    ProgressEvent::Step {
        index,
        total,
        label: format!("{}: {}", step.node, step.label),
        state,
    }
}

/// A provision's VMs as its steps (`provision::runner`'s events): one step per VM in the order
/// planned (a VM first reported under another name joins the end), running until it joined
/// (done) or failed or was terminated; each report a line too, a note a line, and a failed VM
/// the provider knows by id offers its terminate. The end is the run's result, told apart.
#[derive(Debug, Clone)]
pub struct ProvisionSteps {
    /// The cluster's key in taloscope's config and the provider, as a terminate names them.
    cluster: String,
    provider: String,
    names: Vec<String>,
}

impl ProvisionSteps {
    pub fn new(cluster: &str, provider: &str, names: Vec<String>) -> ProvisionSteps {
        ProvisionSteps {
            cluster: cluster.to_string(),
            provider: provider.to_string(),
            names,
        }
    }

    /// A provision's progress: every VM known so far a pending step, counted as joined.
    pub fn shape(&self, progress: &mut OperationProgress) {
        progress.steps = self.names.iter().map(|n| StepRow::pending(n)).collect();
        progress.steps_word = "joined".into();
        progress.steps_title = "VMs".into();
    }

    pub fn events(&mut self, event: &ProvisionEvent) -> Vec<ProgressEvent> {
        let vm = match event {
            ProvisionEvent::Vm(vm) => vm,
            ProvisionEvent::Note(text) => return vec![ProgressEvent::Line(text.clone())],
            ProvisionEvent::Finished(_) => return Vec::new(),
        };
        let index = match self.names.iter().position(|n| *n == vm.name) {
            Some(i) => i,
            None => {
                self.names.push(vm.name.clone());
                self.names.len() - 1
            }
        };
        let ip = vm
            .ip
            .as_deref()
            .map_or(String::new(), |ip| format!(" {ip}"));
        let mut detail = format!("{} ({}/{}){ip}", vm.stage.as_str(), vm.state, vm.lcm_state);
        if let Some(reason) = &vm.reason {
            detail.push_str(&format!(": {reason}"));
        }
        let state = match vm.stage {
            ProvisionStage::Joined => StepState::Done(detail),
            ProvisionStage::Failed | ProvisionStage::Terminated => StepState::Failed(detail),
            _ => StepState::Running(detail),
        };
        let mut events = vec![
            ProgressEvent::Step {
                index,
                total: self.names.len(),
                label: vm.name.clone(),
                state,
            },
            ProgressEvent::Line(vm.line()),
        ];
        if let (ProvisionStage::Failed, Some(id)) = (vm.stage, vm.id) {
            events.push(ProgressEvent::Offer(Offer {
                subject: vm.name.clone(),
                reason: vm.reason.clone().unwrap_or_else(|| vm.lcm_state.clone()),
                action: MutatingAction::TerminateVm {
                    cluster: self.cluster.clone(),
                    provider: self.provider.clone(),
                    vm: id.to_string(),
                },
            }));
        }
        events
    }
}

/// What provision journals left (each VM with its cluster's key) as one provision's progress
/// on the first of `clusters`: each VM a step in its last known state, a failed one offering
/// its terminate; it runs while some are followed again, else it ended with them failed.
pub fn provisions_left(
    clusters: &[String],
    vms: &[(String, JournalEntry)],
    now: Option<u64>,
) -> Option<OperationProgress> {
    let cluster = clusters.first()?;
    let names: Vec<String> = vms.iter().map(|(_, e)| e.progress.name.clone()).collect();
    let following = vms.iter().any(|(_, e)| !e.progress.stage.is_final());
    let left = if following {
        "the unfinished followed again"
    } else {
        "failed"
    };
    let headline = format!(
        "Provision of {}, {} VM(s) from the journal, {left}",
        clusters.join(", "),
        vms.len()
    );
    let kind = OperationKind::Provision;
    let mut progress = OperationProgress::start(
        kind,
        cluster,
        &headline,
        headline.clone(),
        kind.cancel(),
        now,
    );
    ProvisionSteps::new(cluster, "", names.clone()).shape(&mut progress);
    for (key, entry) in vms {
        let mut steps = ProvisionSteps::new(key, &entry.provider, names.clone());
        for event in steps.events(&ProvisionEvent::Vm(entry.progress.clone())) {
            progress.fold(now, event);
        }
    }
    if !following {
        let end = format!("{} VM(s) failed: x terminates one", vms.len());
        progress.fold(now, ProgressEvent::Finished(Err(end)));
    }
    Some(progress)
}

/// A create's phases, every one pending: its step list from the start.
pub fn create_steps() -> Vec<StepRow> {
    CreatePhase::ALL
        .iter()
        .map(|p| StepRow::pending(p.title()))
        .collect()
}

/// A create's or delete's event: a phase is a step of the create's phases and a line; a note
/// a line. The end is the runner's result, told apart.
pub fn lifecycle(event: &LifecycleEvent) -> Vec<ProgressEvent> {
    match event {
        LifecycleEvent::Phase { phase, state } => {
            let index = CreatePhase::ALL
                .iter()
                .position(|p| p == phase)
                .unwrap_or(0);
            let state = match state {
                PhaseState::Waiting(d) => StepState::Running(d.clone()),
                PhaseState::Done(d) => StepState::Done(d.clone()),
                PhaseState::Failed(d) => StepState::Failed(d.clone()),
            };
            vec![
                ProgressEvent::Step {
                    index,
                    total: CreatePhase::ALL.len(),
                    label: phase.title().to_string(),
                    state,
                },
                ProgressEvent::Line(event.line()),
            ]
        }
        LifecycleEvent::Note { .. } => vec![ProgressEvent::Line(event.line())],
        LifecycleEvent::Finished { .. } => Vec::new(),
    }
}

/// How a create's run ends on screen: the cluster up, or why it stopped and how to resume it.
pub fn create_end(cluster: &str, result: Result<(), String>) -> Result<String, String> {
    match result {
        Ok(()) => Ok(format!(
            "{cluster} is up: its talos and kube contexts are written; the fleet shows it"
        )),
        Err(why) => Err(format!(
            "stopped: {why}; n and Enter on the same request resume it from the journal"
        )),
    }
}

/// The question a create asks of a VM's maintenance API certificate
/// (`cluster_lifecycle::FingerprintPolicy::Ask`), numbered `id`.
pub fn fingerprint_question(id: u64, vm: &str, address: &str, fingerprint: &str) -> ProgressEvent {
    ProgressEvent::Ask {
        id,
        about: format!("{vm} ({address})"),
        question: format!(
            "maintenance certificate fingerprint {fingerprint}: is it this VM's? ({})",
            crate::cluster_lifecycle::FINGERPRINT_SHOWN_AT
        ),
    }
}

/// The counts of a scale's Machines, in the order a Machine goes through them.
const MACHINE_COUNTS: [&str; 5] = ["created", "got a node", "Ready", "deleting", "deleted"];

/// What a scale counts from its start (`Machines 2 -> 3`, every count at 0) and the check it
/// reads on each poll: etcd for a control plane; workers join no etcd
/// (`capi_scale::run` reads it for control planes only).
pub fn scale_start(plan: &ScalePlan) -> (Tally, Vec<Check>) {
    let tally = Tally {
        label: "Machines".into(),
        span: format!("{} -> {}", plan.from, plan.to),
        counts: MACHINE_COUNTS.iter().map(|c| (c.to_string(), 0)).collect(),
    };
    let mut etcd = Check::new("etcd");
    if plan.role == MachineRole::Worker {
        etcd.not_read = Some("workers do not join etcd".into());
    }
    (tally, vec![etcd])
}

/// A scale's event: a Machine's change is counted, its state kept and its line said; an etcd
/// poll is the check; a wait is said and kept.
pub fn scale(event: ScaleEvent) -> Vec<ProgressEvent> {
    match event {
        ScaleEvent::Note { text } => vec![ProgressEvent::Line(text)],
        ScaleEvent::Machine(change) => {
            let (machine, count, state) = match &change {
                MachineChange::Created { machine, phase } => {
                    (machine, MACHINE_COUNTS[0], format!("created ({phase})"))
                }
                MachineChange::GotNode { machine, node } => {
                    (machine, MACHINE_COUNTS[1], format!("node {node}"))
                }
                MachineChange::Ready { machine, node } => {
                    (machine, MACHINE_COUNTS[2], format!("node {node} Ready"))
                }
                MachineChange::Deleting { machine } => {
                    (machine, MACHINE_COUNTS[3], "deleting".to_string())
                }
                MachineChange::Deleted { machine } => {
                    (machine, MACHINE_COUNTS[4], "deleted".to_string())
                }
            };
            vec![
                ProgressEvent::Count(count.to_string()),
                ProgressEvent::Subject {
                    name: machine.clone(),
                    state,
                },
                ProgressEvent::Line(change.line()),
            ]
        }
        ScaleEvent::Etcd {
            healthy, reason, ..
        } => vec![ProgressEvent::Check {
            name: "etcd".into(),
            passed: healthy,
            reason,
        }],
        ScaleEvent::Waiting { reason } => vec![
            ProgressEvent::Line(format!("waiting: {reason}")),
            ProgressEvent::Waiting(reason),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_line_names_the_node_state() {
        let events = node_action_line("cp-2", "cp-2: rebooting: waiting for apid".into());
        assert_eq!(
            events[0],
            ProgressEvent::Subject {
                name: "cp-2".into(),
                state: "rebooting: waiting for apid".into()
            }
        );
        assert_eq!(node_action_line("cp-2", "drained".into()).len(), 1);
    }

    #[test]
    fn a_nodes_phase_is_its_steps_state_and_a_line() {
        let line = |text: &str| OperationEvent::Line {
            index: 1,
            total: 3,
            elapsed: std::time::Duration::from_secs(4),
            timeout: std::time::Duration::from_secs(900),
            text: text.into(),
        };
        assert_eq!(
            node_phases(&line("w-2: checks: running, Ready")),
            [
                ProgressEvent::Step {
                    index: 1,
                    total: 3,
                    label: String::new(),
                    state: StepState::Running("checks: running, Ready".into()),
                },
                ProgressEvent::Line("w-2: checks: running, Ready".into()),
            ]
        );
        let warning = node_phases(&line("w-2: warning: deprecated field"));
        assert_eq!(
            warning,
            [ProgressEvent::Line("w-2: warning: deprecated field".into())]
        );
    }

    #[test]
    fn a_rollout_step_is_a_step_and_its_halt_a_failure() {
        let mut step = StepProgress::pending("cp-1", "upgrade to v1.12.0");
        step.phase = StepPhase::Rebooting;
        step.detail = "waiting for apid".into();
        let event = RolloutEvent::Step {
            cluster: "prod".into(),
            index: 2,
            progress: step,
        };
        assert_eq!(
            rollout(&event),
            [ProgressEvent::Step {
                index: 2,
                total: 3,
                label: "cp-1: upgrade to v1.12.0".into(),
                state: StepState::Running("rebooting: waiting for apid".into()),
            }]
        );
        let halted = RolloutEvent::Finished {
            cluster: "prod".into(),
            outcome: RolloutOutcome::Halted("cp-1 not ready".into()),
        };
        assert_eq!(
            rollout(&halted),
            [ProgressEvent::Finished(
                Err("halted: cp-1 not ready".into())
            )]
        );
    }

    #[test]
    fn a_machine_change_is_counted_and_kept() {
        let events = scale(ScaleEvent::Machine(MachineChange::GotNode {
            machine: "m-1".into(),
            node: "w-3".into(),
        }));
        assert_eq!(events[0], ProgressEvent::Count("got a node".into()));
        assert_eq!(
            events[1],
            ProgressEvent::Subject {
                name: "m-1".into(),
                state: "node w-3".into()
            }
        );
        assert_eq!(
            events[2],
            ProgressEvent::Line("Machine m-1: node w-3".into())
        );
    }

    #[test]
    fn a_phase_is_a_step_and_the_end_is_told_apart() {
        let phase = LifecycleEvent::Phase {
            phase: CreatePhase::Booted,
            state: PhaseState::Done("3 VMs".into()),
        };
        let events = lifecycle(&phase);
        assert!(matches!(
            &events[0],
            ProgressEvent::Step { index: 1, total: 8, state: StepState::Done(d), .. } if d == "3 VMs"
        ));
        let summary = crate::cluster_lifecycle::RunSummary {
            cluster: "lab".into(),
            what: "delete".into(),
            reached: None,
            error: None,
        };
        assert!(lifecycle(&LifecycleEvent::Finished { summary }).is_empty());
    }

    #[test]
    fn a_vm_is_a_step_and_a_failed_one_offers_its_terminate() {
        let vm = |name: &str, stage, lcm: &str| crate::provision::VmProgress {
            id: Some(8),
            name: name.into(),
            state: "ACTIVE".into(),
            lcm_state: lcm.into(),
            ip: None,
            stage,
            reason: None,
        };
        let mut steps = ProvisionSteps::new("prod", "one", vec!["prod-worker-3".into()]);
        let other = vm("prod-worker-9", ProvisionStage::Booting, "BOOT");
        let events = steps.events(&ProvisionEvent::Vm(other));
        assert!(matches!(
            &events[0],
            ProgressEvent::Step { index: 1, total: 2, state: StepState::Running(d), .. }
                if d == "booting (ACTIVE/BOOT)"
        ));
        assert_eq!(events.len(), 2, "a line, no offer: {events:?}");
        let failed = vm("prod-worker-3", ProvisionStage::Failed, "BOOT_FAILURE");
        let events = steps.events(&ProvisionEvent::Vm(failed));
        assert!(matches!(
            &events[0],
            ProgressEvent::Step { index: 0, total: 2, state: StepState::Failed(d), .. }
                if d == "failed (ACTIVE/BOOT_FAILURE)"
        ));
        let terminate = MutatingAction::TerminateVm {
            cluster: "prod".into(),
            provider: "one".into(),
            vm: "8".into(),
        };
        assert_eq!(
            events[2],
            ProgressEvent::Offer(Offer {
                subject: "prod-worker-3".into(),
                reason: "BOOT_FAILURE".into(),
                action: terminate,
            })
        );
    }
}
