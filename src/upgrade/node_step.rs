//! One node's upgrade: hand over etcd leadership when it leads, call the API its Talos version
//! has (legacy `MachineService.Upgrade`, or `ImageService.Pull` + `LifecycleService.Upgrade` +
//! `Reboot` from 1.13, cordoning and draining the Kubernetes node before that reboot and
//! uncordoning it once back), follow its Events across the reboot, and wait until it is done
//! (boot id changed, as talosctl's post-check has it).
use std::time::Duration;

use futures::{Stream, StreamExt};

use super::observe::{BootIdCheck, ClusterObserver, node_done, running_version, step_node};
use super::plan::{PlanStep, UpgradeApi, UpgradePlan, must_forfeit_leadership};
use super::runner::KindStep;
use crate::kube::drain::CORDONED_BY_TALOSCOPE;
use crate::kube::{DrainOptions, match_talos_node};
use crate::rollout::{StepPhase, StepReport};
use crate::talos::events::{SequenceAction, StepAction};
use crate::talos::{
    EventsItem, EventsOptions, ImageNamespace, ImagePullProgress, LegacyUpgrade, MachineEvent,
    MachineStage, RebootMode, TalosError, UpgradeProgress,
};

/// What one node's upgrade needs.
pub struct NodeUpgrade<'a> {
    pub observer: &'a ClusterObserver,
    pub plan: &'a UpgradePlan,
    pub step: &'a PlanStep,
    pub poll_interval: Duration,
    /// Cordon and drain the Kubernetes node before the reboot on the LifecycleService path
    /// (talosctl's `--drain`, on by default); `None`: don't. The legacy path's server
    /// sequence drains by itself.
    pub drain: Option<DrainOptions>,
    /// How long the legacy `MachineService.Upgrade` may take to answer (it pulls the installer
    /// first); past it the node is followed by polling instead.
    pub legacy_call_bound: Duration,
}

impl NodeUpgrade<'_> {
    fn kube_checked(&self) -> bool {
        self.observer.kube.is_some()
    }

    /// The boot id before the upgrade call, or why the check is skipped (said in the log).
    async fn boot_id_before(&self, report: &StepReport) -> Result<BootIdCheck, String> {
        let read = self.observer.talos.boot_id(&self.step.address).await;
        let check =
            BootIdCheck::from_read(read).map_err(|e| format!("reading the boot id: {e}"))?;
        match &check {
            BootIdCheck::Before(id) => report.log(format!("boot id before: {id}")),
            BootIdCheck::Skipped(why) => {
                report.detail(why.clone());
                report.log(why);
            }
        }
        Ok(check)
    }

    /// Cordons and drains the step's Kubernetes node; its name when cordoned. Without a paired
    /// kube context, or with no Kubernetes node matching, there is nothing to drain.
    async fn cordon_and_drain(&self, report: &StepReport) -> Result<Option<String>, String> {
        let Some(options) = self.drain else {
            return Ok(None);
        };
        let Some(kube) = &self.observer.kube else {
            report.log("no paired kube context: not draining");
            return Ok(None);
        };
        let nodes = kube
            .nodes()
            .await
            .map_err(|e| format!("finding the Kubernetes node to drain: {e}"))?;
        let Some(name) =
            match_talos_node(&self.step.address, &self.step.node, &nodes).map(|n| n.name.clone())
        else {
            report.log("no Kubernetes node matches: not draining");
            return Ok(None);
        };
        let progress = |line: String| {
            report.detail(line.clone());
            report.log(line);
        };
        let drained = kube
            .cordon_and_drain(&name, options, &progress)
            .await
            .map_err(|e| format!("{e}; {name} stays cordoned"))?;
        report.log(format!(
            "drained {name}: {} pods evicted, {} DaemonSet or static pods left",
            drained.evicted.len(),
            drained.kept
        ));
        Ok(Some(name))
    }

    /// A killed run may have cordoned this node before its reboot: once the node is done, a
    /// cordon carrying taloscope's mark is undone; an operator's own cordon is left alone.
    async fn undo_own_cordon(&self) -> Result<(), String> {
        let Some(kube) = &self.observer.kube else {
            return Ok(());
        };
        let nodes = kube
            .nodes()
            .await
            .map_err(|e| format!("reading the Kubernetes node of {}: {e}", self.step.node))?;
        let ours = match_talos_node(&self.step.address, &self.step.node, &nodes)
            .filter(|n| n.unschedulable && n.cordoned_by.as_deref() == Some(CORDONED_BY_TALOSCOPE));
        if let Some(node) = ours {
            kube.uncordon_marked(&node.name)
                .await
                .map_err(|e| format!("uncordoning {}: {e}", node.name))?;
        }
        Ok(())
    }

    /// Makes the Kubernetes node schedulable again once the node is done.
    async fn uncordon(&self, report: &StepReport, name: &str) -> Result<(), String> {
        let Some(kube) = &self.observer.kube else {
            return Ok(());
        };
        report.detail(format!("uncordoning {name}"));
        kube.uncordon_marked(name)
            .await
            .map_err(|e| format!("uncordoning {name}: {e}"))?;
        report.log(format!("uncordoned {name}"));
        Ok(())
    }

    /// `Ok` once the boot id differs from the one before (or is not checked).
    async fn booted_again(&self, boot: &BootIdCheck) -> Result<(), String> {
        if matches!(boot, BootIdCheck::Skipped(_)) {
            return Ok(());
        }
        let now = self.observer.talos.boot_id(&self.step.address).await.ok();
        boot.verdict(now.as_deref())
    }

    async fn legacy(&self, report: &StepReport) -> Result<String, String> {
        let options = &self.plan.options;
        // UpgradeRequest.RebootMode has DEFAULT and POWERCYCLE only, and RebootRequest's FORCE
        // is not there before 1.12 (api/machine/machine.proto): refuse rather than drop it.
        if options.reboot_mode == RebootMode::Force {
            return Err(format!(
                "reboot mode force is not available through MachineService.Upgrade (Talos {} on {}): use default or powercycle",
                self.step
                    .from
                    .as_ref()
                    .map_or("before 1.13".to_string(), |v| v.to_string()),
                self.step.node
            ));
        }
        report.phase(StepPhase::Installing, "MachineService.Upgrade");
        let answer = self
            .observer
            .talos
            .upgrade(
                &self.step.address,
                &LegacyUpgrade {
                    bound: self.legacy_call_bound,
                    image: self.plan.image.clone(),
                    stage: options.stage,
                    force: false,
                    preserve: options.preserve,
                    powercycle: options.reboot_mode == RebootMode::Powercycle,
                },
            )
            .await;
        // The node may still be pulling, or may have answered into a connection that broke as
        // it went down: follow its version, boot id and stage rather than fail blindly.
        let ack = match answer {
            Ok(ack) => ack,
            Err(e @ TalosError::Timeout { .. }) => {
                report.log(format!("{e}; following the node instead"));
                return Ok(String::new());
            }
            Err(e) => return Err(e.to_string()),
        };
        report.log(format!(
            "{} ({})",
            if ack.ack.is_empty() {
                "upgrade accepted"
            } else {
                &ack.ack
            },
            self.plan.image
        ));
        Ok(ack.actor_id)
    }

    /// Pull, install, drain, reboot: the reboot's actor id and the node cordoned, if any.
    async fn lifecycle(&self, report: &StepReport) -> Result<(String, Option<String>), String> {
        let talos = &self.observer.talos;
        let address = self.step.address.as_str();
        let image = self.plan.image.as_str();
        report.phase(StepPhase::Pulling, image);
        let mut pull = talos
            .image_pull(address, image, ImageNamespace::System)
            .await
            .map_err(|e| e.to_string())?;
        let mut pulled = None;
        while let Some(item) = pull.next().await {
            match item.map_err(|e| e.to_string())? {
                ImagePullProgress::Layer {
                    layer_id, status, ..
                } => report.detail(format!("{layer_id} {status}")),
                ImagePullProgress::Pulled { image_name } => pulled = Some(image_name),
            }
        }
        let Some(name) = pulled else {
            return Err(format!(
                "ImageService.Pull of {image} ended without an image"
            ));
        };
        report.log(format!("pulled {name}"));
        report.phase(StepPhase::Installing, "LifecycleService.Upgrade");
        let mut install = talos
            .lifecycle_upgrade(address, &name, ImageNamespace::System)
            .await
            .map_err(|e| e.to_string())?;
        let mut last = String::new();
        let mut exit = None;
        while let Some(item) = install.next().await {
            match item.map_err(|e| e.to_string())? {
                UpgradeProgress::Message(m) => {
                    report.detail(m.clone());
                    report.log(&m);
                    last = m;
                }
                UpgradeProgress::Exited(code) => exit = Some(code),
            }
        }
        match exit {
            Some(0) => {}
            Some(code) => {
                return Err(format!(
                    "LifecycleService.Upgrade exited with code {code}: {last}"
                ));
            }
            None => return Err("LifecycleService.Upgrade ended without an exit code".into()),
        }
        let cordoned = self.cordon_and_drain(report).await?;
        report.phase(StepPhase::Rebooting, "MachineService.Reboot");
        let ack = talos
            .reboot(address, self.plan.options.reboot_mode)
            .await
            .map_err(|e| e.to_string())?;
        report.log("reboot requested");
        Ok((ack.actor_id, cordoned))
    }

    /// Follows the node's events for detail and polls the status until the node is done.
    async fn follow(
        &self,
        report: &StepReport,
        after: &AfterReboot<'_>,
        events: &mut (impl Stream<Item = EventsItem> + Unpin),
    ) -> Result<(), String> {
        let actor = after.actor;
        let mut phase = match self.step.api {
            Some(UpgradeApi::Lifecycle) => StepPhase::Rebooting,
            _ => StepPhase::Installing,
        };
        let mut reconnected = false;
        let mut listening = true;
        let mut poll = tokio::time::interval(self.poll_interval);
        loop {
            tokio::select! {
                item = events.next(), if listening => match item {
                    None => listening = false,
                    Some(EventsItem::Disconnected { .. }) => {
                        move_to(report, &mut phase, StepPhase::Rebooting, "node down; reconnecting".into());
                        report.log("went away (rebooting)");
                    }
                    Some(EventsItem::Resumed { .. }) => {
                        reconnected = true;
                        move_to(report, &mut phase, StepPhase::WaitingForReady, "back; waiting for ready".into());
                        report.log("answering again");
                    }
                    Some(EventsItem::Event(ev)) => {
                        if !reconnected && !actor.is_empty() && ev.actor_id != actor {
                            continue;
                        }
                        if let Some(p) = self.on_event(report, &ev.event)? {
                            // Once back, the new boot's own phases are part of the wait for ready.
                            let p = if reconnected { StepPhase::WaitingForReady } else { p };
                            let detail = describe(&ev.event);
                            move_to(report, &mut phase, p, detail);
                        }
                    }
                },
                _ = poll.tick() => {
                    let status = self.observer.status().await;
                    let done = node_done(&status, self.step, &self.plan.target, self.kube_checked());
                    let done = match done {
                        Ok(()) => self.booted_again(after.boot).await,
                        Err(why) => Err(why),
                    };
                    match done {
                        Ok(()) => {
                            // Between two polls a node may come back and pass every check; it
                            // still went through the wait, and the progress says so.
                            if phase != StepPhase::WaitingForReady {
                                move_to(report, &mut phase, StepPhase::WaitingForReady, "back on the target; checks pass".into());
                            }
                            if let BootIdCheck::Before(_) = after.boot {
                                report.log("boot id changed");
                            }
                            if let Some(name) = after.cordoned {
                                self.uncordon(report, name).await?;
                            }
                            report.log(format!("done on {}", self.plan.target));
                            return Ok(());
                        }
                        Err(why) => {
                            let answering = step_node(&status, self.step)
                                .is_some_and(|n| n.error.is_none());
                            if !answering && phase != StepPhase::Rebooting {
                                move_to(report, &mut phase, StepPhase::Rebooting, why);
                            } else if answering && phase != StepPhase::WaitingForReady
                                && on_target(&status, self) {
                                move_to(report, &mut phase, StepPhase::WaitingForReady, why);
                            } else if phase == StepPhase::WaitingForReady {
                                report.detail(why);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Logs an event; fails on a sequence error; says which phase it puts the step in.
    fn on_event(
        &self,
        report: &StepReport,
        event: &MachineEvent,
    ) -> Result<Option<StepPhase>, String> {
        match event {
            MachineEvent::Sequence {
                sequence,
                error: Some(error),
                ..
            } => Err(format!("sequence {sequence} failed: {error}")),
            MachineEvent::Sequence {
                sequence, action, ..
            } => {
                let what = match action {
                    SequenceAction::Start => "started",
                    SequenceAction::Stop => "finished",
                    SequenceAction::Noop => "noted",
                };
                report.log(format!("sequence {sequence} {what}"));
                Ok(None)
            }
            MachineEvent::Phase {
                phase,
                action: StepAction::Start,
            } => {
                report.log(format!("phase {phase} started"));
                let rebooting = matches!(phase.as_str(), "kexec" | "stopEverything" | "reboot");
                Ok(Some(if rebooting {
                    StepPhase::Rebooting
                } else {
                    StepPhase::Installing
                }))
            }
            MachineEvent::Task {
                task,
                action: StepAction::Start,
            } => {
                report.log(format!("task {task}"));
                Ok(None)
            }
            MachineEvent::MachineStatus(s) => {
                report.log(format!(
                    "stage {}{}",
                    s.stage.as_str(),
                    if s.ready { ", ready" } else { "" }
                ));
                Ok(match s.stage {
                    MachineStage::Booting | MachineStage::Running => {
                        Some(StepPhase::WaitingForReady)
                    }
                    _ => None,
                })
            }
            _ => Ok(None),
        }
    }
}

impl KindStep for NodeUpgrade<'_> {
    /// Runs the node's upgrade until it is done; `Err` says why not, verbatim from the node
    /// where it refused.
    async fn run(&self, report: &StepReport) -> Result<(), String> {
        let talos = &self.observer.talos;
        let address = self.step.address.as_str();
        let status = self.observer.status().await;
        if must_forfeit_leadership(&status, &self.step.node) {
            report.phase(StepPhase::Installing, "handing etcd leadership over");
            let answered = talos
                .etcd_forfeit_leadership(address)
                .await
                .map_err(|e| e.to_string())?;
            report.log(format!("etcd leadership forfeited ({answered})"));
        }
        let mut events = talos.events(
            address,
            EventsOptions {
                tail_events: 0,
                backoff_min: Duration::from_millis(100),
                backoff_max: Duration::from_secs(2),
                ..EventsOptions::default()
            },
        );
        let boot = self.boot_id_before(report).await?;
        let api = self.step.api.unwrap_or(UpgradeApi::MachineUpgrade);
        let (actor, cordoned) = match api {
            UpgradeApi::MachineUpgrade => (self.legacy(report).await?, None),
            UpgradeApi::Lifecycle => self.lifecycle(report).await?,
        };
        let after = AfterReboot {
            actor: &actor,
            boot: &boot,
            cordoned: cordoned.as_deref(),
        };
        self.follow(report, &after, &mut events).await
    }

    /// A node a killed run left in progress: waits until it is done (`true`) or back on its
    /// old version, running and ready (`false`: its step must run again).
    async fn settle(&self) -> Result<bool, String> {
        let mut poll = tokio::time::interval(self.poll_interval);
        loop {
            poll.tick().await;
            let status = self.observer.status().await;
            if node_done(&status, self.step, &self.plan.target, self.kube_checked()).is_ok() {
                self.undo_own_cordon().await?;
                return Ok(true);
            }
            let back_on_old = step_node(&status, self.step).is_some_and(|n| {
                n.error.is_none()
                    && n.ready
                    && n.stage == Some(MachineStage::Running)
                    && running_version(n).as_ref() != Some(&self.plan.target)
            });
            if back_on_old {
                return Ok(false);
            }
        }
    }
}

/// What the follow-up of an upgrade call needs from before it.
struct AfterReboot<'a> {
    /// The actor id of the sequence the call started (events before the reboot).
    actor: &'a str,
    boot: &'a BootIdCheck,
    /// The Kubernetes node cordoned for the reboot, to uncordon once done.
    cordoned: Option<&'a str>,
}

/// Reports a phase change, or only the detail when the phase stays.
fn move_to(report: &StepReport, current: &mut StepPhase, phase: StepPhase, detail: String) {
    if phase != *current {
        *current = phase;
        report.phase(phase, detail);
    } else {
        report.detail(detail);
    }
}

fn on_target(status: &crate::fleet::ClusterStatus, ctx: &NodeUpgrade<'_>) -> bool {
    step_node(status, ctx.step)
        .and_then(running_version)
        .is_some_and(|v| v == ctx.plan.target)
}

/// The detail line for an event that moved the step's phase ("phase kexec").
fn describe(event: &MachineEvent) -> String {
    match event {
        MachineEvent::Phase { phase, .. } => format!("phase {phase}"),
        MachineEvent::MachineStatus(s) => {
            let unmet: Vec<&str> = s.unmet_conditions.iter().map(|c| c.name.as_str()).collect();
            if unmet.is_empty() {
                format!("stage {}", s.stage.as_str())
            } else {
                format!("stage {} (unmet: {})", s.stage.as_str(), unmet.join(", "))
            }
        }
        _ => String::new(),
    }
}
