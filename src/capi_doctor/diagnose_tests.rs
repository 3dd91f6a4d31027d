//! The doctor over the CAPI fixture tree and the upgrade's fixture statuses: each stuck state
//! found with its fix (or none), its guards, and a healthy cluster found healthy.
use super::*;
use crate::capi::tree_tests::fixture_tree;
use crate::capi::{ClusterTree, MachineRole};
use crate::fleet::{ClusterStatus, EtcdMemberReport, NodeRole};
use crate::guards::{GuardId, Verdict};
use crate::kube::CapiVersion;
use crate::talos::{Role, Roles};
use crate::upgrade::fixtures::{cluster, node, recount, set_member_healthy};

/// The workload cluster over the Talos API: cp-a (leader), cp-b, cp-c and w-1, the nodes of
/// the fixture tree's Machines (cp-c's Machine is outdated: the rollout goes on).
fn status() -> ClusterStatus {
    let nodes = vec![
        node("cp-a", 0, NodeRole::Controlplane, "v1.11.3"),
        node("cp-b", 1, NodeRole::Controlplane, "v1.11.3"),
        node("cp-c", 2, NodeRole::Controlplane, "v1.11.3"),
        node("w-1", 3, NodeRole::Worker, "v1.11.3"),
    ];
    cluster("workload", nodes, "cp-a")
}

fn tree() -> ClusterTree {
    fixture_tree(CapiVersion::V1beta2)
}

fn verdict(guards: &[crate::guards::Guard], id: GuardId) -> Verdict {
    guards.iter().find(|g| g.id == id).expect("guard").verdict
}

fn admin() -> Roles {
    Roles(vec![Role::Admin])
}

#[test]
fn a_healthy_cluster_mid_rollout_has_no_findings() {
    assert_eq!(diagnose(&tree(), &status()), vec![]);
}

#[test]
fn an_unhealthy_member_under_a_rollout_is_a_stuck_rollout_fixed_by_deleting_its_machine() {
    let mut status = status();
    set_member_healthy(&mut status, "cp-c", false);
    let tree = tree();
    let findings = diagnose(&tree, &status);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(f.id, "stuck-rollout/workload-cp-c");
    assert_eq!(f.kind, FindingKind::StuckRollout);
    assert!(
        f.explanation
            .contains("waits \"for etcd to become healthy before scaling down\"")
    );
    let Some(Fix::DeleteMachine { machine, node, .. }) = &f.fix else {
        panic!("{f:?}")
    };
    assert_eq!((machine.as_str(), node.as_str()), ("workload-cp-c", "cp-c"));
    let plan = FixPlan::new(f, &tree, &status).unwrap();
    assert_eq!(
        plan.mutating_action().describe(),
        "delete stuck Machine clusters/workload-cp-c (Cluster API replaces it)"
    );
    assert_eq!(plan.mutating_action().confirm_name(), "workload");
    let guards = fix_guards(&plan, &tree, &status, &admin(), &Ok(None));
    assert_eq!(verdict(&guards, GuardId::StuckMachine), Verdict::Pass);
    assert_eq!(verdict(&guards, GuardId::EtcdQuorum), Verdict::Pass);

    // Once healthy again, the plan's guard says there is nothing to delete.
    set_member_healthy(&mut status, "cp-c", true);
    let guards = fix_guards(&plan, &tree, &status, &admin(), &Ok(None));
    assert_eq!(verdict(&guards, GuardId::StuckMachine), Verdict::Fail);
}

#[test]
fn deleting_a_stuck_machine_that_would_lose_quorum_is_refused() {
    let mut status = status();
    set_member_healthy(&mut status, "cp-c", false);
    set_member_healthy(&mut status, "cp-b", false);
    let tree = tree();
    let f = diagnose(&tree, &status)
        .into_iter()
        .find(|f| f.subject == "workload-cp-c")
        .expect("cp-c stuck");
    let plan = FixPlan::new(&f, &tree, &status).unwrap();
    let guards = fix_guards(&plan, &tree, &status, &admin(), &Ok(None));
    assert_eq!(verdict(&guards, GuardId::EtcdQuorum), Verdict::Fail);
}

#[test]
fn a_member_without_a_machine_is_orphaned_and_removed_through_the_etcd_plan() {
    let mut status = status();
    status.etcd.members.push(EtcdMemberReport {
        id: "00000000000000dd".into(),
        hostname: "cp-d".into(),
        errors: vec!["connection refused".into()],
        ..Default::default()
    });
    recount(&mut status);
    let tree = tree();
    let findings = diagnose(&tree, &status);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(f.id, "orphaned-member/cp-d");
    assert!(
        f.summary.contains("4 members for 3 control-plane Machines"),
        "{}",
        f.summary
    );
    let plan = FixPlan::new(f, &tree, &status).unwrap();
    let FixPlan::Etcd(etcd) = &plan else {
        panic!("{plan:?}")
    };
    assert_eq!(etcd.mutating_action(), plan.mutating_action());
    assert_eq!(etcd.target, "cp-d (00000000000000dd)");
    let guards = fix_guards(&plan, &tree, &status, &admin(), &Ok(None));
    assert_eq!(verdict(&guards, GuardId::MemberWithoutNode), Verdict::Pass);
    assert_eq!(verdict(&guards, GuardId::EtcdQuorum), Verdict::Pass);
    let reader = fix_guards(&plan, &tree, &status, &Roles(vec![Role::Reader]), &Ok(None));
    assert_eq!(verdict(&reader, GuardId::EtcdRole), Verdict::Fail);

    assert!(!cleared(f, &tree, &status));
    status.etcd.members.retain(|m| m.hostname != "cp-d");
    assert!(cleared(f, &tree, &status));
}

/// The fixture with one control-plane Machine (workload-cp-a, node cp-a) whose etcd service
/// stopped: no etcd call answers, and Talos reports the service not running.
fn stopped_single() -> (ClusterTree, ClusterStatus) {
    let mut tree = tree();
    tree.machines
        .retain(|m| m.role != MachineRole::Controlplane || m.name == "workload-cp-a");
    let mut status = status();
    status
        .nodes
        .retain(|n| n.role != NodeRole::Controlplane || n.name == "cp-a");
    status.etcd.members.clear();
    recount(&mut status);
    let cp = status.nodes.iter_mut().find(|n| n.name == "cp-a").unwrap();
    cp.ready = false;
    cp.unmet_conditions = vec![crate::talos::UnmetCondition {
        name: "services".into(),
        reason: "etcd not running".into(),
    }];
    (tree, status)
}

#[test]
fn a_stopped_single_member_is_fixed_by_rebooting_its_node() {
    let (tree, status) = stopped_single();
    let findings = diagnose(&tree, &status);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(f.id, "etcd-stopped/workload-cp-a");
    assert!(f.summary.contains("etcd not running"), "{}", f.summary);
    assert!(
        f.explanation.contains("starts etcd at every boot")
            && f.explanation.contains("--recover-from"),
        "{}",
        f.explanation
    );
    assert_eq!(
        f.fix,
        Some(Fix::RebootNode {
            machine: "workload-cp-a".into(),
            node: "cp-a".into()
        })
    );
    assert_eq!(serde_json::to_value(&f.fix).unwrap()["fix"], "reboot-node");
    let plan = FixPlan::new(f, &tree, &status).unwrap();
    assert_eq!(plan.mutating_action().describe(), "reboot node cp-a");
    assert_eq!(plan.mutating_action().confirm_name(), "cp-a");
    let guards = fix_guards(&plan, &tree, &status, &admin(), &Ok(None));
    let ids: Vec<GuardId> = guards.iter().map(|g| g.id).collect();
    assert_eq!(
        ids,
        [
            GuardId::NodeActionRole,
            GuardId::NoOtherRollout,
            GuardId::EtcdStopped
        ]
    );
    assert!(
        guards.iter().all(|g| g.verdict == Verdict::Pass),
        "{guards:#?}"
    );
}

#[test]
fn rebooting_the_stopped_member_is_refused_for_a_reader_a_rollout_or_a_busy_node() {
    let (tree, mut status) = stopped_single();
    let f = diagnose(&tree, &status).remove(0);
    let plan = FixPlan::new(&f, &tree, &status).unwrap();
    let reader = fix_guards(&plan, &tree, &status, &Roles(vec![Role::Reader]), &Ok(None));
    assert_eq!(verdict(&reader, GuardId::NodeActionRole), Verdict::Fail);
    let other = crate::rollout::RolloutInProgress {
        holder: "alice@jump-1".into(),
        node_index: 1,
        node_count: 1,
    };
    let held = fix_guards(&plan, &tree, &status, &admin(), &Ok(Some(other)));
    assert_eq!(verdict(&held, GuardId::NoOtherRollout), Verdict::Fail);

    let cp = status.nodes.iter_mut().find(|n| n.name == "cp-a").unwrap();
    cp.stage = Some(crate::talos::MachineStage::Rebooting);
    let busy = fix_guards(&plan, &tree, &status, &admin(), &Ok(None));
    let g = busy.iter().find(|g| g.id == GuardId::EtcdStopped).unwrap();
    assert_eq!(g.verdict, Verdict::Fail);
    assert!(g.reason.contains("stage"), "{}", g.reason);

    // etcd not read yet, Talos not saying it stopped: no answer is no evidence.
    let mut unread = status.clone();
    let cp = unread.nodes.iter_mut().find(|n| n.name == "cp-a").unwrap();
    cp.unmet_conditions.clear();
    assert_eq!(diagnose(&tree, &unread), vec![]);

    // Not answering: no finding (the node, not etcd, is what is down), and nothing to reboot.
    let cp = status.nodes.iter_mut().find(|n| n.name == "cp-a").unwrap();
    cp.error = Some("connection refused".into());
    assert_eq!(diagnose(&tree, &status), vec![]);
    let gone = fix_guards(&plan, &tree, &status, &admin(), &Ok(None));
    assert_eq!(verdict(&gone, GuardId::EtcdStopped), Verdict::Fail);
}

#[test]
fn an_unreadable_lease_warns_and_asks_for_an_acknowledgement_before_the_reboot() {
    let (tree, status) = stopped_single();
    let f = diagnose(&tree, &status).remove(0);
    let plan = FixPlan::new(&f, &tree, &status).unwrap();
    let timeout = "the server was unable to return a response in the time allotted".to_string();
    let guards = fix_guards(&plan, &tree, &status, &admin(), &Err(timeout));
    let g = guards
        .iter()
        .find(|g| g.id == GuardId::NoOtherRollout)
        .unwrap();
    assert_eq!(g.verdict, Verdict::Warn, "not a silent pass: {g:?}");
    assert!(
        g.reason.contains("cannot be read") && g.reason.contains("the fault this reboot repairs"),
        "{}",
        g.reason
    );
    let ack = crate::upgrade::guards::LEASE_UNREAD_ACK;
    assert_eq!(g.needs_ack.as_deref(), Some(ack));
    assert!(crate::guards::blocking(&guards, &[]));
    assert!(!crate::guards::blocking(&guards, &[ack.to_string()]));
    assert!(GuardId::NoOtherRollout.explain().contains("cannot be read"));
}

#[test]
fn a_single_member_reporting_errors_is_stopped_and_clears_once_it_leads_again() {
    let mut tree = tree();
    tree.machines
        .retain(|m| m.role != MachineRole::Controlplane || m.name == "workload-cp-a");
    let mut status = status();
    status.etcd.members.retain(|m| m.hostname == "cp-a");
    set_member_healthy(&mut status, "cp-a", false);
    let findings = diagnose(&tree, &status);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert!(f.summary.contains("reports errors"), "{}", f.summary);
    assert!(matches!(f.fix, Some(Fix::RebootNode { .. })));
    assert!(!cleared(f, &tree, &status));
    set_member_healthy(&mut status, "cp-a", true);
    assert_eq!(diagnose(&tree, &status), vec![]);
    assert!(status.etcd.leader().is_some());
}

#[test]
fn etcd_that_could_not_be_read_gives_no_findings() {
    let mut status = status();
    status.etcd.members.clear();
    set_member_healthy(&mut status, "cp-c", false);
    assert_eq!(diagnose(&tree(), &status), vec![]);
}

#[test]
fn each_kind_is_named_in_json_as_in_its_finding_ids() {
    for kind in [
        FindingKind::StuckRollout,
        FindingKind::OrphanedMember,
        FindingKind::StoppedSingleMember,
        FindingKind::EtcdLeft,
        FindingKind::NoNodeRef,
        FindingKind::DrainBlocked,
    ] {
        assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
    }
}

#[test]
fn fqdn_node_names_match_their_members_cut_at_the_first_dot() {
    let mut tree = tree();
    for m in &mut tree.machines {
        if !m.node.is_empty() {
            m.node = format!("{}.ec2.internal", m.node);
        }
    }
    assert_eq!(diagnose(&tree, &status()), vec![]);
    assert!(is_member_of("cp-a", "CP-A.ec2.internal"));
    assert!(!is_member_of("cp-a", "cp-ab.ec2.internal"));
    assert!(!is_member_of("cp-a", ""));
}

#[test]
fn a_machine_whose_member_left_is_found_and_fixed_by_deleting_it() {
    let mut status = status();
    status.etcd.members.retain(|m| m.hostname != "cp-b");
    recount(&mut status);
    let tree = tree();
    let findings = diagnose(&tree, &status);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(f.id, "etcd-left/workload-cp-b");
    assert_eq!(f.kind, FindingKind::EtcdLeft);
    assert!(
        f.summary.contains("2 members for 3 control-plane Machines"),
        "{}",
        f.summary
    );
    let Some(Fix::DeleteMachine {
        machine, member_id, ..
    }) = &f.fix
    else {
        panic!("{f:?}")
    };
    assert_eq!((machine.as_str(), member_id), ("workload-cp-b", &None));
    let plan = FixPlan::new(f, &tree, &status).unwrap();
    let guards = fix_guards(&plan, &tree, &status, &admin(), &Ok(None));
    assert_eq!(verdict(&guards, GuardId::StuckMachine), Verdict::Pass);
    // Once the member is back (a replacement joined), there is nothing to delete.
    let healthy = self::status();
    let guards = fix_guards(&plan, &tree, &healthy, &admin(), &Ok(None));
    assert_eq!(verdict(&guards, GuardId::StuckMachine), Verdict::Fail);
}

#[test]
fn a_surge_machine_without_a_node_is_found_and_fixed_by_deleting_it() {
    let mut tree = tree();
    let mut surge = tree
        .machines
        .iter()
        .find(|m| m.role == MachineRole::Controlplane)
        .cloned()
        .expect("a control plane");
    surge.name = "workload-cp-surge".into();
    surge.node = String::new();
    surge.ready = false;
    tree.machines.push(surge);
    let findings = diagnose(&tree, &status());
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(f.id, "no-node-ref/workload-cp-surge");
    assert!(f.explanation.contains("no addresses were found for node"));
    let plan = FixPlan::new(f, &tree, &status()).unwrap();
    let guards = fix_guards(&plan, &tree, &status(), &admin(), &Ok(None));
    assert_eq!(verdict(&guards, GuardId::StuckMachine), Verdict::Pass);
    assert!(guards.iter().all(|g| g.id != GuardId::EtcdQuorum));
    // Without the surge (as many Machines as replicas) a nodeless Machine is a scale-up.
    let cp = tree.control_plane.as_mut().unwrap();
    cp.counts.replicas = 4;
    assert_eq!(diagnose(&tree, &status()), vec![]);
}

#[test]
fn a_deleting_machine_whose_drain_is_refused_is_found_with_no_fix() {
    let mut tree = tree();
    let worker = tree
        .machines
        .iter_mut()
        .find(|m| m.role == MachineRole::Worker && !m.node.is_empty())
        .expect("a worker with a node");
    worker.deleting = true;
    worker.conditions.retain(|c| c.kind != "Deleting");
    worker.conditions.push(crate::kube::CapiCondition {
        kind: "Deleting".into(),
        status: "True".into(),
        reason: "DrainingNode".into(),
        message: "Drain not completed yet (started at 2026-12-06T04:00:00Z):\n* Pod default/web-1: Cannot evict pod as it would violate the pod's disruption budget.".into(),
        ..Default::default()
    });
    let name = worker.name.clone();
    let findings = diagnose(&tree, &status());
    assert_eq!(findings.len(), 1, "{findings:?}");
    let found = &findings[0];
    assert_eq!(found.kind, FindingKind::DrainBlocked);
    assert_eq!(found.id, format!("drain-blocked/{name}"));
    assert_eq!(found.fix, None);
    assert!(
        found.explanation.contains("* Pod default/web-1")
            && found.explanation.contains("exclude-node-draining"),
        "{}",
        found.explanation
    );
    // Still deleting but past the drain: nothing stuck.
    let worker = tree.machines.iter_mut().find(|m| m.name == name).unwrap();
    worker.conditions.last_mut().unwrap().reason = "WaitingForPreTerminateHook".into();
    assert_eq!(diagnose(&tree, &status()), vec![]);
}
