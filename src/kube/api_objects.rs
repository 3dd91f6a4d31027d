//! The parts of the API's Node, Pod, DaemonSet and PodDisruptionBudget objects the console
//! reads, decoded the way k8s-openapi decodes them (a required field that is missing or null
//! takes its default; other fields are skipped unread). k8s-openapi's whole types drag in the deserializers of all of
//! PodSpec (volumes, probes, affinity...), which cost the console's binary and resident size.
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Deserializer};

/// A required field as k8s-openapi reads it: missing or `null` is the type's default.
fn required<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(d: D) -> Result<T, D::Error> {
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

/// `core/v1` Node.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Node {
    #[serde(default, deserialize_with = "required")]
    pub metadata: ObjectMeta,
    pub spec: Option<NodeSpec>,
    pub status: Option<NodeStatus>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct NodeSpec {
    pub taints: Option<Vec<Taint>>,
    pub unschedulable: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Taint {
    #[serde(default, deserialize_with = "required")]
    pub key: String,
    pub value: Option<String>,
    #[serde(default, deserialize_with = "required")]
    pub effect: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    pub conditions: Option<Vec<Condition>>,
    pub addresses: Option<Vec<NodeAddress>>,
    pub node_info: Option<NodeSystemInfo>,
}

/// A node's or a pod's condition (`NodeCondition`, `PodCondition`): the fields read of both.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Condition {
    #[serde(rename = "type", default, deserialize_with = "required")]
    pub type_: String,
    #[serde(default, deserialize_with = "required")]
    pub status: String,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct NodeAddress {
    #[serde(rename = "type", default, deserialize_with = "required")]
    pub type_: String,
    #[serde(default, deserialize_with = "required")]
    pub address: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSystemInfo {
    #[serde(default, deserialize_with = "required")]
    pub kubelet_version: String,
}

/// `core/v1` Pod.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Pod {
    #[serde(default, deserialize_with = "required")]
    pub metadata: ObjectMeta,
    pub spec: Option<PodSpec>,
    pub status: Option<PodStatus>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    #[serde(default, deserialize_with = "required")]
    pub containers: Vec<Container>,
    pub node_name: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Container {
    #[serde(default, deserialize_with = "required")]
    pub name: String,
    pub image: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    pub phase: Option<String>,
    pub conditions: Option<Vec<Condition>>,
    #[serde(rename = "hostIP")]
    pub host_ip: Option<String>,
}

/// `apps/v1` DaemonSet.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct DaemonSet {
    #[serde(default, deserialize_with = "required")]
    pub metadata: ObjectMeta,
    pub spec: Option<DaemonSetSpec>,
    pub status: Option<DaemonSetStatus>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct DaemonSetSpec {
    #[serde(default, deserialize_with = "required")]
    pub template: PodTemplateSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct PodTemplateSpec {
    pub spec: Option<PodSpec>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetStatus {
    #[serde(default, deserialize_with = "required")]
    pub desired_number_scheduled: i32,
    pub updated_number_scheduled: Option<i32>,
    pub number_available: Option<i32>,
    pub observed_generation: Option<i64>,
}

/// `policy/v1` PodDisruptionBudget.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PodDisruptionBudget {
    #[serde(default, deserialize_with = "required")]
    pub metadata: ObjectMeta,
    pub spec: Option<PodDisruptionBudgetSpec>,
    pub status: Option<PodDisruptionBudgetStatus>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct PodDisruptionBudgetSpec {
    pub selector: Option<LabelSelector>,
}

/// `meta/v1` LabelSelector.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    pub match_expressions: Option<Vec<LabelSelectorRequirement>>,
    pub match_labels: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct LabelSelectorRequirement {
    #[serde(default, deserialize_with = "required")]
    pub key: String,
    #[serde(default, deserialize_with = "required")]
    pub operator: String,
    pub values: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudgetStatus {
    #[serde(default, deserialize_with = "required")]
    pub current_healthy: i32,
    #[serde(default, deserialize_with = "required")]
    pub desired_healthy: i32,
    #[serde(default, deserialize_with = "required")]
    pub disruptions_allowed: i32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_or_null_required_fields_take_their_defaults_and_unread_fields_are_skipped() {
        let node: Node = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "cp-1", "managedFields": [{"manager": "kubelet"}]},
            "spec": {"podCIDR": "10.244.0.0/24", "taints": [{"key": "k", "effect": null}]},
            "status": {
                "conditions": [{"status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                "nodeInfo": {"kubeletVersion": "v1.34.1", "bootID": "b"},
                "images": [{"names": ["x"], "sizeBytes": 1}],
            },
        }))
        .expect("node");
        let status = node.status.unwrap();
        assert_eq!(status.conditions.unwrap()[0].type_, "");
        assert_eq!(status.node_info.unwrap().kubelet_version, "v1.34.1");
        assert_eq!(node.spec.unwrap().taints.unwrap()[0].effect, "");
        let pod: Pod = serde_json::from_value(serde_json::json!({"metadata": null})).unwrap();
        assert!(pod.metadata.name.is_none() && pod.spec.is_none());
    }

    #[test]
    fn a_field_read_with_the_wrong_type_is_refused() {
        let wrong = serde_json::json!({"spec": {"nodeName": 5}});
        assert!(serde_json::from_value::<Pod>(wrong).is_err());
    }
}
