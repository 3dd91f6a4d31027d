//! A provision as an operation: the cluster's rollout Lease and provision journal taken and
//! the VMs created (each after the guards again, `capi_owned` among them), then every VM
//! followed until it joined or failed. The Lease is given back however the run ends.
use std::time::Duration;

use super::{Operation, OperationKind, Step, StepContext, StepError};
use crate::approval::MutatingAction;
use crate::guards::Guard;
use crate::provision::{ProvisionRunner, ProvisionSummary};

/// The most a step may take beyond the follow's own bound (`RunnerOptions::timeout`), which
/// says which VMs did not join.
const BACKSTOP: Duration = Duration::from_secs(60);

/// A planned provision with its clients.
pub struct Provisioning {
    runner: ProvisionRunner,
    /// The run ended with VMs that did not join (its summary says which), not on an error.
    not_joined: bool,
}

impl Provisioning {
    pub fn new(runner: ProvisionRunner) -> Provisioning {
        Provisioning {
            runner,
            not_joined: false,
        }
    }

    /// How the run ended, sent to the runner's channel as its last event too.
    pub async fn summary(&mut self, result: &Result<String, String>) -> ProvisionSummary {
        let error = result.clone().err().filter(|_| !self.not_joined);
        self.runner.finish(error).await
    }
}

impl Operation for Provisioning {
    fn kind(&self) -> OperationKind {
        OperationKind::Provision
    }

    fn action(&self) -> MutatingAction {
        self.runner.plan().action()
    }

    fn steps(&self) -> Vec<Step> {
        let plan = self.runner.plan();
        let timeout = self.runner.options().timeout + BACKSTOP;
        vec![
            Step {
                what: format!(
                    "create {} {} VM(s) on {}",
                    plan.count,
                    plan.role.as_str(),
                    plan.provider
                ),
                timeout,
            },
            Step {
                what: "follow the new VMs until they joined".into(),
                timeout,
            },
        ]
    }

    /// Before the VMs are created (and again before each one, by the runner's own check);
    /// the follow only reads.
    async fn guards(&self, index: usize) -> Vec<Guard> {
        if index == 0 {
            self.runner.guards_now().await
        } else {
            Vec::new()
        }
    }

    async fn run_step(&mut self, index: usize, _: &StepContext<'_>) -> Result<String, StepError> {
        match index {
            0 => Ok(self.runner.start_run().await?),
            1 => {
                self.runner.follow_run().await?;
                self.runner.all_joined().map_err(|line| {
                    self.not_joined = true;
                    line.into()
                })
            }
            _ => Err(format!("the provision has no step {}", index + 1).into()),
        }
    }

    async fn release(&mut self) -> Option<String> {
        self.runner.release_lease().await
    }
}
