//! Cluster API objects as one model, whichever version the management cluster serves:
//! `cluster.x-k8s.io` v1beta1 or v1beta2 (kubernetes-sigs/cluster-api api/core/v1beta{1,2})
//! and the Talos provider's `TalosControlPlane` v1alpha3, decoded from their JSON.
use serde::{Deserialize, Serialize};

/// A `cluster.x-k8s.io` version the model decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CapiVersion {
    V1beta1,
    V1beta2,
}

impl CapiVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            CapiVersion::V1beta1 => "v1beta1",
            CapiVersion::V1beta2 => "v1beta2",
        }
    }
}

/// One condition. v1beta2 objects (and v1beta1 ones that carry `status.v1beta2`) give
/// `metav1.Condition`s; older v1beta1 objects and the TalosControlPlane give the v1beta1
/// `Condition`, whose `severity` is kept.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapiCondition {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub status: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// RFC 3339, as the API gives it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_transition_time: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub severity: String,
}

impl CapiCondition {
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }
}

/// Who owns an object, from its first controller ownerReference (else its first one).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Owner {
    pub kind: String,
    pub name: String,
}

/// What every CAPI object has: where it is, its labels that matter, its owner, conditions.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ObjectMeta {
    pub namespace: String,
    pub name: String,
    /// `cluster.x-k8s.io/cluster-name`, else `spec.clusterName`.
    pub cluster_name: String,
    pub owner: Option<Owner>,
    pub deleting: bool,
    /// Carries the `cluster.x-k8s.io/paused` annotation: its controller skips it
    /// (cluster-api util/annotations/helpers.go `HasPaused`).
    pub paused: bool,
    pub conditions: Vec<CapiCondition>,
    /// `metadata.creationTimestamp` in seconds since the Unix epoch; `None` when absent or
    /// not RFC 3339 (the providers' oldest-first choices read it).
    pub created_unix: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct CapiCluster {
    pub meta: ObjectMeta,
    pub phase: String,
    /// `spec.controlPlaneEndpoint` as `host:port`; empty until the provider sets it.
    pub endpoint_host: String,
    pub endpoint_port: u16,
    /// `spec.controlPlaneRef`: kind and name.
    pub control_plane: Option<Owner>,
    /// `spec.topology.version` of a ClusterClass cluster.
    pub topology_version: String,
    /// `spec.paused` (v1beta1 and v1beta2 alike): no controller reconciles its objects.
    pub spec_paused: bool,
}

/// Replica counts as CAPI v1beta2 means them (ready: the Machine's Ready condition;
/// upToDate: its UpToDate condition); a v1beta1 object's `status.v1beta2` counts when it
/// has them, else its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replicas {
    pub desired: u32,
    pub current: u32,
    pub ready: u32,
    pub up_to_date: u32,
    pub available: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct MachineDeployment {
    pub meta: ObjectMeta,
    pub replicas: Replicas,
    pub phase: String,
    /// `spec.template.spec.version`.
    pub version: String,
    /// `spec.template.spec.infrastructureRef.name`: the machine template new Machines clone.
    pub infrastructure_template: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct MachineSet {
    pub meta: ObjectMeta,
    pub replicas: Replicas,
    pub version: String,
    pub infrastructure_template: String,
    /// `cluster.x-k8s.io/deployment-name`.
    pub deployment: String,
    /// Which Machines a scale-down deletes first: v1beta2's `spec.deletion.order`, v1beta1's
    /// `spec.deletePolicy` ("Random", "Newest", "Oldest"; empty means Random).
    pub deletion_order: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Machine {
    pub meta: ObjectMeta,
    pub phase: String,
    pub version: String,
    /// `status.nodeRef.name`.
    pub node: String,
    pub control_plane: bool,
    /// `cluster.x-k8s.io/set-name`.
    pub machine_set: String,
    /// `spec.infrastructureRef`: kind and name of the infrastructure machine, and its API group.
    pub infrastructure: Owner,
    pub infrastructure_group: String,
}

/// `TalosControlPlane` v1alpha3 (siderolabs/cluster-api-control-plane-provider-talos
/// api/v1alpha3/taloscontrolplane_types.go). Its status has no up-to-date count.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct TalosControlPlane {
    pub meta: ObjectMeta,
    /// `spec.replicas`.
    pub desired: u32,
    pub version: String,
    /// `spec.infrastructureTemplate`: kind and name.
    pub infrastructure_template: Owner,
    /// `spec.rolloutStrategy.type` (RollingUpdate when unset) and its maxSurge.
    pub rollout_strategy: String,
    pub max_surge: String,
    pub replicas: u32,
    pub ready_replicas: u32,
    pub unavailable_replicas: u32,
}

/// The template an infrastructure machine was cloned from
/// (`cluster.x-k8s.io/cloned-from-name` and `-groupkind`), keyed by the machine's name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct InfraMachine {
    pub namespace: String,
    pub name: String,
    pub kind: String,
    pub cloned_from_name: String,
    pub cloned_from_group_kind: String,
}

// ---- the JSON shapes, both versions in one set of optional fields ----

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct RawMeta {
    namespace: String,
    name: String,
    labels: std::collections::BTreeMap<String, String>,
    annotations: std::collections::BTreeMap<String, String>,
    owner_references: Vec<RawOwnerRef>,
    deletion_timestamp: Option<String>,
    creation_timestamp: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawOwnerRef {
    kind: String,
    name: String,
    controller: Option<bool>,
}

/// A reference: v1beta1's ObjectReference (`apiVersion`) or v1beta2's contract reference
/// (`apiGroup`); both have kind and name.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct RawRef {
    kind: String,
    name: String,
    api_version: String,
    api_group: String,
}

impl RawRef {
    /// v1beta2's `apiGroup`, else the group of v1beta1's `apiVersion`.
    fn group(&self) -> String {
        if !self.api_group.is_empty() {
            return self.api_group.clone();
        }
        match self.api_version.split_once('/') {
            Some((group, _)) => group.to_string(),
            None => String::new(),
        }
    }

    fn owner(&self) -> Owner {
        Owner {
            kind: self.kind.clone(),
            name: self.name.clone(),
        }
    }
}

/// `status` of any CAPI object: v1beta2 counts at the top; a v1beta1 object's v1beta2
/// counts and conditions under `v1beta2`; v1beta1's `updatedReplicas`.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct RawStatus {
    phase: String,
    conditions: Vec<CapiCondition>,
    v1beta2: Option<Box<RawStatus>>,
    replicas: Option<u32>,
    ready_replicas: Option<u32>,
    available_replicas: Option<u32>,
    up_to_date_replicas: Option<u32>,
    updated_replicas: Option<u32>,
    unavailable_replicas: Option<u32>,
    node_ref: Option<RawRef>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct RawSpec {
    cluster_name: String,
    paused: Option<bool>,
    replicas: Option<u32>,
    version: Option<String>,
    infrastructure_ref: Option<RawRef>,
    control_plane_ref: Option<RawRef>,
    control_plane_endpoint: Option<RawEndpoint>,
    topology: Option<RawTopology>,
    template: Option<RawTemplate>,
    // TalosControlPlane
    infrastructure_template: Option<RawRef>,
    rollout_strategy: Option<RawRolloutStrategy>,
    // MachineSet: v1beta2 `deletion.order`, v1beta1 `deletePolicy`
    deletion: Option<RawDeletion>,
    delete_policy: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawDeletion {
    order: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawEndpoint {
    host: String,
    port: u16,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawTopology {
    version: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawTemplate {
    spec: Box<RawSpec>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct RawRolloutStrategy {
    #[serde(rename = "type")]
    kind: String,
    rolling_update: Option<RawRollingUpdate>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct RawRollingUpdate {
    max_surge: Option<serde_json::Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawObject {
    metadata: RawMeta,
    spec: RawSpec,
    status: RawStatus,
}

pub(super) const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
const CONTROL_PLANE_LABEL: &str = "cluster.x-k8s.io/control-plane";
const SET_NAME_LABEL: &str = "cluster.x-k8s.io/set-name";
const DEPLOYMENT_NAME_LABEL: &str = "cluster.x-k8s.io/deployment-name";
const CLONED_FROM_NAME: &str = "cluster.x-k8s.io/cloned-from-name";
const CLONED_FROM_GROUP_KIND: &str = "cluster.x-k8s.io/cloned-from-groupkind";
const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";

impl RawObject {
    fn meta(&self) -> ObjectMeta {
        let m = &self.metadata;
        let owner = m
            .owner_references
            .iter()
            .find(|o| o.controller == Some(true))
            .or(m.owner_references.first())
            .map(|o| Owner {
                kind: o.kind.clone(),
                name: o.name.clone(),
            });
        let cluster_name = m
            .labels
            .get(CLUSTER_NAME_LABEL)
            .cloned()
            .unwrap_or_else(|| self.spec.cluster_name.clone());
        ObjectMeta {
            namespace: m.namespace.clone(),
            name: m.name.clone(),
            cluster_name,
            owner,
            deleting: m.deletion_timestamp.is_some(),
            paused: m.annotations.contains_key(PAUSED_ANNOTATION),
            conditions: self.conditions(),
            created_unix: created_unix(&m.creation_timestamp),
        }
    }

    /// The v1beta2 conditions where the object has them, else its v1beta1 ones.
    fn conditions(&self) -> Vec<CapiCondition> {
        match &self.status.v1beta2 {
            Some(v1beta2) if !v1beta2.conditions.is_empty() => v1beta2.conditions.clone(),
            _ => self.status.conditions.clone(),
        }
    }

    fn label(&self, key: &str) -> String {
        self.metadata.labels.get(key).cloned().unwrap_or_default()
    }

    /// Counts as v1beta2 means them; `desired` is `spec.replicas`.
    fn replicas(&self) -> Replicas {
        let s = &self.status;
        let newer = s.v1beta2.as_deref();
        let pick = |v2: fn(&RawStatus) -> Option<u32>, v1: Option<u32>| {
            newer.and_then(v2).or(v2(s)).or(v1).unwrap_or(0)
        };
        Replicas {
            desired: self.spec.replicas.unwrap_or(0),
            current: s.replicas.unwrap_or(0),
            ready: pick(|r| r.ready_replicas, None),
            up_to_date: pick(|r| r.up_to_date_replicas, s.updated_replicas),
            available: pick(|r| r.available_replicas, None),
        }
    }

    fn template_spec(&self) -> Option<&RawSpec> {
        self.spec.template.as_ref().map(|t| t.spec.as_ref())
    }
}

/// The longest RFC 3339 timestamp read ("2026-11-30T15:20:57.123456789+01:00" is 35).
const MAX_TIMESTAMP: usize = 40;

/// An API server's RFC 3339 timestamp as Unix seconds; longer text is not one.
fn created_unix(text: &str) -> Option<u64> {
    if text.len() > MAX_TIMESTAMP {
        return None;
    }
    let t = crate::clock::parse_utc_timestamp(text)?;
    Some(crate::clock::unix_seconds(t))
}

fn decode(value: &serde_json::Value) -> Result<RawObject, String> {
    RawObject::deserialize(value).map_err(|e| e.to_string())
}

pub(super) fn cluster_from(value: &serde_json::Value) -> Result<CapiCluster, String> {
    let o = decode(value)?;
    let endpoint = o.spec.control_plane_endpoint.as_ref();
    Ok(CapiCluster {
        meta: o.meta(),
        phase: o.status.phase.clone(),
        endpoint_host: endpoint.map(|e| e.host.clone()).unwrap_or_default(),
        endpoint_port: endpoint.map_or(0, |e| e.port),
        control_plane: o.spec.control_plane_ref.as_ref().map(RawRef::owner),
        topology_version: o
            .spec
            .topology
            .as_ref()
            .map(|t| t.version.clone())
            .unwrap_or_default(),
        spec_paused: o.spec.paused == Some(true),
    })
}

pub(super) fn machine_deployment_from(
    value: &serde_json::Value,
) -> Result<MachineDeployment, String> {
    let o = decode(value)?;
    let template = o.template_spec();
    Ok(MachineDeployment {
        meta: o.meta(),
        replicas: o.replicas(),
        phase: o.status.phase.clone(),
        version: template.and_then(|t| t.version.clone()).unwrap_or_default(),
        infrastructure_template: template
            .and_then(|t| t.infrastructure_ref.as_ref())
            .map(|r| r.name.clone())
            .unwrap_or_default(),
    })
}

pub(super) fn machine_set_from(value: &serde_json::Value) -> Result<MachineSet, String> {
    let o = decode(value)?;
    let template = o.template_spec();
    Ok(MachineSet {
        meta: o.meta(),
        replicas: o.replicas(),
        version: template.and_then(|t| t.version.clone()).unwrap_or_default(),
        infrastructure_template: template
            .and_then(|t| t.infrastructure_ref.as_ref())
            .map(|r| r.name.clone())
            .unwrap_or_default(),
        deployment: o.label(DEPLOYMENT_NAME_LABEL),
        deletion_order: o
            .spec
            .deletion
            .as_ref()
            .map(|d| d.order.clone())
            .filter(|order| !order.is_empty())
            .unwrap_or_else(|| o.spec.delete_policy.clone()),
    })
}

pub(super) fn machine_from(value: &serde_json::Value) -> Result<Machine, String> {
    let o = decode(value)?;
    Ok(Machine {
        meta: o.meta(),
        phase: o.status.phase.clone(),
        version: o.spec.version.clone().unwrap_or_default(),
        node: o
            .status
            .node_ref
            .as_ref()
            .map(|r| r.name.clone())
            .unwrap_or_default(),
        control_plane: o.metadata.labels.contains_key(CONTROL_PLANE_LABEL),
        machine_set: o.label(SET_NAME_LABEL),
        infrastructure: o
            .spec
            .infrastructure_ref
            .as_ref()
            .map(RawRef::owner)
            .unwrap_or_default(),
        infrastructure_group: o
            .spec
            .infrastructure_ref
            .as_ref()
            .map(RawRef::group)
            .unwrap_or_default(),
    })
}

pub(super) fn talos_control_plane_from(
    value: &serde_json::Value,
) -> Result<TalosControlPlane, String> {
    let o = decode(value)?;
    let strategy = o.spec.rollout_strategy.as_ref();
    let max_surge = strategy
        .and_then(|s| s.rolling_update.as_ref())
        .and_then(|r| r.max_surge.as_ref())
        .map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default();
    let rollout_strategy = strategy
        .map(|s| s.kind.clone())
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| "RollingUpdate".to_string());
    Ok(TalosControlPlane {
        meta: o.meta(),
        desired: o.spec.replicas.unwrap_or(0),
        version: o.spec.version.clone().unwrap_or_default(),
        infrastructure_template: o
            .spec
            .infrastructure_template
            .as_ref()
            .map(RawRef::owner)
            .unwrap_or_default(),
        rollout_strategy,
        max_surge,
        replicas: o.status.replicas.unwrap_or(0),
        ready_replicas: o.status.ready_replicas.unwrap_or(0),
        unavailable_replicas: o.status.unavailable_replicas.unwrap_or(0),
    })
}

pub(super) fn infra_machine_from(
    value: &serde_json::Value,
    kind: &str,
) -> Result<InfraMachine, String> {
    let o = decode(value)?;
    let annotation = |key: &str| o.metadata.annotations.get(key).cloned().unwrap_or_default();
    Ok(InfraMachine {
        namespace: o.metadata.namespace.clone(),
        name: o.metadata.name.clone(),
        kind: kind.to_string(),
        cloned_from_name: annotation(CLONED_FROM_NAME),
        cloned_from_group_kind: annotation(CLONED_FROM_GROUP_KIND),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creation_time_and_deletion_order_are_read_from_either_version() {
        let v2 = serde_json::json!({"metadata": {"name": "w", "creationTimestamp": "1970-01-01T00:01:40Z"},
            "spec": {"deletion": {"order": "Oldest"}}});
        let set = machine_set_from(&v2).unwrap();
        assert_eq!(set.meta.created_unix, Some(100));
        assert_eq!(set.deletion_order, "Oldest");
        let v1 = serde_json::json!({"metadata": {"name": "w"}, "spec": {"deletePolicy": "Newest"}});
        let set = machine_set_from(&v1).unwrap();
        assert_eq!(
            (set.meta.created_unix, set.deletion_order.as_str()),
            (None, "Newest")
        );
        // Not a timestamp, or longer than any: no creation time.
        for bad in [
            "yesterday",
            &format!("1970-01-01T00:01:40{}Z", "0".repeat(64)),
        ] {
            let m = serde_json::json!({"metadata": {"name": "m", "creationTimestamp": bad}});
            assert_eq!(machine_from(&m).unwrap().meta.created_unix, None, "{bad}");
        }
    }
}
