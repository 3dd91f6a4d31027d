//! A cluster's delete as an operation: terminate its VMs (or its OneFlow service), follow until
//! every VM is gone (bounded), then remove its contexts (backups first), its secrets bundle
//! (backed up) and its journals. The guards are checked before the terminate; the steps after
//! it only finish what it began (refusing them would leave a half-deleted cluster behind).
use std::time::Duration;

use super::{Operation, OperationKind, Step, StepContext, StepError};
use crate::approval::MutatingAction;
use crate::cluster_lifecycle::{DeletePlan, DeleteSteps, delete_guards, remove_bundle};
use crate::guards::Guard;

/// A planned delete and the world it goes through.
pub struct ClusterDelete<S: DeleteSteps> {
    plan: DeletePlan,
    world: S,
    poll: Duration,
    timeout: Duration,
    /// The VMs not seen gone yet, by id.
    left: Vec<u64>,
}

impl<S: DeleteSteps> ClusterDelete<S> {
    /// The delete of `plan` through `world`: each step bounded by `timeout`, the VMs looked
    /// at every `poll` until they are gone.
    pub fn new(plan: DeletePlan, world: S, (poll, timeout): (Duration, Duration)) -> Self {
        let left = plan.vms.iter().map(|v| v.id).collect();
        ClusterDelete {
            plan,
            world,
            poll,
            timeout,
            left,
        }
    }

    async fn follow(&mut self, step: &StepContext<'_>) -> Result<String, StepError> {
        loop {
            let now = self.world.remaining(&self.plan).await?;
            for vm in self
                .plan
                .vms
                .iter()
                .filter(|v| self.left.contains(&v.id) && !now.contains(&v.id))
            {
                step.say(format!("VM {} ({}) is gone", vm.name, vm.id));
            }
            if now.is_empty() {
                self.left = now;
                return Ok("every VM is gone".into());
            }
            if now.len() != self.left.len() {
                step.say(format!("{} VM(s) not gone yet", now.len()));
            }
            self.left = now;
            step.wait(self.poll, "the VMs to be gone").await?;
        }
    }

    /// The secrets bundle (backed up) and the journals.
    fn remove_files(&self, step: &StepContext<'_>) -> Result<String, StepError> {
        if let Some(bundle) = &self.plan.secrets_bundle {
            step.say(remove_bundle(bundle)?);
        }
        let mut removed = 0;
        for j in &self.plan.journals {
            match std::fs::remove_file(j) {
                Ok(()) => {
                    removed += 1;
                    step.say(format!("removed {}", j.display()));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("{}: cannot remove: {e}", j.display()).into()),
            }
        }
        let bundle = match self.plan.secrets_bundle {
            Some(_) => "the secrets bundle and ",
            None => "",
        };
        Ok(format!("removed {bundle}{removed} journal(s)"))
    }
}

impl<S: DeleteSteps> Operation for ClusterDelete<S> {
    fn kind(&self) -> OperationKind {
        OperationKind::Delete
    }

    fn action(&self) -> MutatingAction {
        self.plan.action()
    }

    fn steps(&self) -> Vec<Step> {
        [
            format!("terminate {} VM(s)", self.plan.vms.len()),
            "wait until every VM is gone".to_string(),
            "remove the contexts".to_string(),
            "remove the secrets bundle and the journals".to_string(),
        ]
        .map(|what| Step {
            what,
            timeout: self.timeout,
        })
        .to_vec()
    }

    async fn guards(&self, index: usize) -> Vec<Guard> {
        if index == 0 {
            delete_guards(&self.plan)
        } else {
            Vec::new()
        }
    }

    async fn run_step(
        &mut self,
        index: usize,
        step: &StepContext<'_>,
    ) -> Result<String, StepError> {
        match index {
            0 => {
                self.world.terminate(&self.plan).await?;
                Ok(format!("terminate asked for {} VM(s)", self.plan.vms.len()))
            }
            1 => self.follow(step).await,
            2 => Ok(self.world.remove_contexts(&self.plan).await?),
            3 => self.remove_files(step),
            _ => Err(format!(
                "the delete of {} has no step {}",
                self.plan.cluster,
                index + 1
            )
            .into()),
        }
    }

    fn stopped_at(&self, index: usize) -> String {
        if index == 1 && !self.left.is_empty() {
            format!("; VM(s) {:?} not gone; the contexts are kept", self.left)
        } else {
            String::new()
        }
    }

    fn finished(&self, _done: &[String]) -> String {
        format!(
            "cluster {} deleted: no VM, context or journal of it left",
            self.plan.cluster
        )
    }
}

#[cfg(test)]
#[path = "delete_tests.rs"]
mod tests;
