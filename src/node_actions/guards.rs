//! The guards of a node action, pure over the status and what the survey read: the client
//! role, no rollout holding the cluster's Lease, etcd quorum without this member (the
//! upgrade's own check), the node's workloads drainable under their disruption budgets, a
//! service Talos restarts through its API, and a member that may leave etcd.
use super::{NodeActionPlan, NodeOperation, NodeSurvey, NodeWorkloads};
use crate::fleet::ClusterStatus;
use crate::guards::{Guard, GuardId};
use crate::kube::{DisruptionBudget, NodePod};
use crate::rollout::LeaseReading;
use crate::talos::{Roles, ServiceStatus};
use crate::upgrade::guards::{lease_guard, role_guard};
use crate::upgrade::observe::ClusterObserver;
use crate::upgrade::{quorum_after_losing, quorum_without};

/// Services Talos restarts through its API besides extensions (`ext-*`): services/kubelet.go
/// is the only built-in `APIRestartableService`.
const API_RESTARTABLE: &[&str] = &["kubelet"];

/// Whether Talos restarts `service` through its API (the console offers only these).
pub fn api_restartable(service: &str) -> bool {
    API_RESTARTABLE.contains(&service) || service.starts_with("ext-")
}

/// Reads the survey and returns every guard of the plan; `lease` is what the cluster's rollout
/// Lease said, or why it could not be read (read by the caller).
pub async fn gather_guards(
    plan: &NodeActionPlan,
    status: &ClusterStatus,
    observer: &ClusterObserver,
    lease: &LeaseReading,
) -> Vec<Guard> {
    let survey = NodeSurvey::read(plan, observer).await;
    action_guards(plan, status, observer.talos.roles(), lease, &survey)
}

/// Every guard of the plan, in the order the plan shows them.
pub fn action_guards(
    plan: &NodeActionPlan,
    status: &ClusterStatus,
    roles: &Roles,
    lease: &LeaseReading,
    survey: &NodeSurvey,
) -> Vec<Guard> {
    let mut guards = vec![
        role_for(roles, &plan.operation),
        lease_guard(&plan.cluster, lease),
    ];
    if plan.takes_node_down() {
        guards.push(quorum_after_losing(status, &plan.node));
    }
    if plan.operation.facts().comes_back {
        guards.push(wait_can_finish(plan, status));
    }
    if plan.drains() {
        guards.push(drainable(plan, survey));
    }
    if let NodeOperation::ServiceRestart(service) = &plan.operation {
        guards.push(restartable(&plan.node, service, survey.services.as_ref()));
    }
    if plan.operation == NodeOperation::EtcdLeave {
        guards.extend(leave_guards(plan, status));
    }
    guards
}

/// An etcd leave's guards: the node runs a member to take out (the run waits until the member
/// list no longer has it, which it never would without one), and etcd keeps its quorum
/// without it: etcd's strict reconfiguration check (server/etcdserver/server.go
/// `mayRemoveMember`) refuses the removal otherwise, as for `taloscope etcd remove-member`.
fn leave_guards(plan: &NodeActionPlan, status: &ClusterStatus) -> Vec<Guard> {
    let (id, node) = (GuardId::WaitCanFinish, &plan.node);
    let Some(member) = &plan.etcd_member else {
        let why = format!(
            "{node} runs no etcd member (the member list does not name it): there is nothing to leave"
        );
        return vec![Guard::fail(id, why)];
    };
    let done = format!(
        "done when the member list no longer has {node}'s member {member} and etcd on {node} has stopped"
    );
    vec![Guard::pass(id, done), quorum_without(status, member, node)]
}

/// The acknowledgement of a reboot whose node's etcd member is unhealthy for another reason
/// than an alarm: it may come back healthy after the reboot, or may not.
pub const MAY_NOT_FINISH_ACK: &str = "the reboot may wait until its timeout";

/// A reboot ends when the node is back with its etcd member healthy (`node_back`): an etcd
/// alarm on the member keeps it unhealthy whatever the node does, so that wait could never
/// end. The fix is named: disarm the alarm first.
fn wait_can_finish(plan: &NodeActionPlan, status: &ClusterStatus) -> Guard {
    let id = GuardId::WaitCanFinish;
    let node = &plan.node;
    let Some(member) = &plan.etcd_member else {
        return Guard::pass(id, format!("{node} is back when it runs and is Ready"));
    };
    let alarms: Vec<&str> = status
        .etcd
        .alarms
        .iter()
        .filter(|a| &a.member_id == member)
        .map(|a| a.alarm.as_str())
        .collect();
    if let Some(alarm) = alarms.first() {
        return Guard::fail(
            id,
            format!(
                "{node}'s etcd member has a {alarm} alarm: it stays unhealthy, so the reboot could never see it back; disarm the {alarm} alarm first (etcd pane: a, disarm alarms; or taloscope etcd disarm --context {})",
                plan.cluster
            ),
        );
    }
    let healthy = status
        .etcd
        .members
        .iter()
        .find(|m| &m.id == member)
        .is_some_and(|m| m.healthy);
    if !healthy {
        return Guard::warn(
            id,
            format!(
                "{node}'s etcd member is unhealthy now: the reboot waits for it to be healthy again, which may not happen"
            ),
        )
        .acked_by(MAY_NOT_FINISH_ACK);
    }
    Guard::pass(
        id,
        format!("{node} is back when it runs, is Ready and its etcd member is healthy"),
    )
}

/// The client's role may make `operation`'s call: [`role`], or os:admin alone for what Talos
/// answers only for it.
fn role_for(roles: &Roles, operation: &NodeOperation) -> Guard {
    if !operation.facts().admin_only {
        return role(roles);
    }
    let what = format!("{}; Talos allows it for os:admin only", operation.verb());
    // Talos answers upgrades for os:admin alone too.
    role_guard(GuardId::NodeActionRole, roles, roles.may_upgrade(), &what)
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
            "{} pods to evict from {kube_node}, their budgets allow it{}",
            evict.len(),
            named_pods(&evict)
        ),
    )
}

/// The pods a drain evicts, by `namespace/name`, after a colon; the first
/// [`NAMED_PODS`] of them, then how many more.
fn named_pods(evict: &[&NodePod]) -> String {
    if evict.is_empty() {
        return String::new();
    }
    let mut names: Vec<String> = evict.iter().take(NAMED_PODS).map(|p| p.key()).collect();
    if evict.len() > NAMED_PODS {
        names.push(format!("and {} more", evict.len() - NAMED_PODS));
    }
    format!(": {}", names.join(", "))
}

/// How many pods a drain's guard names before it counts the rest.
const NAMED_PODS: usize = 10;

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
        assert!(
            g.reason
                .ends_with("1 pods to evict from w-1, their budgets allow it: default/web-1"),
            "the plan names the pods it evicts: {}",
            g.reason
        );
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
    fn a_reboot_whose_member_has_an_alarm_is_refused_naming_the_disarm_fix() {
        use crate::fleet::{EtcdAlarmReport, EtcdMemberReport};
        let mut reboot = plan(NodeOperation::Reboot);
        reboot.node = "cp-1".into();
        reboot.etcd_member = Some("00000000000000aa".into());
        let mut status = ClusterStatus::default();
        status.etcd.members.push(EtcdMemberReport {
            id: "00000000000000aa".into(),
            hostname: "cp-1".into(),
            healthy: false,
            ..Default::default()
        });
        status.etcd.alarms.push(EtcdAlarmReport {
            member_id: "00000000000000aa".into(),
            hostname: Some("cp-1".into()),
            alarm: "NOSPACE".into(),
        });
        let g = wait_can_finish(&reboot, &status);
        assert!(g.blocks(&[MAY_NOT_FINISH_ACK.to_string()]), "{g:?}");
        assert!(
            g.reason.contains("NOSPACE") && g.reason.contains("disarm the NOSPACE alarm first"),
            "{g:?}"
        );
        status.etcd.alarms.clear();
        let g = wait_can_finish(&reboot, &status);
        assert!(
            g.blocks(&[]) && !g.blocks(&[MAY_NOT_FINISH_ACK.to_string()]),
            "{g:?}"
        );
        status.etcd.members[0].healthy = true;
        assert!(!wait_can_finish(&reboot, &status).blocks(&[]));
        reboot.etcd_member = None;
        assert!(!wait_can_finish(&reboot, &status).blocks(&[]));
    }

    #[test]
    fn which_guards_each_action_has() {
        let status = ClusterStatus::default();
        let roles = Roles(vec![Role::Admin]);
        let ids = |op: NodeOperation| -> Vec<GuardId> {
            action_guards(
                &plan(op),
                &status,
                &roles,
                &Ok(None),
                &NodeSurvey::default(),
            )
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
                GuardId::WaitCanFinish,
                GuardId::WorkloadsDrainable
            ]
        );
        assert_eq!(
            ids(NodeOperation::Cordon),
            [GuardId::NodeActionRole, GuardId::NoOtherRollout]
        );
        assert_eq!(ids(NodeOperation::Rollback), ids(NodeOperation::Reboot));
        // w-1 runs no member: nothing to leave, and no quorum to count.
        assert_eq!(
            ids(NodeOperation::EtcdLeave),
            [
                GuardId::NodeActionRole,
                GuardId::NoOtherRollout,
                GuardId::WaitCanFinish
            ]
        );
    }

    #[test]
    fn an_etcd_leave_needs_a_member_to_take_out_and_the_quorum_left_without_it() {
        use crate::fleet::EtcdMemberReport;
        let member = |id: &str, hostname: &str, healthy: bool| EtcdMemberReport {
            id: id.into(),
            hostname: hostname.into(),
            healthy,
            ..Default::default()
        };
        let mut leave = plan(NodeOperation::EtcdLeave);
        let mut status = ClusterStatus::default();
        let guards = leave_guards(&leave, &status);
        assert!(
            guards[0].blocks(&[]) && guards[0].reason.contains("w-1 runs no etcd member"),
            "{guards:?}"
        );
        leave.node = "cp-1".into();
        leave.etcd_member = Some("aa".into());
        status.etcd.members = vec![member("aa", "cp-1", true), member("bb", "cp-2", true)];
        // Two members: the one left is a quorum of one, as etcd's own check allows.
        let guards = leave_guards(&leave, &status);
        assert!(guards.iter().all(|g| !g.blocks(&[])), "{guards:?}");
        assert!(guards[0].reason.contains("member aa"), "{guards:?}");
        status.etcd.members[1].healthy = false;
        let guards = leave_guards(&leave, &status);
        assert_eq!(guards[1].id, GuardId::EtcdQuorum);
        assert!(
            guards[1].blocks(&[]) && guards[1].reason.contains("removing cp-1 loses quorum"),
            "{guards:?}"
        );
        // The only member may never leave: etcd would have no member at all.
        status.etcd.members.truncate(1);
        assert!(leave_guards(&leave, &status)[1].blocks(&[]));
        let g = action_guards(
            &leave,
            &status,
            &Roles(vec![Role::Operator]),
            &Ok(None),
            &NodeSurvey::default(),
        );
        assert!(
            g[0].blocks(&[]) && g[0].reason.contains("os:admin only"),
            "{g:?}"
        );
    }

    #[test]
    fn a_rollback_is_os_admins_alone_and_its_wait_is_guarded_as_a_reboots() {
        use crate::fleet::{EtcdAlarmReport, EtcdMemberReport};
        let mut status = ClusterStatus::default();
        let mut rollback = plan(NodeOperation::Rollback);
        let role_of = |roles: Vec<Role>, op: &NodeOperation| {
            let mut p = plan(op.clone());
            p.etcd_member = None;
            let guards = action_guards(
                &p,
                &status,
                &Roles(roles),
                &Ok(None),
                &NodeSurvey::default(),
            );
            guards[0].clone()
        };
        let g = role_of(vec![Role::Operator], &NodeOperation::Rollback);
        assert_eq!(g.id, GuardId::NodeActionRole);
        assert!(g.blocks(&[]) && g.reason.contains("os:admin only"), "{g:?}");
        assert!(!role_of(vec![Role::Admin], &NodeOperation::Rollback).blocks(&[]));
        assert!(!role_of(vec![Role::Operator], &NodeOperation::Reboot).blocks(&[]));
        // A member with an alarm stays unhealthy: the rollback could never see it back.
        rollback.node = "cp-1".into();
        rollback.etcd_member = Some("00000000000000aa".into());
        status.etcd.members.push(EtcdMemberReport {
            id: "00000000000000aa".into(),
            hostname: "cp-1".into(),
            healthy: false,
            ..Default::default()
        });
        status.etcd.alarms.push(EtcdAlarmReport {
            member_id: "00000000000000aa".into(),
            hostname: Some("cp-1".into()),
            alarm: "NOSPACE".into(),
        });
        let roles = Roles(vec![Role::Admin]);
        let survey = NodeSurvey::default();
        let guards = action_guards(&rollback, &status, &roles, &Ok(None), &survey);
        let wait = guards.iter().find(|g| g.id == GuardId::WaitCanFinish);
        let wait = wait.expect("a rollback's wait is guarded");
        assert!(wait.blocks(&[MAY_NOT_FINISH_ACK.to_string()]), "{wait:?}");
        assert!(
            wait.reason.contains("disarm the NOSPACE alarm first"),
            "{wait:?}"
        );
    }
}
