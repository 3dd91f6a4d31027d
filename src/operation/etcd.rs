//! An etcd action (disarm, defragment, snapshot, forfeit, remove member) as an operation:
//! its plan's steps one after another, each checked before the next starts, the plan's guards
//! read again from the cluster before each step. The calls follow talosctl's `etcd`
//! subcommands (`cmd/talosctl/cmd/talos/etcd.go`).
use super::node::rollout_lease_read;
use super::{Operation, OperationKind, Step, StepContext, StepError};
use crate::approval::MutatingAction;
use crate::etcd_maintenance::{EtcdOutcome, EtcdPlan, SnapshotLimits, plan_guards, run_step};
use crate::guards::Guard;
use crate::upgrade::observe::ClusterObserver;

/// A planned etcd action on a cluster connection; what it did once run.
pub struct EtcdOperation {
    plan: EtcdPlan,
    observer: ClusterObserver,
    limits: SnapshotLimits,
    outcome: EtcdOutcome,
}

impl EtcdOperation {
    /// `limits` bounds each step, and a snapshot's bytes.
    pub fn new(plan: EtcdPlan, observer: ClusterObserver, limits: SnapshotLimits) -> EtcdOperation {
        EtcdOperation {
            plan,
            observer,
            limits,
            outcome: EtcdOutcome::default(),
        }
    }

    pub fn plan(&self) -> &EtcdPlan {
        &self.plan
    }

    /// The steps done and the snapshot taken.
    pub fn outcome(&self) -> &EtcdOutcome {
        &self.outcome
    }
}

impl Operation for EtcdOperation {
    fn kind(&self) -> OperationKind {
        OperationKind::of(&self.action())
    }

    fn action(&self) -> MutatingAction {
        self.plan.mutating_action()
    }

    fn steps(&self) -> Vec<Step> {
        self.plan
            .steps
            .iter()
            .map(|s| Step {
                what: format!("{}: {}", s.node, s.call.as_str()),
                timeout: self.limits.bound,
            })
            .collect()
    }

    async fn guards(&self, _index: usize) -> Vec<Guard> {
        let status = self.observer.status().await;
        let lease = rollout_lease_read(&self.observer).await;
        plan_guards(&self.plan, &status, self.observer.talos.roles(), &lease)
    }

    async fn run_step(&mut self, index: usize, _: &StepContext<'_>) -> Result<String, StepError> {
        let step = self
            .plan
            .steps
            .get(index)
            .ok_or_else(|| format!("the etcd plan has no step {}", index + 1))?
            .clone();
        let mut snapshot = None;
        let said = run_step(&self.observer.talos, &step, self.limits, &mut snapshot)
            .await
            .map_err(|e| {
                format!(
                    "{}: {}: {}",
                    step.node,
                    step.call.as_str(),
                    crate::printable::line(&e)
                )
            })?;
        let line = format!("{}: {}: {said}", step.node, step.call.as_str());
        self.outcome.steps.push(line.clone());
        if snapshot.is_some() {
            self.outcome.snapshot = snapshot;
        }
        Ok(line)
    }

    fn finished(&self, done: &[String]) -> String {
        format!(
            "{} in {}: {} step(s) done",
            self.plan.action.as_str(),
            self.plan.cluster,
            done.len()
        )
    }
}
