//! The rollout Lease: one `coordination.k8s.io/v1` Lease in kube-system per
//! cluster, held by the console (`user@host`) that runs a rollout and renewed
//! as it goes, with the rollout's progress in its annotations, so consoles on
//! other hosts show who is rolling out what and refuse a second rollout.
use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, DeleteParams, PostParams, Preconditions};

use super::client::{KubeClient, KubeError};
use crate::rollout::RolloutKind;
use crate::upgrade::RolloutInProgress;

pub const ROLLOUT_LEASE_NAME: &str = "taloscope-rollout";
pub const ROLLOUT_LEASE_NAMESPACE: &str = "kube-system";

const KIND: &str = "taloscope.dev/rollout-kind";
const TARGET: &str = "taloscope.dev/target";
const NODE_INDEX: &str = "taloscope.dev/node-index";
const NODE_COUNT: &str = "taloscope.dev/node-count";
const CURRENT_NODE: &str = "taloscope.dev/current-node";
const PHASE: &str = "taloscope.dev/phase";

/// How often `acquire_rollout_lease` reads and tries again when another
/// console changed the lease between its read and its write.
const ACQUIRE_ATTEMPTS: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error(
        "{} in progress on {cluster} by {holder}, node {node_index} of {node_count}",
        kind.map_or("rollout", RolloutKind::describe)
    )]
    HeldBy {
        cluster: String,
        holder: String,
        kind: Option<RolloutKind>,
        node_index: usize,
        node_count: usize,
    },
    #[error(
        "the rollout lease on {cluster} is no longer ours: now {holder}; stopping before the next node"
    )]
    Lost { cluster: String, holder: String },
    #[error("rollout lease: {0}")]
    Kube(#[from] KubeError),
}

/// The rollout Lease as another console reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutLeaseInfo {
    /// `user@host`.
    pub holder: String,
    pub kind: Option<RolloutKind>,
    /// "v1.12.0" or "1.35.0".
    pub target: Option<String>,
    /// The node being worked on, counted from 1.
    pub node_index: usize,
    pub node_count: usize,
    pub current_node: Option<String>,
    pub phase: Option<String>,
    /// Not renewed within its duration (or never held): nobody is rolling out.
    pub expired: bool,
}

impl RolloutLeaseInfo {
    /// For the upgrade guard "no other rollout in progress".
    pub fn as_in_progress(&self) -> RolloutInProgress {
        RolloutInProgress {
            holder: self.holder.clone(),
            node_index: self.node_index,
            node_count: self.node_count,
        }
    }

    /// Decodes the lease as of `now`.
    pub fn from_lease(lease: &Lease, now: Timestamp) -> RolloutLeaseInfo {
        let annotations = lease.metadata.annotations.clone().unwrap_or_default();
        let text = |key: &str| annotations.get(key).filter(|v| !v.is_empty()).cloned();
        let number = |key: &str| text(key).and_then(|v| v.parse().ok()).unwrap_or(0);
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().unwrap_or_default();
        RolloutLeaseInfo {
            expired: holder.is_empty() || lease_expired(&spec, now),
            holder,
            kind: text(KIND).and_then(|k| kind_from_annotation(&k)),
            target: text(TARGET),
            node_index: number(NODE_INDEX),
            node_count: number(NODE_COUNT),
            current_node: text(CURRENT_NODE),
            phase: text(PHASE),
        }
    }

    fn held_by(&self, cluster: &str) -> LeaseError {
        LeaseError::HeldBy {
            cluster: cluster.to_string(),
            holder: self.holder.clone(),
            kind: self.kind,
            node_index: self.node_index,
            node_count: self.node_count,
        }
    }
}

fn kind_from_annotation(value: &str) -> Option<RolloutKind> {
    [RolloutKind::TalosUpgrade, RolloutKind::KubernetesUpgrade]
        .into_iter()
        .find(|k| k.as_str() == value)
}

/// True when the lease was not renewed (or acquired) within its duration
/// before `now`. A lease with no time or no duration cannot be shown to be
/// alive, so it counts as expired.
fn lease_expired(spec: &LeaseSpec, now: Timestamp) -> bool {
    let Some(last) = spec.renew_time.as_ref().or(spec.acquire_time.as_ref()) else {
        return true;
    };
    let Some(seconds) = spec.lease_duration_seconds.filter(|s| *s > 0) else {
        return true;
    };
    match last
        .0
        .checked_add(SignedDuration::from_secs(i64::from(seconds)))
    {
        Ok(until) => until <= now,
        Err(_) => false,
    }
}

/// Where the rollout is, written into the lease at each renewal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseProgress {
    /// The node being worked on, counted from 1.
    pub node_index: usize,
    pub current_node: Option<String>,
    /// A `StepPhase` word: "pulling", "rebooting", …
    pub phase: String,
}

/// The lease while this console holds it. Renew it while the rollout runs
/// and release it at the end; dropping it leaves the lease to expire.
pub struct RolloutLease {
    client: KubeClient,
    cluster: String,
    holder: String,
    /// The lease as last written by us; its resourceVersion guards the next write.
    lease: Lease,
}

fn duration_seconds(duration: Duration) -> i32 {
    i32::try_from(duration.as_secs().max(1)).unwrap_or(i32::MAX)
}

fn annotations(
    kind: RolloutKind,
    target: &str,
    node_count: usize,
    progress: &LeaseProgress,
) -> BTreeMap<String, String> {
    let mut map = BTreeMap::from([
        (KIND.to_string(), kind.as_str().to_string()),
        (TARGET.to_string(), target.to_string()),
        (NODE_INDEX.to_string(), progress.node_index.to_string()),
        (NODE_COUNT.to_string(), node_count.to_string()),
        (PHASE.to_string(), progress.phase.clone()),
    ]);
    if let Some(node) = &progress.current_node {
        map.insert(CURRENT_NODE.to_string(), node.clone());
    }
    map
}

/// Status code and reason of an API refusal, if that is what `e` is.
fn refusal(e: &kube::Error) -> Option<(u16, &str)> {
    match e {
        kube::Error::Api(status) => Some((status.code, status.reason.as_str())),
        _ => None,
    }
}

impl KubeClient {
    fn leases(&self) -> Api<Lease> {
        Api::namespaced(self.kube_client(), ROLLOUT_LEASE_NAMESPACE)
    }

    /// The rollout lease of this cluster; `None` when there is none.
    pub async fn read_rollout_lease(&self) -> Result<Option<RolloutLeaseInfo>, KubeError> {
        let lease = self
            .leases()
            .get_opt(ROLLOUT_LEASE_NAME)
            .await
            .map_err(|e| self.error(e))?;
        Ok(lease.map(|l| RolloutLeaseInfo::from_lease(&l, Timestamp::now())))
    }

    /// Takes the rollout lease for `holder`: creates it, or takes over one that
    /// expired or that `holder` itself holds for the same rollout (a console
    /// resuming after a restart). Every take-over carries the resourceVersion
    /// it read, so two consoles racing for it never both win.
    pub async fn acquire_rollout_lease(
        &self,
        cluster: &str,
        holder: &str,
        kind: RolloutKind,
        target: &str,
        node_count: usize,
        duration: Duration,
    ) -> Result<RolloutLease, LeaseError> {
        let api = self.leases();
        let now = MicroTime(Timestamp::now());
        let start = LeaseProgress {
            node_index: node_count.min(1),
            current_node: None,
            phase: "starting".into(),
        };
        let spec = LeaseSpec {
            holder_identity: Some(holder.to_string()),
            lease_duration_seconds: Some(duration_seconds(duration)),
            acquire_time: Some(now.clone()),
            renew_time: Some(now),
            ..LeaseSpec::default()
        };
        let mut last_seen = None;
        for _ in 0..ACQUIRE_ATTEMPTS {
            let fresh = Lease {
                metadata: ObjectMeta {
                    name: Some(ROLLOUT_LEASE_NAME.into()),
                    namespace: Some(ROLLOUT_LEASE_NAMESPACE.into()),
                    annotations: Some(annotations(kind, target, node_count, &start)),
                    ..ObjectMeta::default()
                },
                spec: Some(spec.clone()),
            };
            match api.create(&PostParams::default(), &fresh).await {
                Ok(lease) => return Ok(self.held(cluster, holder, lease)),
                Err(e) if refusal(&e).is_some_and(|(code, _)| code == 409) => {}
                Err(e) => return Err(self.error(e).into()),
            }
            let Some(existing) = api
                .get_opt(ROLLOUT_LEASE_NAME)
                .await
                .map_err(|e| self.error(e))?
            else {
                // Released between our create and our read: create again.
                continue;
            };
            let info = RolloutLeaseInfo::from_lease(&existing, Timestamp::now());
            let resuming = info.holder == holder
                && info.kind == Some(kind)
                && info.target.as_deref() == Some(target);
            if !info.expired && !resuming {
                return Err(info.held_by(cluster));
            }
            let mut takeover = existing;
            takeover.metadata.annotations = Some(annotations(kind, target, node_count, &start));
            takeover.spec = Some(LeaseSpec {
                lease_transitions: Some(
                    takeover
                        .spec
                        .as_ref()
                        .and_then(|s| s.lease_transitions)
                        .unwrap_or(0)
                        + i32::from(info.holder != holder),
                ),
                ..spec.clone()
            });
            match api
                .replace(ROLLOUT_LEASE_NAME, &PostParams::default(), &takeover)
                .await
            {
                Ok(lease) => return Ok(self.held(cluster, holder, lease)),
                // Someone wrote it after our read (409) or deleted it (404): read again.
                Err(e) if refusal(&e).is_some_and(|(code, _)| code == 409 || code == 404) => {
                    last_seen = Some(info);
                }
                Err(e) => return Err(self.error(e).into()),
            }
        }
        Err(match self.read_rollout_lease().await? {
            Some(info) => info.held_by(cluster),
            None => last_seen.map_or_else(
                || LeaseError::Lost {
                    cluster: cluster.to_string(),
                    holder: "nobody (the lease keeps changing)".into(),
                },
                |info| info.held_by(cluster),
            ),
        })
    }

    fn held(&self, cluster: &str, holder: &str, lease: Lease) -> RolloutLease {
        RolloutLease {
            client: self.clone(),
            cluster: cluster.to_string(),
            holder: holder.to_string(),
            lease,
        }
    }
}

impl RolloutLease {
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// The lease's resourceVersion as last written by us.
    pub fn resource_version(&self) -> Option<&str> {
        self.lease.metadata.resource_version.as_deref()
    }

    /// Who has the lease now, for `Lost`: read it again, or say it is gone.
    async fn lost(&self) -> LeaseError {
        let holder = match self.client.read_rollout_lease().await {
            Ok(Some(info)) if info.holder.is_empty() => "nobody".to_string(),
            Ok(Some(info)) => info.holder,
            Ok(None) => "nobody (the lease was deleted)".to_string(),
            Err(e) => format!("unknown ({e})"),
        };
        LeaseError::Lost {
            cluster: self.cluster.clone(),
            holder,
        }
    }

    /// Renews the lease and records `progress` in it. `Lost` when another
    /// console changed or deleted it since our last write.
    pub async fn renew(&mut self, progress: &LeaseProgress) -> Result<(), LeaseError> {
        let mut next = self.lease.clone();
        let annotations = next.metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(NODE_INDEX.into(), progress.node_index.to_string());
        annotations.insert(PHASE.into(), progress.phase.clone());
        match &progress.current_node {
            Some(node) => annotations.insert(CURRENT_NODE.into(), node.clone()),
            None => annotations.remove(CURRENT_NODE),
        };
        next.spec.get_or_insert_with(LeaseSpec::default).renew_time =
            Some(MicroTime(Timestamp::now()));
        match self
            .client
            .leases()
            .replace(ROLLOUT_LEASE_NAME, &PostParams::default(), &next)
            .await
        {
            Ok(lease) => {
                self.lease = lease;
                Ok(())
            }
            Err(e) if refusal(&e).is_some_and(|(code, _)| code == 409 || code == 404) => {
                Err(self.lost().await)
            }
            Err(e) => Err(self.client.error(e).into()),
        }
    }

    /// Deletes the lease if it is still the one we wrote; `Lost` (and nothing
    /// deleted) when another console has it now. Already gone is fine.
    pub async fn release(self) -> Result<(), LeaseError> {
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                resource_version: self.lease.metadata.resource_version.clone(),
                uid: None,
            }),
            ..DeleteParams::default()
        };
        match self
            .client
            .leases()
            .delete(ROLLOUT_LEASE_NAME, &params)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if refusal(&e).is_some_and(|(code, _)| code == 404) => Ok(()),
            Err(e) if refusal(&e).is_some_and(|(code, _)| code == 409) => Err(self.lost().await),
            Err(e) => Err(self.client.error(e).into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("a timestamp")
    }

    fn lease(holder: &str, renewed: &str, seconds: i32) -> Lease {
        Lease {
            metadata: ObjectMeta {
                annotations: Some(annotations(
                    RolloutKind::TalosUpgrade,
                    "v1.12.0",
                    5,
                    &LeaseProgress {
                        node_index: 3,
                        current_node: Some("cp-3".into()),
                        phase: "rebooting".into(),
                    },
                )),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(holder.into()),
                lease_duration_seconds: Some(seconds),
                renew_time: Some(MicroTime(ts(renewed))),
                ..LeaseSpec::default()
            }),
        }
    }

    #[test]
    fn annotations_decode_into_progress() {
        let info = RolloutLeaseInfo::from_lease(
            &lease("bob@jump2", "2025-01-01T00:00:00Z", 60),
            ts("2025-01-01T00:00:30Z"),
        );
        assert_eq!(info.holder, "bob@jump2");
        assert_eq!(info.kind, Some(RolloutKind::TalosUpgrade));
        assert_eq!(info.target.as_deref(), Some("v1.12.0"));
        assert_eq!((info.node_index, info.node_count), (3, 5));
        assert_eq!(info.current_node.as_deref(), Some("cp-3"));
        assert_eq!(info.phase.as_deref(), Some("rebooting"));
        assert!(!info.expired);
        assert_eq!(
            info.held_by("healthy").to_string(),
            "upgrade in progress on healthy by bob@jump2, node 3 of 5"
        );
    }

    #[test]
    fn a_lease_expires_after_its_duration() {
        let l = lease("bob@jump2", "2025-01-01T00:00:00Z", 60);
        let at = |s: &str| RolloutLeaseInfo::from_lease(&l, ts(s)).expired;
        assert!(!at("2025-01-01T00:00:59Z"));
        assert!(at("2025-01-01T00:01:00Z"));
        assert!(at("2025-01-02T00:00:00Z"));
    }

    #[test]
    fn a_lease_without_holder_time_or_duration_is_not_in_progress() {
        let now = ts("2025-01-01T00:00:30Z");
        let mut no_holder = lease("", "2025-01-01T00:00:00Z", 60);
        assert!(RolloutLeaseInfo::from_lease(&no_holder, now).expired);
        no_holder.spec = Some(LeaseSpec {
            holder_identity: Some("bob@jump2".into()),
            ..LeaseSpec::default()
        });
        assert!(RolloutLeaseInfo::from_lease(&no_holder, now).expired);
    }

    #[test]
    fn foreign_annotations_do_not_break_decoding() {
        let mut l = lease("bob@jump2", "2025-01-01T00:00:00Z", 60);
        let a = l.metadata.annotations.get_or_insert_with(BTreeMap::new);
        a.insert(KIND.into(), "mystery".into());
        a.insert(NODE_INDEX.into(), "three".into());
        let info = RolloutLeaseInfo::from_lease(&l, ts("2025-01-01T00:00:01Z"));
        assert_eq!(info.kind, None);
        assert_eq!(info.node_index, 0);
        assert_eq!(
            info.held_by("healthy").to_string(),
            "rollout in progress on healthy by bob@jump2, node 0 of 5"
        );
    }

    #[test]
    fn durations_are_whole_seconds_of_at_least_one() {
        assert_eq!(duration_seconds(Duration::from_millis(10)), 1);
        assert_eq!(duration_seconds(Duration::from_secs(90)), 90);
    }
}
