//! The Cluster API scale, carried out: take the workload cluster's rollout Lease, read both
//! sides again and re-check every guard, patch `spec.replicas` on the management cluster,
//! then follow the Machines poll by poll (etcd health checked on each poll for control
//! planes) until the scale is done, fails or runs out of time. Events go out on a channel,
//! and the cluster's action journal keeps the run (begun before the Lease, each new line a
//! step, then its outcome), so a killed scale is reported interrupted on the next start.
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::mpsc;

use crate::approval::ApprovedAction;
use crate::fleet::RolloutLease;
use crate::guards::{Guard, Verdict, blocking};
use crate::journal::action::{RunningAction, begin_action};
use crate::rollout::LeaseProgress;
use crate::run_holder::RunHolder;

use super::follow::{
    MachineChange, MachineSeen, ScaleState, machine_changes, machines_done, machines_seen,
    scale_state,
};
use super::guards::{ScaleFacts, follow_guards, scale_guards};
use super::live::{ScaleSources, ScaleView};
use super::plan::{ScalePlan, plan_scale};

/// The Lease's kind while a scale holds it.
pub const SCALE_LEASE_KIND: &str = "capi-scale";
/// Polls in a row etcd may go unread (a control plane's endpoint going away) before the
/// scale stops: unread is not healthy.
const UNREAD_ETCD_POLLS: u32 = 3;

#[derive(Debug, Clone)]
pub struct ScaleOptions {
    /// Between two looks at the Machines and etcd.
    pub poll: Duration,
    /// The whole follow, from the patch on.
    pub timeout: Duration,
    pub lease_duration: Duration,
    /// The acknowledgements typed.
    pub acks: Vec<String>,
    /// Where the action journal is kept.
    pub state_dir: PathBuf,
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

/// Runs the approved scale of `plan`.
pub async fn run_scale(
    approved: &ApprovedAction,
    plan: &ScalePlan,
    sources: &ScaleSources,
    options: &ScaleOptions,
    events: &mpsc::Sender<ScaleEvent>,
) -> ScaleOutcome {
    let started = Instant::now();
    let journal = begin_action(
        &options.state_dir,
        &plan.cluster,
        &approved.action().describe(),
        None,
    )
    .map(RunningAction::new);
    let (result, polls, healthy_polls) = match &journal {
        Err(e) => (Err(format!("refused: {e}")), 0, 0),
        Ok(journal) => {
            let mut run = Follow {
                plan,
                sources,
                options,
                events,
                journal,
                polls: 0,
                healthy_polls: 0,
            };
            let result = run.run(approved).await;
            journal.end(&result);
            (result, run.polls, run.healthy_polls)
        }
    };
    ScaleOutcome {
        object: plan.object(),
        from: plan.from,
        to: plan.to,
        succeeded: result.is_ok(),
        message: result.unwrap_or_else(|e| e),
        polls,
        etcd_healthy_polls: healthy_polls,
        seconds: started.elapsed().as_secs(),
    }
}

struct Follow<'a> {
    plan: &'a ScalePlan,
    sources: &'a ScaleSources,
    options: &'a ScaleOptions,
    events: &'a mpsc::Sender<ScaleEvent>,
    journal: &'a RunningAction,
    polls: u32,
    healthy_polls: u32,
}

impl Follow<'_> {
    async fn run(&mut self, approved: &ApprovedAction) -> Result<String, String> {
        if !self.plan.is_approved_by(approved.action()) {
            return Err(format!(
                "the approval ({}) is not this plan's",
                approved.action().describe()
            ));
        }
        let holder = RunHolder::this_process().to_string();
        let mut lease = self.take_lease(&holder).await?;
        let result = self.patch_and_follow(&holder, lease.as_mut()).await;
        if let Some(lease) = lease
            && let Err(e) = lease.release().await
        {
            self.note(format!("the rollout lease was not released: {e}"))
                .await;
        }
        result
    }

    async fn take_lease(&self, holder: &str) -> Result<Option<RolloutLease>, String> {
        let Some(kube) = &self.sources.workload else {
            self.note(format!(
                "{} has no kube context: no rollout Lease taken",
                self.plan.cluster
            ))
            .await;
            return Ok(None);
        };
        let target = format!("{} {}", self.plan.object(), self.plan.to);
        let count = (self.plan.create + self.plan.delete) as usize;
        kube.acquire_change_lease(
            &self.plan.cluster,
            holder,
            (SCALE_LEASE_KIND, &target, count),
            self.options.lease_duration,
        )
        .await
        .map(Some)
        .map_err(|e| format!("refused: {e}"))
    }

    async fn patch_and_follow(
        &mut self,
        holder: &str,
        mut lease: Option<&mut RolloutLease>,
    ) -> Result<String, String> {
        let view = self.sources.read().await?;
        self.recheck(&view, holder)?;
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
        self.note(format!(
            "{}: spec.replicas {} -> {replicas}",
            self.plan.object(),
            self.plan.from
        ))
        .await;
        let mut seen = machines_seen(self.plan, &view.tree);
        let mut waiting = String::new();
        let mut unread = 0;
        let deadline = Instant::now() + self.options.timeout;
        loop {
            tokio::time::sleep(self.options.poll).await;
            self.polls += 1;
            let view = match self.sources.read().await {
                Ok(view) => view,
                Err(e) if Instant::now() < deadline => {
                    self.note(format!("management cluster not read: {e}")).await;
                    continue;
                }
                Err(e) => return Err(format!("timed out: {e}")),
            };
            let now = machines_seen(self.plan, &view.tree);
            for change in machine_changes(&seen, &now) {
                self.send(ScaleEvent::Machine(change)).await;
            }
            self.check_health(&view, holder, &mut unread).await?;
            if let Some(lease) = lease.as_deref_mut() {
                self.renew(lease, &now).await?;
            }
            seen = now;
            match scale_state(self.plan, &view.tree, &view.status) {
                ScaleState::Done => {
                    return Ok(format!("{} Machines, every node Ready", self.plan.to));
                }
                ScaleState::Failed(why) => return Err(why),
                ScaleState::Waiting(why) if Instant::now() >= deadline => {
                    return Err(format!(
                        "timed out after {} s waiting for: {why}",
                        self.options.timeout.as_secs()
                    ));
                }
                ScaleState::Waiting(why) if why != waiting => {
                    waiting = why.clone();
                    self.send(ScaleEvent::Waiting { reason: why }).await;
                }
                ScaleState::Waiting(_) => {}
            }
        }
    }

    /// Every guard again, on a plan made from what is read now: it must be the same scale.
    fn recheck(&self, view: &ScaleView, holder: &str) -> Result<(), String> {
        let plan = self.plan;
        let now = plan_scale(
            &plan.cluster,
            &plan.owner,
            &view.tree,
            (
                plan.role,
                Some(plan.name.as_str()).filter(|_| plan.role == crate::capi::MachineRole::Worker),
            ),
            plan.to,
        )
        .map_err(|e| e.to_string())?;
        if now.from != plan.from {
            return Err(format!(
                "{} spec.replicas is {} now, not {} as planned: plan again",
                plan.object(),
                now.from,
                plan.from
            ));
        }
        let facts = ScaleFacts {
            plan: &now,
            tree: &view.tree,
            status: &view.status,
            me: holder,
        };
        let guards = scale_guards(&facts);
        if blocking(&guards, &self.options.acks) {
            return Err(format!("refused by its guards: {}", failing(&guards)));
        }
        Ok(())
    }

    /// The follow's guards on this poll; etcd of a control-plane scale must be healthy (read
    /// at most [`UNREAD_ETCD_POLLS`] times in a row unread).
    async fn check_health(
        &mut self,
        view: &ScaleView,
        holder: &str,
        unread: &mut u32,
    ) -> Result<(), String> {
        let facts = ScaleFacts {
            plan: self.plan,
            tree: &view.tree,
            status: &view.status,
            me: holder,
        };
        let guards = follow_guards(&facts);
        let [rollout, etcd] = guards.as_slice() else {
            return Err("the follow's guards are not what the runner expects".into());
        };
        if rollout.verdict == Verdict::Fail {
            return Err(format!("stopped: {}", rollout.reason));
        }
        if self.plan.role == crate::capi::MachineRole::Worker {
            return Ok(());
        }
        let members = view.status.etcd.quorum.members;
        let healthy = etcd.verdict == Verdict::Pass;
        self.send(ScaleEvent::Etcd {
            healthy,
            members,
            reason: etcd.reason.clone(),
        })
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
            (false, _) => Err(format!("etcd unhealthy while scaling: {}", etcd.reason)),
        }
    }

    async fn renew(&self, lease: &mut RolloutLease, now: &[MachineSeen]) -> Result<(), String> {
        let progress = LeaseProgress {
            node_index: machines_done(self.plan, &self.plan.machines, now),
            current_node: None,
            phase: "scaling".into(),
        };
        lease.renew(&progress).await.map_err(|e| e.to_string())
    }

    async fn note(&self, text: String) {
        self.send(ScaleEvent::Note { text }).await;
    }

    async fn send(&self, event: ScaleEvent) {
        // Each poll reads etcd again: a line is written once, when it changes.
        let line = event.line();
        if self.journal.snapshot().step != line {
            self.journal.record(|r| r.step = line);
        }
        let _ = self.events.send(event).await;
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
