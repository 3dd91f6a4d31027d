//! A plain `coordination.k8s.io/v1` Lease client: read a lease, take it for a
//! holder (or take over one that expired), renew it with new annotations and
//! release it. Every write carries the resourceVersion it read, so two writers
//! racing for one lease never both win. What the annotations mean is the
//! caller's business.
use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use reqwest::Method;

use super::client::{KubeClient, KubeError};
use super::rest::{Body, CallError};

/// How often `acquire_lease` reads and tries again when another writer
/// changed the lease between its read and its write.
const ACQUIRE_ATTEMPTS: usize = 3;

/// A lease as read: who holds it, its annotations, and whether it expired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRecord {
    /// Empty when nobody holds it.
    pub holder: String,
    pub annotations: BTreeMap<String, String>,
    /// Not renewed within its duration (or never held).
    pub expired: bool,
}

impl LeaseRecord {
    /// Decodes the lease as of `now`.
    pub fn from_lease(lease: &Lease, now: Timestamp) -> LeaseRecord {
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().unwrap_or_default();
        LeaseRecord {
            expired: holder.is_empty() || lease_expired(&spec, now),
            holder,
            annotations: lease.metadata.annotations.clone().unwrap_or_default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// Another holder has the lease and it has not expired.
    #[error("lease {name} is held by {}", record.holder)]
    Held { name: String, record: LeaseRecord },
    /// Another writer changed or deleted the lease since our last write.
    #[error("lease {name} is no longer ours: now {holder}")]
    Lost { name: String, holder: String },
    #[error(transparent)]
    Kube(#[from] KubeError),
}

/// What `acquire_lease` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseClaim {
    pub namespace: String,
    pub name: String,
    /// `user@host` of the claimant.
    pub holder: String,
    pub duration: Duration,
    pub annotations: BTreeMap<String, String>,
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

fn duration_seconds(duration: Duration) -> i32 {
    i32::try_from(duration.as_secs().max(1)).unwrap_or(i32::MAX)
}

/// Status code and reason of an API refusal, if that is what `e` is.
fn refusal(e: &CallError) -> Option<(u16, &str)> {
    match e {
        CallError::Api(status) => Some((status.code, status.reason.as_str())),
        _ => None,
    }
}

/// The lease while we hold it. Renew it while the work runs and release it at
/// the end; dropping it leaves the lease to expire.
pub struct HeldLease {
    client: KubeClient,
    namespace: String,
    name: String,
    holder: String,
    /// The lease as last written by us; its resourceVersion guards the next write.
    lease: Lease,
}

/// The Leases of one namespace.
struct Leases<'a> {
    client: &'a KubeClient,
    path: String,
}

impl Leases<'_> {
    fn named(&self, name: &str) -> String {
        format!("{}/{name}", self.path)
    }

    async fn get_opt(&self, name: &str) -> Result<Option<Lease>, CallError> {
        self.client.rest().get_opt(&self.named(name)).await
    }

    async fn create(&self, lease: &Lease) -> Result<Lease, CallError> {
        let body = Some(Body::json(lease));
        self.client
            .rest()
            .call(Method::POST, &self.path, &[], body)
            .await
    }

    async fn replace(&self, name: &str, lease: &Lease) -> Result<Lease, CallError> {
        let body = Some(Body::json(lease));
        self.client
            .rest()
            .call(Method::PUT, &self.named(name), &[], body)
            .await
    }

    /// Deletes the lease only while its resourceVersion is `resource_version`.
    async fn delete(&self, name: &str, resource_version: Option<&str>) -> Result<(), CallError> {
        let options = serde_json::json!({
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "preconditions": {"resourceVersion": resource_version},
        });
        let body = Some(Body::json(&options));
        self.client
            .rest()
            .call::<serde_json::Value>(Method::DELETE, &self.named(name), &[], body)
            .await
            .map(|_| ())
    }
}

impl KubeClient {
    fn leases(&self, namespace: &str) -> Leases<'_> {
        Leases {
            client: self,
            path: format!("/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"),
        }
    }

    /// The lease `namespace/name`; `None` when there is none.
    pub async fn read_lease(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<LeaseRecord>, KubeError> {
        let lease = self
            .leases(namespace)
            .get_opt(name)
            .await
            .map_err(|e| self.error(e))?;
        Ok(lease.map(|l| LeaseRecord::from_lease(&l, Timestamp::now())))
    }

    /// Takes the lease for `claim.holder`: creates it, or takes over one that
    /// expired or that `takes_over` accepts (the same holder resuming its own
    /// work). Every take-over carries the resourceVersion it read.
    pub async fn acquire_lease(
        &self,
        claim: &LeaseClaim,
        takes_over: &(dyn Fn(&LeaseRecord) -> bool + Send + Sync),
    ) -> Result<HeldLease, LeaseError> {
        let api = self.leases(&claim.namespace);
        let now = MicroTime(Timestamp::now());
        let spec = LeaseSpec {
            holder_identity: Some(claim.holder.clone()),
            lease_duration_seconds: Some(duration_seconds(claim.duration)),
            acquire_time: Some(now.clone()),
            renew_time: Some(now),
            ..LeaseSpec::default()
        };
        let held = |lease: Lease| HeldLease {
            client: self.clone(),
            namespace: claim.namespace.clone(),
            name: claim.name.clone(),
            holder: claim.holder.clone(),
            lease,
        };
        let refused = |record: LeaseRecord| LeaseError::Held {
            name: claim.name.clone(),
            record,
        };
        let mut last_seen = None;
        for _ in 0..ACQUIRE_ATTEMPTS {
            let fresh = Lease {
                metadata: ObjectMeta {
                    name: Some(claim.name.clone()),
                    namespace: Some(claim.namespace.clone()),
                    annotations: Some(claim.annotations.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(spec.clone()),
            };
            match api.create(&fresh).await {
                Ok(lease) => return Ok(held(lease)),
                Err(e) if refusal(&e).is_some_and(|(code, _)| code == 409) => {}
                Err(e) => return Err(self.error(e).into()),
            }
            let Some(existing) = api.get_opt(&claim.name).await.map_err(|e| self.error(e))? else {
                // Released between our create and our read: create again.
                continue;
            };
            let record = LeaseRecord::from_lease(&existing, Timestamp::now());
            if !record.expired && !takes_over(&record) {
                return Err(refused(record));
            }
            let mut takeover = existing;
            takeover.metadata.annotations = Some(claim.annotations.clone());
            takeover.spec = Some(LeaseSpec {
                lease_transitions: Some(
                    takeover
                        .spec
                        .as_ref()
                        .and_then(|s| s.lease_transitions)
                        .unwrap_or(0)
                        + i32::from(record.holder != claim.holder),
                ),
                ..spec.clone()
            });
            match api.replace(&claim.name, &takeover).await {
                Ok(lease) => return Ok(held(lease)),
                // Someone wrote it after our read (409) or deleted it (404): read again.
                Err(e) if refusal(&e).is_some_and(|(code, _)| code == 409 || code == 404) => {
                    last_seen = Some(record);
                }
                Err(e) => return Err(self.error(e).into()),
            }
        }
        Err(
            match self.read_lease(&claim.namespace, &claim.name).await? {
                Some(record) => refused(record),
                None => last_seen.map_or_else(
                    || LeaseError::Lost {
                        name: claim.name.clone(),
                        holder: "nobody (the lease keeps changing)".into(),
                    },
                    refused,
                ),
            },
        )
    }
}

impl HeldLease {
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// The lease's resourceVersion as last written by us.
    pub fn resource_version(&self) -> Option<&str> {
        self.lease.metadata.resource_version.as_deref()
    }

    /// Who has the lease now, for `Lost`: read it again, or say it is gone.
    async fn lost(&self) -> LeaseError {
        let holder = match self.client.read_lease(&self.namespace, &self.name).await {
            Ok(Some(record)) if record.holder.is_empty() => "nobody".to_string(),
            Ok(Some(record)) => record.holder,
            Ok(None) => "nobody (the lease was deleted)".to_string(),
            Err(e) => format!("unknown ({e})"),
        };
        LeaseError::Lost {
            name: self.name.clone(),
            holder,
        }
    }

    /// Renews the lease and applies `changes` to its annotations (a value
    /// sets one, `None` removes it). `Lost` when another writer changed or
    /// deleted it since our last write.
    pub async fn renew(
        &mut self,
        changes: &BTreeMap<String, Option<String>>,
    ) -> Result<(), LeaseError> {
        let mut next = self.lease.clone();
        let annotations = next.metadata.annotations.get_or_insert_with(BTreeMap::new);
        for (key, value) in changes {
            match value {
                Some(value) => annotations.insert(key.clone(), value.clone()),
                None => annotations.remove(key),
            };
        }
        next.spec.get_or_insert_with(LeaseSpec::default).renew_time =
            Some(MicroTime(Timestamp::now()));
        match self
            .client
            .leases(&self.namespace)
            .replace(&self.name, &next)
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
    /// deleted) when another writer has it now. Already gone is fine.
    pub async fn release(self) -> Result<(), LeaseError> {
        let resource_version = self.lease.metadata.resource_version.as_deref();
        match self
            .client
            .leases(&self.namespace)
            .delete(&self.name, resource_version)
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
                annotations: Some(BTreeMap::from([("example.org/a".into(), "1".into())])),
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
    fn a_record_has_the_holder_and_annotations() {
        let record = LeaseRecord::from_lease(
            &lease("bob@jump2", "2025-01-01T00:00:00Z", 60),
            ts("2025-01-01T00:00:30Z"),
        );
        assert_eq!(record.holder, "bob@jump2");
        assert_eq!(record.annotations.get("example.org/a").unwrap(), "1");
        assert!(!record.expired);
    }

    #[test]
    fn a_lease_expires_after_its_duration() {
        let l = lease("bob@jump2", "2025-01-01T00:00:00Z", 60);
        let at = |s: &str| LeaseRecord::from_lease(&l, ts(s)).expired;
        assert!(!at("2025-01-01T00:00:59Z"));
        assert!(at("2025-01-01T00:01:00Z"));
        assert!(at("2025-01-02T00:00:00Z"));
    }

    #[test]
    fn a_lease_without_holder_time_or_duration_is_expired() {
        let now = ts("2025-01-01T00:00:30Z");
        let mut no_holder = lease("", "2025-01-01T00:00:00Z", 60);
        assert!(LeaseRecord::from_lease(&no_holder, now).expired);
        no_holder.spec = Some(LeaseSpec {
            holder_identity: Some("bob@jump2".into()),
            ..LeaseSpec::default()
        });
        assert!(LeaseRecord::from_lease(&no_holder, now).expired);
    }

    #[test]
    fn durations_are_whole_seconds_of_at_least_one() {
        assert_eq!(duration_seconds(Duration::from_millis(10)), 1);
        assert_eq!(duration_seconds(Duration::from_secs(90)), 90);
    }
}
