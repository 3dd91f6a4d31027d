//! The guards of a node action, pure over the status and what the survey read: the client
//! role, no rollout holding the cluster's Lease, etcd quorum without this member (the
//! upgrade's own check), the node's workloads drainable under their disruption budgets, and a
//! service Talos restarts through its API.
use super::{NodeActionPlan, NodeOperation, NodeSurvey, NodeWorkloads};
use crate::fleet::ClusterStatus;
use crate::guards::{Guard, GuardId};
use crate::kube::{DisruptionBudget, NodePod};
use crate::rollout::RolloutInProgress;
use crate::talos::{Roles, ServiceStatus};
use crate::upgrade::guards::{no_other_rollout, role_guard};
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::quorum_after_losing;

/// Services Talos restarts through its API besides extensions (`ext-*`): services/kubelet.go
/// is the only built-in `APIRestartableService`.
const API_RESTARTABLE: &[&str] = &["kubelet"];

/// Whether Talos restarts `service` through its API (the console offers only these).
pub fn api_restartable(service: &str) -> bool {
    API_RESTARTABLE.contains(&service) || service.starts_with("ext-")
}

/// Reads the survey and the cluster's rollout Lease (`other`, read by the caller) and returns
/// every guard of the plan.
pub async fn gather_guards(
    plan: &NodeActionPlan,
    status: &ClusterStatus,
    observer: &ClusterObserver,
    other: Option<&RolloutInProgress>,
) -> Vec<Guard> {
    let survey = NodeSurvey::read(plan, observer).await;
    action_guards(plan, status, observer.talos.roles(), other, &survey)
}

/// Every guard of the plan, in the order the plan shows them.
pub fn action_guards(
    plan: &NodeActionPlan,
    status: &ClusterStatus,
    roles: &Roles,
    other: Option<&RolloutInProgress>,
    survey: &NodeSurvey,
) -> Vec<Guard> {
    let mut guards = vec![role(roles), no_other_rollout(&plan.cluster, other)];
    if plan.takes_node_down() {
        guards.push(quorum_after_losing(status, &plan.node));
    }
    if plan.drains() {
        guards.push(drainable(plan, survey));
    }
    if let NodeOperation::ServiceRestart(service) = &plan.operation {
        guards.push(restartable(&plan.node, service, survey.services.as_ref()));
    }
    guards
}

/// The client's role may act on nodes (os:operator or os:admin).
pub(crate) fn role(roles: &Roles) -> Guard {
    role_guard(
        GuardId::NodeActionRole,
        roles,
        roles.may_reboot(),
        "act on nodes; node actions need os:operator or os:admin",
    )
}

/// Whether the pods a drain evicts may go now: no budget selecting one of them allows no
/// disruption, and none is selected by two budgets (eviction.go refuses those outright).
fn drainable(plan: &NodeActionPlan, survey: &NodeSurvey) -> Guard {
    let id = GuardId::WorkloadsDrainable;
    let node = &plan.node;
    let Some(kube_node) = &survey.kube_node else {
        return match &survey.workloads {
            Some(Err(e)) => Guard::fail(id, format!("{node}: {e}")),
            _ => Guard::pass(
                id,
                format!("{node} has no Kubernetes node: nothing to drain"),
            ),
        };
    };
    let NodeWorkloads { pods, budgets } = match &survey.workloads {
        Some(Ok(read)) => read,
        Some(Err(e)) => return Guard::fail(id, format!("{kube_node}: {e}")),
        None => return Guard::pass(id, format!("{kube_node}: nothing to drain")),
    };
    let evict: Vec<&NodePod> = pods.iter().filter(|p| p.must_evict()).collect();
    let mut refusals = Vec::new();
    for pod in &evict {
        let selecting: Vec<&DisruptionBudget> = budgets.iter().filter(|b| b.selects(pod)).collect();
        match selecting.as_slice() {
            [] => {}
            [budget] if budget.disruptions_allowed <= 0 => refusals.push(format!(
                "{}: budget {} allows no disruption (needs {} healthy, has {})",
                pod.key(),
                budget.key(),
                budget.desired_healthy,
                budget.current_healthy
            )),
            [_] => {}
            several => refusals.push(format!(
                "{}: selected by {} budgets, which eviction refuses",
                pod.key(),
                several.len()
            )),
        }
    }
    if let Some(first) = refusals.first() {
        let more = match refusals.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        return Guard::fail(id, format!("{first}{more}"));
    }
    Guard::pass(
        id,
        format!(
            "{} pods to evict from {kube_node}, their budgets allow it",
            evict.len()
        ),
    )
}

fn restartable(
    node: &str,
    service: &str,
    services: Option<&Result<Vec<ServiceStatus>, String>>,
) -> Guard {
    let id = GuardId::ServiceRestartable;
    let listed = match services {
        Some(Ok(list)) => list,
        Some(Err(e)) => return Guard::fail(id, format!("{node}: listing services: {e}")),
        None => return Guard::fail(id, format!("{node}: services not read")),
    };
    if !listed.iter().any(|s| s.id == service) {
        let ids: Vec<&str> = listed.iter().map(|s| s.id.as_str()).collect();
        return Guard::fail(
            id,
            format!(
                "{node} runs no service {service:?} (it runs {})",
                ids.join(", ")
            ),
        );
    }
    if !api_restartable(service) {
        return Guard::fail(
            id,
            format!(
                "Talos does not restart {service} through its API (only the kubelet and extensions)"
            ),
        );
    }
    Guard::pass(id, format!("{node} runs {service}; Talos restarts it"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::NodeRole;
    use crate::talos::Role;

    fn plan(operation: NodeOperation) -> NodeActionPlan {
        NodeActionPlan {
            cluster: "prod".into(),
            operation,
            node: "w-1".into(),
            address: "127.0.0.1".into(),
            role: NodeRole::Worker,
            etcd_member: None,
        }
    }

    fn web_pod() -> NodePod {
        NodePod {
            namespace: "default".into(),
            name: "web-1".into(),
            owner_kind: Some("ReplicaSet".into()),
            mirror: false,
            finished: false,
            labels: [("app".to_string(), "web".to_string())].into(),
        }
    }

    fn budget(allowed: i32) -> DisruptionBudget {
        DisruptionBudget {
            namespace: "default".into(),
            name: "web".into(),
            match_labels: [("app".to_string(), "web".to_string())].into(),
            match_expressions: vec![],
            disruptions_allowed: allowed,
            current_healthy: 4,
            desired_healthy: 4 - allowed,
        }
    }

    fn survey(budgets: Vec<DisruptionBudget>) -> NodeSurvey {
        NodeSurvey {
            kube_node: Some("w-1".into()),
            workloads: Some(Ok(NodeWorkloads {
                pods: vec![web_pod()],
                budgets,
            })),
            services: None,
        }
    }

    #[test]
    fn a_budget_with_no_disruption_left_fails_the_drain_guard() {
        let g = drainable(&plan(NodeOperation::Drain), &survey(vec![budget(0)]));
        assert!(g.blocks(&[]), "{g:?}");
        assert!(g.reason.contains("default/web-1") && g.reason.contains("needs 4 healthy, has 4"));
        let g = drainable(&plan(NodeOperation::Drain), &survey(vec![budget(1)]));
        assert!(!g.blocks(&[]), "{g:?}");
        let g = drainable(
            &plan(NodeOperation::Drain),
            &survey(vec![budget(1), budget(2)]),
        );
        assert!(g.blocks(&[]) && g.reason.contains("2 budgets"), "{g:?}");
    }

    #[test]
    fn a_reader_may_not_act_and_only_restartable_services_restart() {
        assert!(role(&Roles(vec![Role::Reader])).blocks(&[]));
        assert!(!role(&Roles(vec![Role::Operator])).blocks(&[]));
        let list = |ids: &[&str]| {
            Ok(ids
                .iter()
                .map(|id| ServiceStatus {
                    id: id.to_string(),
                    state: "Running".into(),
                    healthy: Some(true),
                    last_message: String::new(),
                })
                .collect())
        };
        let services = list(&["etcd", "kubelet"]);
        assert!(!restartable("cp-1", "kubelet", Some(&services)).blocks(&[]));
        assert!(restartable("cp-1", "etcd", Some(&services)).blocks(&[]));
        assert!(restartable("cp-1", "nope", Some(&services)).blocks(&[]));
    }

    #[test]
    fn which_guards_each_action_has() {
        let status = ClusterStatus::default();
        let roles = Roles(vec![Role::Admin]);
        let ids = |op: NodeOperation| -> Vec<GuardId> {
            action_guards(&plan(op), &status, &roles, None, &NodeSurvey::default())
                .iter()
                .map(|g| g.id)
                .collect()
        };
        assert_eq!(
            ids(NodeOperation::Reboot),
            [
                GuardId::NodeActionRole,
                GuardId::NoOtherRollout,
                GuardId::EtcdQuorum,
                GuardId::WorkloadsDrainable
            ]
        );
        assert_eq!(
            ids(NodeOperation::Cordon),
            [GuardId::NodeActionRole, GuardId::NoOtherRollout]
        );
    }
}
