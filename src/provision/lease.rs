//! The cluster's rollout Lease as a provision run holds it: one run changes a cluster at a time,
//! whether it upgrades it or adds nodes. Taken before the first VM, renewed while the VMs are
//! followed, released at the end; without a kube context there is no Lease to take.
use std::time::Duration;

use tokio::time::Instant;

use crate::fleet::{LeaseError, RolloutLease};
use crate::kube::KubeClient;
use crate::rollout::LeaseProgress;
use crate::run_holder::RunHolder;

use super::plan::ProvisionPlan;

/// How long the Lease lives unrenewed: a run killed mid-provision frees the cluster this soon.
/// The same as an upgrade's default.
pub const LEASE_DURATION: Duration = Duration::from_secs(60);

/// The rollout Lease while this provision run holds it.
pub struct ProvisionLease {
    lease: RolloutLease,
    vm_count: usize,
    renewed: Instant,
}

impl ProvisionLease {
    /// Takes the Lease of `plan`'s cluster through `kube`; `None` without a kube client. The
    /// error names whoever holds it ("refused: upgrade in progress on … by …").
    pub async fn take(
        kube: Option<&KubeClient>,
        plan: &ProvisionPlan,
    ) -> Result<Option<ProvisionLease>, String> {
        let Some(kube) = kube else {
            return Ok(None);
        };
        let lease = kube
            .acquire_provision_lease(
                &plan.cluster,
                &RunHolder::this_process().to_string(),
                (plan.role.as_str(), plan.count),
                LEASE_DURATION,
            )
            .await
            .map_err(|e| match e {
                LeaseError::HeldBy { .. } => format!("refused: {e}"),
                other => format!("cannot take the rollout lease: {other}"),
            })?;
        Ok(Some(ProvisionLease {
            lease,
            vm_count: plan.count,
            renewed: Instant::now(),
        }))
    }

    /// Renews the Lease when a third of its life has gone, saying `phase` in it; the error says
    /// why it could not (lost to another run, or the API did not answer).
    pub async fn renew_when_due(&mut self, phase: &str) -> Result<(), String> {
        if self.renewed.elapsed() < LEASE_DURATION / 3 {
            return Ok(());
        }
        let progress = LeaseProgress {
            phase: phase.to_string(),
            ..LeaseProgress::starting(self.vm_count)
        };
        self.lease
            .renew(&progress)
            .await
            .map_err(|e| format!("cannot renew the rollout lease: {e}"))?;
        self.renewed = Instant::now();
        Ok(())
    }

    /// Gives the Lease back; the error is a note (left alone, it expires).
    pub async fn release(self) -> Result<(), String> {
        self.lease
            .release()
            .await
            .map_err(|e| format!("cannot release the rollout lease (it expires by itself): {e}"))
    }
}
