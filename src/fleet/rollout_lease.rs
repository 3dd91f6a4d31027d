//! The rollout Lease: one Lease in kube-system per cluster, held by the
//! run (`user@host/pid-start`, `run_holder`) that runs a rollout and renewed as it goes, with the
//! rollout's progress in its annotations (`rollout::lease`), so consoles on
//! other hosts show who is rolling out what and refuse a second rollout.
use std::time::Duration;

use crate::kube::lease::{HeldLease, LeaseClaim, LeaseRecord};
use crate::kube::{self, KubeClient, KubeError};
use crate::rollout::RolloutKind;
use crate::rollout::lease::{
    LeaseProgress, ROLLOUT_LEASE_NAME, ROLLOUT_LEASE_NAMESPACE, RolloutLeaseInfo,
    change_annotations, is_provision, lease_annotations, provision_annotations,
};
use crate::run_holder::holder_described;

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error(
        "{what} in progress on {cluster} by {}, {at}",
        holder_described(holder)
    )]
    HeldBy {
        cluster: String,
        holder: String,
        /// "upgrade", "Kubernetes upgrade", "provisioning", or "rollout" (a kind unknown here).
        what: &'static str,
        /// "node 3 of 5", or "2 new worker node(s)".
        at: String,
    },
    #[error(
        "the rollout lease on {cluster} is no longer ours: now {}; stopping before the next node",
        holder_described(holder)
    )]
    Lost { cluster: String, holder: String },
    #[error("rollout lease: {0}")]
    Kube(#[from] KubeError),
}

impl LeaseError {
    fn on(cluster: &str, e: kube::lease::LeaseError) -> LeaseError {
        match e {
            kube::lease::LeaseError::Held { record, .. } => held_by(cluster, record),
            kube::lease::LeaseError::Lost { holder, .. } => LeaseError::Lost {
                cluster: cluster.to_string(),
                holder,
            },
            kube::lease::LeaseError::Kube(e) => LeaseError::Kube(e),
        }
    }
}

fn decode(record: LeaseRecord) -> RolloutLeaseInfo {
    RolloutLeaseInfo::decode(record.holder, &record.annotations, record.expired)
}

fn held_by(cluster: &str, record: LeaseRecord) -> LeaseError {
    let provision = is_provision(&record.annotations);
    let r = decode(record).rollout;
    let (what, at) = match (provision, &r.target) {
        (true, Some(target)) => ("provisioning", target.clone()),
        _ => (
            r.kind.map_or("rollout", RolloutKind::describe),
            format!("node {} of {}", r.node_index, r.node_count),
        ),
    };
    LeaseError::HeldBy {
        cluster: cluster.to_string(),
        holder: r.holder,
        what,
        at,
    }
}

/// The rollout lease while this console holds it. Renew it while the rollout
/// runs and release it at the end; dropping it leaves the lease to expire.
pub struct RolloutLease {
    cluster: String,
    lease: HeldLease,
}

/// The rollout lease is read and taken through the cluster's kube client.
impl KubeClient {
    /// The rollout lease of this cluster; `None` when there is none.
    pub async fn read_rollout_lease(&self) -> Result<Option<RolloutLeaseInfo>, KubeError> {
        let record = self
            .read_lease(ROLLOUT_LEASE_NAMESPACE, ROLLOUT_LEASE_NAME)
            .await?;
        Ok(record.map(decode))
    }

    /// Takes the rollout lease for `holder`: creates it, or takes over one that
    /// expired or that `displaces` holds (a run whose process is gone, resumed;
    /// or one the operator named to take over). Two runs racing for it never
    /// both win.
    pub async fn acquire_rollout_lease(
        &self,
        cluster: &str,
        holder: &str,
        displaces: Option<&str>,
        rollout: (RolloutKind, &str, usize),
        duration: Duration,
    ) -> Result<RolloutLease, LeaseError> {
        let (kind, target, node_count) = rollout;
        let progress = LeaseProgress::starting(node_count);
        let annotations = lease_annotations(kind, target, node_count, &progress);
        self.acquire_with(cluster, (holder, displaces), annotations, duration)
            .await
    }

    /// Takes the rollout lease for `holder` to provision `vm_count` new `role` nodes: one run
    /// changes a cluster at a time, whether it upgrades or adds nodes. Taken over only when
    /// it expired.
    pub async fn acquire_provision_lease(
        &self,
        cluster: &str,
        holder: &str,
        (role, vm_count): (&str, usize),
        duration: Duration,
    ) -> Result<RolloutLease, LeaseError> {
        let annotations = provision_annotations(role, vm_count);
        self.acquire_with(cluster, (holder, None), annotations, duration)
            .await
    }

    /// Takes the rollout lease for a change that is no engine rollout (`kind` names it, e.g.
    /// `capi-scale`), so rollouts and such changes keep out of each other's way.
    pub async fn acquire_change_lease(
        &self,
        cluster: &str,
        holder: &str,
        change: (&str, &str, usize),
        duration: Duration,
    ) -> Result<RolloutLease, LeaseError> {
        let (kind, target, node_count) = change;
        let annotations = change_annotations(
            kind,
            target,
            node_count,
            &LeaseProgress::starting(node_count),
        );
        self.acquire_with(cluster, (holder, None), annotations, duration)
            .await
    }

    async fn acquire_with(
        &self,
        cluster: &str,
        (holder, displaces): (&str, Option<&str>),
        annotations: std::collections::BTreeMap<String, String>,
        duration: Duration,
    ) -> Result<RolloutLease, LeaseError> {
        let claim = LeaseClaim {
            namespace: ROLLOUT_LEASE_NAMESPACE.into(),
            name: ROLLOUT_LEASE_NAME.into(),
            holder: holder.into(),
            duration,
            annotations,
        };
        let displaced = |record: &LeaseRecord| displaces == Some(record.holder.as_str());
        let lease = self
            .acquire_lease(&claim, &displaced)
            .await
            .map_err(|e| LeaseError::on(cluster, e))?;
        Ok(RolloutLease {
            cluster: cluster.to_string(),
            lease,
        })
    }
}

impl RolloutLease {
    pub fn holder(&self) -> &str {
        self.lease.holder()
    }

    /// The lease's resourceVersion as last written by us.
    pub fn resource_version(&self) -> Option<&str> {
        self.lease.resource_version()
    }

    /// Renews the lease and records `progress` in it. `Lost` when another
    /// console changed or deleted it since our last write.
    pub async fn renew(&mut self, progress: &LeaseProgress) -> Result<(), LeaseError> {
        self.lease
            .renew(&progress.changes())
            .await
            .map_err(|e| LeaseError::on(&self.cluster, e))
    }

    /// Deletes the lease if it is still the one we wrote; `Lost` (and nothing
    /// deleted) when another console has it now. Already gone is fine.
    pub async fn release(self) -> Result<(), LeaseError> {
        let cluster = self.cluster;
        self.lease
            .release()
            .await
            .map_err(|e| LeaseError::on(&cluster, e))
    }
}

/// Gives back a run's lease, when it holds one, whatever the run's outcome: the line to say
/// when that failed (the lease then expires on its own).
pub async fn give_back(lease: Option<RolloutLease>) -> Option<String> {
    lease?
        .release()
        .await
        .err()
        .map(|e| format!("the rollout lease was not released: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: &str) -> LeaseRecord {
        let mut annotations = lease_annotations(
            RolloutKind::TalosUpgrade,
            "v1.12.0",
            5,
            &LeaseProgress {
                node_index: 3,
                current_node: Some("cp-3".into()),
                phase: "rebooting".into(),
            },
        );
        annotations.insert("taloscope.dev/rollout-kind".into(), kind.into());
        LeaseRecord {
            holder: "bob@jump2".into(),
            annotations,
            expired: false,
        }
    }

    #[test]
    fn a_lease_held_to_provision_says_so() {
        let held = kube::lease::LeaseError::Held {
            name: ROLLOUT_LEASE_NAME.into(),
            record: LeaseRecord {
                holder: "bob@jump2".into(),
                annotations: provision_annotations("worker", 2),
                expired: false,
            },
        };
        assert_eq!(
            LeaseError::on("healthy", held).to_string(),
            "provisioning in progress on healthy by bob@jump2, 2 new worker node(s)"
        );
    }

    #[test]
    fn a_held_lease_names_the_rollout() {
        let held = kube::lease::LeaseError::Held {
            name: ROLLOUT_LEASE_NAME.into(),
            record: record("talos-upgrade"),
        };
        assert_eq!(
            LeaseError::on("healthy", held).to_string(),
            "upgrade in progress on healthy by bob@jump2, node 3 of 5"
        );
        let mut odd = record("mystery");
        odd.annotations
            .insert("taloscope.dev/node-index".into(), "three".into());
        let unknown = kube::lease::LeaseError::Held {
            name: ROLLOUT_LEASE_NAME.into(),
            record: odd,
        };
        assert_eq!(
            LeaseError::on("healthy", unknown).to_string(),
            "rollout in progress on healthy by bob@jump2, node 0 of 5"
        );
    }
}
