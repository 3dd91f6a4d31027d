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
    change_annotations, lease_annotations,
};
use crate::run_holder::holder_described;

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error(
        "{} in progress on {cluster} by {}, node {node_index} of {node_count}",
        kind.map_or("rollout", RolloutKind::describe),
        holder_described(holder)
    )]
    HeldBy {
        cluster: String,
        holder: String,
        kind: Option<RolloutKind>,
        node_index: usize,
        node_count: usize,
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
            kube::lease::LeaseError::Held { record, .. } => held_by(cluster, &decode(record)),
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

fn held_by(cluster: &str, info: &RolloutLeaseInfo) -> LeaseError {
    let r = &info.rollout;
    LeaseError::HeldBy {
        cluster: cluster.to_string(),
        holder: r.holder.clone(),
        kind: r.kind,
        node_index: r.node_index,
        node_count: r.node_count,
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
        let annotations = lease_annotations(
            kind,
            target,
            node_count,
            &LeaseProgress::starting(node_count),
        );
        self.acquire_lease_with(cluster, holder, displaces, annotations, duration)
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
        self.acquire_lease_with(cluster, holder, None, annotations, duration)
            .await
    }

    async fn acquire_lease_with(
        &self,
        cluster: &str,
        holder: &str,
        displaces: Option<&str>,
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
