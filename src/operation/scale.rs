//! The Cluster API scale as an operation: before the patch, both sides are read again and a
//! plan made from what is read must be the same scale with every guard passing; then the
//! workload cluster's rollout Lease is taken and `spec.replicas` patched on the management
//! cluster, and the Machines are followed poll by poll (etcd health checked on each poll for control
//! planes) until the scale is done or fails. The Lease is given back however the run ends.
use tokio::sync::mpsc;

use super::{Operation, OperationKind, Step, StepContext, StepError};
use crate::approval::MutatingAction;
use crate::capi::MachineRole;
use crate::capi_scale::follow::{MachineSeen, machines_done, machines_seen};
use crate::capi_scale::run::{SCALE_LEASE_KIND, UNREAD_ETCD_POLLS};
use crate::capi_scale::{
    ScaleEvent, ScaleFacts, ScaleOptions, ScaleOutcome, ScalePlan, ScaleSources, ScaleState,
    ScaleView, follow_guards, machine_changes, plan_scale, scale_guards, scale_state,
};
use crate::fleet::RolloutLease;
use crate::guards::{Guard, GuardId, Verdict};
use crate::rollout::LeaseProgress;
use crate::run_holder::RunHolder;

/// A planned scale with both clusters' connections; its typed events go to `events`.
pub struct CapiScale {
    plan: ScalePlan,
    sources: ScaleSources,
    options: ScaleOptions,
    events: mpsc::Sender<ScaleEvent>,
    holder: String,
    lease: Option<RolloutLease>,
    /// The Machines as last seen.
    seen: Vec<MachineSeen>,
    /// What the scale waits for, as last told.
    waiting: String,
    /// The last line journalled (each poll reads etcd again: a line is kept once).
    told: String,
    polls: u32,
    healthy_polls: u32,
}

impl CapiScale {
    pub fn new(
        plan: ScalePlan,
        sources: ScaleSources,
        options: ScaleOptions,
        events: mpsc::Sender<ScaleEvent>,
    ) -> CapiScale {
        CapiScale {
            plan,
            sources,
            options,
            events,
            holder: RunHolder::this_process().to_string(),
            lease: None,
            seen: Vec::new(),
            waiting: String::new(),
            told: String::new(),
            polls: 0,
            healthy_polls: 0,
        }
    }

    /// How the run ended, `seconds` after it began.
    pub fn outcome(&self, result: Result<String, String>, seconds: u64) -> ScaleOutcome {
        ScaleOutcome {
            object: self.plan.object(),
            from: self.plan.from,
            to: self.plan.to,
            succeeded: result.is_ok(),
            message: result.unwrap_or_else(|e| e),
            polls: self.polls,
            etcd_healthy_polls: self.healthy_polls,
            seconds,
        }
    }

    async fn send(&mut self, event: ScaleEvent, step: &StepContext<'_>) {
        let line = event.line();
        if self.told != line {
            step.say(line.clone());
            self.told = line;
        }
        let _ = self.events.send(event).await;
    }

    async fn note(&mut self, text: String, step: &StepContext<'_>) {
        self.send(ScaleEvent::Note { text }, step).await;
    }

    /// Every guard on a plan made from what is read now: it must be the same scale.
    fn recheck(&self, view: &ScaleView) -> Vec<Guard> {
        let plan = &self.plan;
        let deployment = Some(plan.name.as_str()).filter(|_| plan.role == MachineRole::Worker);
        let now = match plan_scale(
            &plan.cluster,
            &plan.owner,
            &view.tree,
            (plan.role, deployment),
            plan.to,
        ) {
            Ok(now) => now,
            Err(e) => return vec![Guard::fail(GuardId::ScaleSettled, e.to_string())],
        };
        if now.from != plan.from {
            return vec![Guard::fail(
                GuardId::ScaleSettled,
                format!(
                    "{} spec.replicas is {} now, not {} as planned: plan again",
                    plan.object(),
                    now.from,
                    plan.from
                ),
            )];
        }
        scale_guards(&ScaleFacts {
            plan: &now,
            tree: &view.tree,
            status: &view.status,
            me: &self.holder,
        })
    }

    async fn patch(&mut self, step: &StepContext<'_>) -> Result<String, StepError> {
        match self.sources.workload.clone() {
            None => {
                let text = format!(
                    "{} has no kube context: no rollout Lease taken",
                    self.plan.cluster
                );
                self.note(text, step).await;
            }
            Some(kube) => {
                let target = format!("{} {}", self.plan.object(), self.plan.to);
                let count = (self.plan.create + self.plan.delete) as usize;
                let lease = kube
                    .acquire_change_lease(
                        &self.plan.cluster,
                        &self.holder,
                        (SCALE_LEASE_KIND, &target, count),
                        self.options.lease_duration,
                    )
                    .await
                    .map_err(|e| format!("refused: {e}"))?;
                self.lease = Some(lease);
            }
        }
        let view = self.sources.read().await?;
        self.seen = machines_seen(&self.plan, &view.tree);
        let replicas = self
            .sources
            .management
            .capi_scale(
                self.plan.kind,
                self.sources.version,
                (&self.plan.namespace, &self.plan.name),
                self.plan.to,
            )
            .await
            .map_err(|e| crate::error_chain(&e))?;
        let line = format!(
            "{}: spec.replicas {} -> {replicas}",
            self.plan.object(),
            self.plan.from
        );
        self.note(line.clone(), step).await;
        Ok(line)
    }

    async fn follow(&mut self, step: &StepContext<'_>) -> Result<String, StepError> {
        let mut unread = 0;
        loop {
            step.wait(self.options.poll, "the Machines").await?;
            self.polls += 1;
            let view = match self.sources.read().await {
                Ok(view) => view,
                Err(e) => {
                    // Bounded by the step's timeout.
                    self.note(format!("management cluster not read: {e}"), step)
                        .await;
                    continue;
                }
            };
            let now = machines_seen(&self.plan, &view.tree);
            for change in machine_changes(&self.seen, &now) {
                self.send(ScaleEvent::Machine(change), step).await;
            }
            self.check_health(&view, &mut unread, step).await?;
            self.renew(&now).await?;
            self.seen = now;
            match scale_state(&self.plan, &view.tree, &view.status) {
                ScaleState::Done => {
                    return Ok(format!("{} Machines, every node Ready", self.plan.to));
                }
                ScaleState::Failed(why) => return Err(why.into()),
                ScaleState::Waiting(why) if why != self.waiting => {
                    self.waiting = why.clone();
                    self.send(ScaleEvent::Waiting { reason: why }, step).await;
                }
                ScaleState::Waiting(_) => {}
            }
        }
    }

    /// The follow's guards on this poll; etcd of a control-plane scale must be healthy (read
    /// at most [`UNREAD_ETCD_POLLS`] times in a row unread).
    async fn check_health(
        &mut self,
        view: &ScaleView,
        unread: &mut u32,
        step: &StepContext<'_>,
    ) -> Result<(), StepError> {
        let guards = follow_guards(&ScaleFacts {
            plan: &self.plan,
            tree: &view.tree,
            status: &view.status,
            me: &self.holder,
        });
        let [rollout, etcd] = guards.as_slice() else {
            return Err("the follow's guards are not what the runner expects"
                .to_string()
                .into());
        };
        if rollout.verdict == Verdict::Fail {
            return Err(format!("stopped: {}", rollout.reason).into());
        }
        if self.plan.role == MachineRole::Worker {
            return Ok(());
        }
        let members = view.status.etcd.quorum.members;
        let healthy = etcd.verdict == Verdict::Pass;
        let reason = etcd.reason.clone();
        self.send(
            ScaleEvent::Etcd {
                healthy,
                members,
                reason: reason.clone(),
            },
            step,
        )
        .await;
        let unreadable = view.status.error.is_some() || members == 0;
        match (healthy, unreadable) {
            (true, _) => {
                self.healthy_polls += 1;
                *unread = 0;
                Ok(())
            }
            (false, true) if *unread + 1 < UNREAD_ETCD_POLLS => {
                *unread += 1;
                Ok(())
            }
            (false, _) => Err(format!("etcd unhealthy while scaling: {reason}").into()),
        }
    }

    async fn renew(&mut self, now: &[MachineSeen]) -> Result<(), String> {
        let Some(lease) = self.lease.as_mut() else {
            return Ok(());
        };
        let progress = LeaseProgress {
            node_index: machines_done(&self.plan, &self.plan.machines, now),
            current_node: None,
            phase: "scaling".into(),
        };
        lease.renew(&progress).await.map_err(|e| e.to_string())
    }
}

impl Operation for CapiScale {
    fn kind(&self) -> OperationKind {
        OperationKind::Scale
    }

    fn action(&self) -> MutatingAction {
        self.plan.action()
    }

    fn steps(&self) -> Vec<Step> {
        let object = self.plan.object();
        vec![
            Step {
                what: format!(
                    "patch {object} spec.replicas {} -> {}",
                    self.plan.from, self.plan.to
                ),
                timeout: self.options.lease_duration,
            },
            Step {
                what: format!("follow the Machines of {object} until the scale is done"),
                timeout: self.options.timeout,
            },
        ]
    }

    /// Before the patch, every guard on what is read now; the follow checks its own on every
    /// poll (no other rollout, etcd healthy).
    async fn guards(&self, index: usize) -> Vec<Guard> {
        if index > 0 {
            return Vec::new();
        }
        match self.sources.read().await {
            Ok(view) => self.recheck(&view),
            Err(e) => vec![Guard::fail(
                GuardId::ScaleSettled,
                format!("the clusters were not read: {e}"),
            )],
        }
    }

    async fn run_step(
        &mut self,
        index: usize,
        step: &StepContext<'_>,
    ) -> Result<String, StepError> {
        match index {
            0 => self.patch(step).await,
            1 => self.follow(step).await,
            _ => Err(format!("the scale has no step {}", index + 1).into()),
        }
    }

    fn stopped_at(&self, index: usize) -> String {
        if index == 1 && !self.waiting.is_empty() {
            format!("; waiting for: {}", self.waiting)
        } else {
            String::new()
        }
    }

    async fn release(&mut self) -> Option<String> {
        crate::fleet::give_back(self.lease.take()).await
    }

    fn finished(&self, done: &[String]) -> String {
        done.last().cloned().unwrap_or_default()
    }
}
