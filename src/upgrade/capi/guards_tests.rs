use super::*;
use crate::capi::tree_tests::fixture_tree;
use crate::guards::Verdict;
use crate::kube::CapiVersion;
use crate::upgrade::capi::plan::tests::k8s_plan;
use crate::upgrade::fixtures::{healthy, set_member_healthy};

/// The fixture tree with its Machines settled on v1.34.1 (up to date, ready) and its control
/// plane saying so.
pub(crate) fn settled_tree() -> ClusterTree {
    let mut tree = fixture_tree(CapiVersion::V1beta2);
    for m in &mut tree.machines {
        m.version = "v1.34.1".into();
        m.up_to_date = true;
        m.ready = true;
    }
    // The provider's own word agrees once its Machines are settled.
    for c in &mut tree
        .control_plane
        .as_mut()
        .expect("a control plane")
        .conditions
    {
        if c.kind == "MachinesSpecUpToDate" {
            c.status = "True".into();
        }
    }
    tree
}

#[test]
fn a_rollout_under_way_is_refused_by_name_unless_it_is_this_plans() {
    let unsettled = fixture_tree(CapiVersion::V1beta2);
    let plan = k8s_plan(&unsettled, "v1.34.2");
    let guard = rollout_settled(&plan, &unsettled);
    assert_eq!(guard.verdict, Verdict::Fail);
    assert!(guard.reason.contains("workload-cp-c"), "{}", guard.reason);
    assert!(
        guard.reason.contains("workload-workers-7f9c-q8zt"),
        "{}",
        guard.reason
    );
    let tree = settled_tree();
    assert_eq!(rollout_settled(&plan, &tree).verdict, Verdict::Pass);
    // The control plane already asks for the target: its rollout is this plan's, resumed.
    let mut resumed = unsettled.clone();
    resumed.control_plane.as_mut().unwrap().version = "v1.34.2".into();
    let guard = rollout_settled(&plan, &resumed);
    assert!(!guard.reason.contains("workload-cp-c"), "{}", guard.reason);
}

#[test]
fn a_config_rollout_the_tree_cannot_see_is_read_from_the_control_planes_condition() {
    let mut tree = settled_tree();
    let plan = k8s_plan(&tree, "v1.34.2");
    assert_eq!(rollout_settled(&plan, &tree).verdict, Verdict::Pass);
    let cp = tree.control_plane.as_mut().unwrap();
    cp.conditions.retain(|c| c.kind != "MachinesSpecUpToDate");
    cp.conditions.push(crate::kube::CapiCondition {
        kind: "MachinesSpecUpToDate".into(),
        status: "False".into(),
        reason: "RollingUpdateInProgress".into(),
        message: "Rolling 3 replicas with outdated spec (0 replicas up to date)".into(),
        ..Default::default()
    });
    let guard = rollout_settled(&plan, &tree);
    assert_eq!(guard.verdict, Verdict::Fail);
    assert!(
        guard
            .reason
            .contains("MachinesSpecUpToDate is False: Rolling 3 replicas"),
        "{}",
        guard.reason
    );
}

#[test]
fn the_version_path_is_the_in_place_upgrades() {
    let tree = settled_tree();
    let status = healthy();
    let ok = version_path(&k8s_plan(&tree, "v1.34.2"), &tree, &status);
    assert_eq!(
        (ok.id, ok.verdict),
        (GuardId::KubernetesPath, Verdict::Pass)
    );
    let skipped = version_path(&k8s_plan(&tree, "v1.36.0"), &tree, &status);
    assert_eq!(skipped.verdict, Verdict::Fail, "{}", skipped.reason);
}

#[test]
fn the_vm_template_must_be_in_the_provider() {
    let tree = settled_tree();
    let mut plan = k8s_plan(&tree, "v1.34.2");
    plan.product = CapiProduct::TalosOs;
    plan.phases[0].template = Some(super::super::plan::TemplateCopy {
        group: "g".into(),
        kind: "ONEMachineTemplate".into(),
        from: "cp".into(),
        to: "cp-v1.12.0".into(),
        vm_template_from: "talos-cp".into(),
        vm_template_to: "talos-cp-v1.12.0".into(),
    });
    assert_eq!(vm_templates(&plan, &None).verdict, Verdict::Fail);
    let missing = vm_templates(&plan, &Some(Ok(vec!["talos-cp".into()])));
    assert!(
        missing.reason.contains("no VM template talos-cp-v1.12.0"),
        "{}",
        missing.reason
    );
    let found = vm_templates(&plan, &Some(Ok(vec!["talos-cp-v1.12.0".into()])));
    assert_eq!(found.verdict, Verdict::Pass);
}

#[test]
fn quorum_holds_with_one_member_of_three_down_not_two() {
    let mut status = healthy();
    assert_eq!(quorum_kept(&status).verdict, Verdict::Pass);
    set_member_healthy(&mut status, "cp-2", false);
    assert_eq!(quorum_kept(&status).verdict, Verdict::Pass);
    set_member_healthy(&mut status, "cp-3", false);
    let lost = quorum_kept(&status);
    assert_eq!(lost.verdict, Verdict::Fail);
    assert!(
        lost.reason.contains("1 of 3 members healthy, 2 needed"),
        "{}",
        lost.reason
    );
}

#[test]
fn a_phase_whose_wait_can_never_finish_is_refused_with_its_fix() {
    let tree = settled_tree();
    let plan = k8s_plan(&tree, "v1.34.2");
    let mut status = healthy();
    let guard = phase_wait_can_finish(&plan, 0, &tree, &status);
    assert_eq!(
        (guard.id, guard.verdict),
        (GuardId::WaitCanFinish, Verdict::Pass)
    );
    // An etcd alarm keeps the control-plane provider from removing an outdated Machine.
    status.etcd.alarms.push(crate::fleet::EtcdAlarmReport {
        member_id: "a1b2c3d4e5f60718".into(),
        hostname: Some("cp-1".into()),
        alarm: "NOSPACE".into(),
    });
    let alarmed = phase_wait_can_finish(&plan, 0, &tree, &status);
    assert_eq!(alarmed.verdict, Verdict::Fail);
    assert!(
        alarmed.reason.contains("NOSPACE alarm on cp-1")
            && alarmed.reason.contains("disarm the NOSPACE alarm first"),
        "{}",
        alarmed.reason
    );
    assert!(capi_phase_guards(&plan, 0, &tree, &status).contains(&alarmed));
    // The workers' phase does not wait on etcd.
    let workers = phase_wait_can_finish(&plan, 1, &tree, &status);
    assert_eq!(workers.verdict, Verdict::Pass, "{}", workers.reason);
    // The providers reconcile nothing of a paused cluster: no phase can finish.
    let mut paused = tree.clone();
    paused.paused = Some("Cluster clusters/workload has spec.paused: true".into());
    let guard = phase_wait_can_finish(&plan, 1, &paused, &healthy());
    assert_eq!(guard.verdict, Verdict::Fail);
    assert!(
        guard.reason.contains("spec.paused: true") && guard.reason.ends_with("unpause it first"),
        "{}",
        guard.reason
    );
}

#[test]
fn a_resumed_plan_follows_its_own_rollout_with_etcds_quorum() {
    let tree = settled_tree();
    let plan = k8s_plan(&tree, "v1.34.2");
    let status = healthy();
    let input = |tree| CapiGuardInput {
        tree,
        status: &status,
        other_rollout: None,
        vm_templates: &None,
    };
    let fresh: Vec<GuardId> = capi_plan_guards(&plan, &input(&tree))
        .iter()
        .map(|g| g.id)
        .collect();
    assert!(fresh.contains(&GuardId::NodesReady), "{fresh:?}");
    let mut resumed = tree.clone();
    resumed.control_plane.as_mut().unwrap().version = "v1.34.2".into();
    let ids: Vec<GuardId> = capi_plan_guards(&plan, &input(&resumed))
        .iter()
        .map(|g| g.id)
        .collect();
    assert!(
        ids.contains(&GuardId::EtcdQuorum) && !ids.contains(&GuardId::NodesReady),
        "{ids:?}"
    );
}
