//! The PodDisruptionBudget a test may put over the sim's Deployment: its status as the
//! disruption controller computes it (kubernetes pkg/controller/disruption/disruption.go:
//! currentHealthy, desiredHealthy = minAvailable, disruptionsAllowed = current - desired),
//! the object the policy/v1 list serves, and the 429 the Eviction subresource answers when the
//! budget allows no disruption (pkg/registry/core/pod/storage/eviction.go `checkAndDecrement`).
use serde_json::{Value, json};

use super::objects::{rfc3339, status_error, uid};

/// The budget's name; it selects the Deployment's pods (`app: <name>`).
pub(super) const BUDGET: &str = "web";

/// The budget's status over the pods it selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct BudgetStatus {
    pub min_available: usize,
    /// Selected pods that are Running and Ready.
    pub current_healthy: usize,
    pub expected_pods: usize,
}

impl BudgetStatus {
    pub fn desired_healthy(&self) -> usize {
        self.min_available
    }

    /// disruption.go `updatePdbStatus`: never below zero.
    pub fn disruptions_allowed(&self) -> usize {
        self.current_healthy.saturating_sub(self.min_available)
    }

    /// The PodDisruptionBudget object, as `GET /apis/policy/v1/.../poddisruptionbudgets`.
    pub fn object(&self, namespace: &str, created_unix: i64) -> Value {
        let allowed = self.disruptions_allowed();
        json!({
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {
                "name": BUDGET,
                "namespace": namespace,
                "uid": uid("PodDisruptionBudget", BUDGET),
                "generation": 1,
                "creationTimestamp": rfc3339(created_unix),
            },
            "spec": {
                "minAvailable": self.min_available,
                "selector": {"matchLabels": {"app": BUDGET}},
            },
            "status": {
                "observedGeneration": 1,
                "currentHealthy": self.current_healthy,
                "desiredHealthy": self.desired_healthy(),
                "disruptionsAllowed": allowed,
                "expectedPods": self.expected_pods,
                "conditions": [{
                    "type": "DisruptionAllowed",
                    "status": if allowed > 0 { "True" } else { "False" },
                    "reason": if allowed > 0 { "SufficientPods" } else { "InsufficientPods" },
                    "message": "",
                    "observedGeneration": 1,
                    "lastTransitionTime": rfc3339(created_unix),
                }],
            },
        })
    }

    /// eviction.go: a budget with no disruption left refuses with 429 and says why in a
    /// `DisruptionBudget` cause; `None` when the eviction may go ahead.
    pub fn refusal(&self) -> Option<Value> {
        if self.disruptions_allowed() > 0 {
            return None;
        }
        let mut status = status_error(
            429,
            "TooManyRequests",
            "Cannot evict pod as it would violate the pod's disruption budget.",
        );
        status["details"] = json!({
            "causes": [{
                "reason": "DisruptionBudget",
                "message": format!(
                    "The disruption budget {BUDGET} needs {} healthy pods and has {} currently",
                    self.desired_healthy(),
                    self.current_healthy
                ),
            }],
        });
        Some(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_with_no_disruption_left_refuses_with_the_servers_words() {
        let tight = BudgetStatus {
            min_available: 4,
            current_healthy: 4,
            expected_pods: 4,
        };
        assert_eq!(tight.disruptions_allowed(), 0);
        let refusal = tight.refusal().expect("refused");
        assert_eq!(refusal["code"], 429);
        assert_eq!(
            refusal["details"]["causes"][0]["message"],
            "The disruption budget web needs 4 healthy pods and has 4 currently"
        );
        let loose = BudgetStatus {
            min_available: 3,
            ..tight
        };
        assert_eq!(loose.disruptions_allowed(), 1);
        assert!(loose.refusal().is_none());
        assert_eq!(
            loose.object("default", 0)["status"]["disruptionsAllowed"],
            1
        );
    }
}
