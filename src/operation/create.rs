//! A cluster's create as an operation: its phases in order (VMs, booted, configured,
//! bootstrapped, etcd, API, nodes Ready, contexts written), each skipped when the create journal
//! says an earlier run did it, so a killed create resumes where it stopped. Its guards are the
//! plan's, checked when it is approved: the cluster does not exist before its first phase, and
//! each later phase only goes on with what the earlier ones made.
use std::time::Duration;

use super::{Operation, OperationKind, Step, StepContext, StepError};
use crate::approval::MutatingAction;
use crate::cluster_lifecycle::{CreatePhase, CreateRunner, CreateSteps, RunSummary};
use crate::guards::Guard;

/// The most a phase may take beyond its own bound (`CreateOptions::phase_timeout`), which
/// says what it waited for.
const BACKSTOP: Duration = Duration::from_secs(60);

/// A planned create with its world and journal.
pub struct ClusterCreate<S: CreateSteps> {
    runner: CreateRunner<S>,
}

impl<S: CreateSteps> ClusterCreate<S> {
    pub fn new(runner: CreateRunner<S>) -> Self {
        ClusterCreate { runner }
    }

    /// How the run ended, sent to the runner's channel as its last event too.
    pub async fn summary(&mut self, result: &Result<String, String>) -> RunSummary {
        self.runner.finish(result.clone().err()).await
    }
}

impl<S: CreateSteps> Operation for ClusterCreate<S> {
    fn kind(&self) -> OperationKind {
        OperationKind::Create
    }

    fn action(&self) -> MutatingAction {
        self.runner.plan().action()
    }

    fn steps(&self) -> Vec<Step> {
        let timeout = self.runner.options().phase_timeout + BACKSTOP;
        CreatePhase::ALL
            .iter()
            .map(|phase| Step {
                what: phase.title().to_string(),
                timeout,
            })
            .collect()
    }

    async fn guards(&self, _index: usize) -> Vec<Guard> {
        Vec::new()
    }

    async fn run_step(&mut self, index: usize, _: &StepContext<'_>) -> Result<String, StepError> {
        let phase = CreatePhase::ALL
            .get(index)
            .copied()
            .ok_or_else(|| format!("a create has no phase {}", index + 1))?;
        Ok(self.runner.run_phase(phase).await?)
    }

    async fn release(&mut self) -> Option<String> {
        self.runner.release_journal().await
    }

    fn finished(&self, _done: &[String]) -> String {
        format!("cluster {} created", self.runner.plan().cluster)
    }
}
