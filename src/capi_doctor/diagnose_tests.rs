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
    let guards = fix_guards(&plan, &tree, &status, &admin());
    assert_eq!(verdict(&guards, GuardId::StuckMachine), Verdict::Pass);
    assert_eq!(verdict(&guards, GuardId::EtcdQuorum), Verdict::Pass);

    // Once healthy again, the plan's guard says there is nothing to delete.
    set_member_healthy(&mut status, "cp-c", true);
    let guards = fix_guards(&plan, &tree, &status, &admin());
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
    let guards = fix_guards(&plan, &tree, &status, &admin());
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
    let guards = fix_guards(&plan, &tree, &status, &admin());
    assert_eq!(verdict(&guards, GuardId::MemberWithoutNode), Verdict::Pass);
    assert_eq!(verdict(&guards, GuardId::EtcdQuorum), Verdict::Pass);
    let reader = fix_guards(&plan, &tree, &status, &Roles(vec![Role::Reader]));
    assert_eq!(verdict(&reader, GuardId::EtcdRole), Verdict::Fail);

    assert!(!cleared(f, &tree, &status));
    status.etcd.members.retain(|m| m.hostname != "cp-d");
    assert!(cleared(f, &tree, &status));
}

#[test]
fn a_stopped_single_member_is_explained_with_no_automatic_fix() {
    let mut tree = tree();
    tree.machines
        .retain(|m| m.role != MachineRole::Controlplane || m.name == "workload-cp-a");
    let mut status = status();
    status.etcd.members.retain(|m| m.hostname == "cp-a");
    set_member_healthy(&mut status, "cp-a", false);
    let findings = diagnose(&tree, &status);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(f.id, "etcd-stopped/workload-cp-a");
    assert_eq!(f.fix, None);
    assert!(
        f.explanation.contains("--recover-from"),
        "{}",
        f.explanation
    );
    let refused = FixPlan::new(f, &tree, &status).unwrap_err();
    assert!(refused.contains("no fix is safe to automate"), "{refused}");
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
    ] {
        assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
    }
}
