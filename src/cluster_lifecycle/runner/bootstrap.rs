//! The Bootstrap phase of a create run: "sent" is journaled before each send, and only a
//! "not available yet" answer (upstream did not bootstrap) lets it be sent again, within the
//! phase's bound; an unknown outcome is never resent.
use tokio::time::Instant;

use super::super::journal::BootstrapSent;
use super::super::progress::{CreatePhase, PhaseState};
use super::super::steps::{BootstrapAnswer, CreateSteps};
use super::CreateRunner;

impl<S: CreateSteps> CreateRunner<S> {
    pub(super) async fn bootstrapped(&mut self) -> Result<String, String> {
        if let Some(sent) = &self.journal.record().bootstrap_sent
            && !sent.not_available_yet
        {
            return Ok(format!(
                "sent to {} at {} by an earlier run; not sent again",
                sent.node, sent.at
            ));
        }
        self.ensure_configs().await?;
        let (vm, node) = self.first_control_plane()?;
        self.until_talos_answers(CreatePhase::Bootstrapped, &vm)
            .await?;
        let deadline = Instant::now() + self.options.phase_timeout;
        loop {
            self.journal_bootstrap(&node, false)?;
            let answer = self.steps.bootstrap(&node).await.map_err(|e| {
                format!(
                    "Bootstrap to {node} failed: {e}; it is not sent again (a second bootstrap could make a second etcd): check `talosctl -n {node} etcd members`, and bootstrap by hand only if etcd never started"
                )
            })?;
            let detail = match answer {
                BootstrapAnswer::Accepted => {
                    return Ok(format!("Bootstrap sent to {} ({node})", vm.name));
                }
                BootstrapAnswer::AlreadyBootstrapped => {
                    return Ok(format!(
                        "{} ({node}) was already bootstrapped (its etcd data directory is not empty)",
                        vm.name
                    ));
                }
                BootstrapAnswer::NotAvailableYet(detail) => detail,
            };
            // Upstream answered before touching etcd: nothing was bootstrapped.
            self.journal_bootstrap(&node, true)?;
            if Instant::now() >= deadline {
                return Err(format!(
                    "timed out after {:?}: {node} still answers Bootstrap with: {detail}",
                    self.options.phase_timeout
                ));
            }
            self.phase_state(
                CreatePhase::Bootstrapped,
                PhaseState::Waiting(format!("{}: {detail}", vm.name)),
            )
            .await;
            tokio::time::sleep(self.options.poll).await;
        }
    }

    /// Records a send about to happen (`not_available_yet` false: its outcome unknown) or the
    /// refusal that says it did not bootstrap.
    fn journal_bootstrap(&mut self, node: &str, not_available_yet: bool) -> Result<(), String> {
        let sent = BootstrapSent {
            node: node.to_string(),
            at: crate::clock::utc_timestamp(std::time::SystemTime::now()),
            not_available_yet,
        };
        self.journal
            .update(|r| r.bootstrap_sent = Some(sent))
            .map_err(|e| e.to_string())
    }
}
