//! Terminating one VM a provision started, as an operation: one step, the provider's terminate
//! (a VM already gone is not an error), noted in the cluster's provision journal. The operator
//! names the VM; no guard stands before it.
use std::time::Duration;

use super::{Operation, OperationKind, Step, StepContext, StepError};
use crate::approval::MutatingAction;
use crate::guards::Guard;
use crate::provision::{Provider, ProvisionJournal, VmProgress, terminate_vm};

/// The most the terminate call may take.
const TERMINATE_BOUND: Duration = Duration::from_secs(120);

/// VM `vm` of `cluster` to terminate through `provider`.
pub struct VmTermination {
    cluster: String,
    vm: String,
    provider: Provider,
    journal: Option<ProvisionJournal>,
    progress: Option<VmProgress>,
}

impl VmTermination {
    pub fn new(
        (cluster, vm): (String, String),
        provider: Provider,
        journal: Option<ProvisionJournal>,
    ) -> VmTermination {
        VmTermination {
            cluster,
            vm,
            provider,
            journal,
            progress: None,
        }
    }

    /// The VM as the terminate left it, once it ran.
    pub fn progress(&self) -> Option<&VmProgress> {
        self.progress.as_ref()
    }
}

impl Operation for VmTermination {
    fn kind(&self) -> OperationKind {
        OperationKind::Terminate
    }

    fn action(&self) -> MutatingAction {
        MutatingAction::TerminateVm {
            cluster: self.cluster.clone(),
            provider: self.provider.name.clone(),
            vm: self.vm.clone(),
        }
    }

    fn steps(&self) -> Vec<Step> {
        vec![Step {
            what: format!("terminate VM {} on {}", self.vm, self.provider.name),
            timeout: TERMINATE_BOUND,
        }]
    }

    async fn guards(&self, _index: usize) -> Vec<Guard> {
        Vec::new()
    }

    async fn run_step(&mut self, _index: usize, _: &StepContext<'_>) -> Result<String, StepError> {
        let id: u64 = self
            .vm
            .parse()
            .map_err(|_| format!("VM id {:?} is not a number", self.vm))?;
        let progress = terminate_vm(&self.provider, (&self.cluster, id), self.journal.as_mut())
            .await
            .map_err(|e| e.to_string())?;
        let line = progress.line();
        self.progress = Some(progress);
        Ok(line)
    }
}
