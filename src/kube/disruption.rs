//! PodDisruptionBudgets as a drain needs them: which pods each budget selects and how many
//! disruptions it allows now (policy/v1 `status.disruptionsAllowed`), read from the API.
use std::collections::BTreeMap;

use super::api_objects::{LabelSelector, PodDisruptionBudget};
use super::client::{Items, KubeClient, KubeError};
use super::drain::NodePod;

/// One budget, in the words the drain guard decides by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisruptionBudget {
    pub namespace: String,
    pub name: String,
    /// `matchLabels`, and `matchExpressions` as (key, operator, values).
    pub match_labels: BTreeMap<String, String>,
    pub match_expressions: Vec<(String, String, Vec<String>)>,
    pub disruptions_allowed: i32,
    pub current_healthy: i32,
    pub desired_healthy: i32,
}

impl DisruptionBudget {
    pub fn from_api(pdb: &PodDisruptionBudget) -> DisruptionBudget {
        let selector: LabelSelector = pdb
            .spec
            .as_ref()
            .and_then(|s| s.selector.clone())
            .unwrap_or_default();
        let status = pdb.status.as_ref();
        DisruptionBudget {
            namespace: pdb.metadata.namespace.clone().unwrap_or_default(),
            name: pdb.metadata.name.clone().unwrap_or_default(),
            match_labels: selector.match_labels.unwrap_or_default(),
            match_expressions: selector
                .match_expressions
                .unwrap_or_default()
                .into_iter()
                .map(|e| (e.key, e.operator, e.values.unwrap_or_default()))
                .collect(),
            disruptions_allowed: status.map_or(0, |s| s.disruptions_allowed),
            current_healthy: status.map_or(0, |s| s.current_healthy),
            desired_healthy: status.map_or(0, |s| s.desired_healthy),
        }
    }

    /// Whether the budget selects `pod`: same namespace, every label and expression matched
    /// (an empty policy/v1 selector selects every pod of the namespace).
    pub fn selects(&self, pod: &NodePod) -> bool {
        if pod.namespace != self.namespace {
            return false;
        }
        let labels_match = self
            .match_labels
            .iter()
            .all(|(k, v)| pod.labels.get(k) == Some(v));
        let expressions_match = self.match_expressions.iter().all(|(key, op, values)| {
            let value = pod.labels.get(key);
            match op.as_str() {
                "In" => value.is_some_and(|v| values.contains(v)),
                "NotIn" => value.is_none_or(|v| !values.contains(v)),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        });
        labels_match && expressions_match
    }

    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

impl KubeClient {
    /// Every PodDisruptionBudget of the cluster.
    pub async fn disruption_budgets(&self) -> Result<Vec<DisruptionBudget>, KubeError> {
        let list: Items<PodDisruptionBudget> = self
            .rest()
            .get("/apis/policy/v1/poddisruptionbudgets", &[])
            .await
            .map_err(|e| self.error(e))?;
        Ok(list.items.iter().map(DisruptionBudget::from_api).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(labels: &[(&str, &str)]) -> NodePod {
        NodePod {
            namespace: "default".into(),
            name: "p".into(),
            owner_kind: Some("ReplicaSet".into()),
            mirror: false,
            finished: false,
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn selectors_match_labels_expressions_and_namespace() {
        let json = serde_json::json!({
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 3, "selector": {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["batch"]}]
            }},
            "status": {"disruptionsAllowed": 0, "currentHealthy": 3, "desiredHealthy": 3,
                       "expectedPods": 3}
        });
        let pdb: PodDisruptionBudget = serde_json::from_value(json).expect("pdb");
        let b = DisruptionBudget::from_api(&pdb);
        assert_eq!((b.disruptions_allowed, b.desired_healthy), (0, 3));
        assert!(b.selects(&pod(&[("app", "web")])));
        assert!(!b.selects(&pod(&[("app", "web"), ("tier", "batch")])));
        assert!(!b.selects(&pod(&[("app", "db")])));
        let mut elsewhere = pod(&[("app", "web")]);
        elsewhere.namespace = "prod".into();
        assert!(!b.selects(&elsewhere));
    }
}
