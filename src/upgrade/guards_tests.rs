use super::*;
use crate::fleet::EtcdAlarmReport;
use crate::talos::Role;
use crate::upgrade::fixtures::{
    cp2_down, healthy, healthy_on, set_member_healthy, single_cp, version,
};
use crate::upgrade::plan::{UpgradeOptions, UpgradePlan};

fn admin() -> Roles {
    Roles(vec![Role::Admin])
}

fn plan_for(status: &ClusterStatus, target: &str) -> UpgradePlan {
    UpgradePlan::new(status, version(target), UpgradeOptions::default()).expect("plan builds")
}

fn guard(guards: &[Guard], id: GuardId) -> &Guard {
    guards
        .iter()
        .find(|g| g.id == id)
        .unwrap_or_else(|| panic!("no {id:?} guard in {guards:#?}"))
}

fn failing(guards: &[Guard]) -> Vec<GuardId> {
    guards
        .iter()
        .filter(|g| g.verdict == Verdict::Fail)
        .map(|g| g.id)
        .collect()
}

#[test]
fn a_healthy_cluster_passes_every_guard() {
    let status = healthy();
    let plan = plan_for(&status, "v1.12.0");
    let guards = plan_guards(&plan, &status, &admin(), None);
    assert_eq!(guards.len(), 13);
    for g in &guards {
        assert_eq!(g.verdict, Verdict::Pass, "{g:?}");
        assert!(!g.reason.contains('\n'));
    }
    assert!(!blocking(&guards, &[]));
    assert_eq!(
        guard(&guards, GuardId::EtcdQuorum).reason,
        "each control plane can go down alone: 3 of 3 members healthy, 2 needed"
    );
    assert_eq!(
        guard(&guards, GuardId::VersionPath).reason,
        "Talos v1.11.3 -> v1.12.0"
    );
}

#[test]
fn cp2_down_fails_reachability_etcd_health_and_quorum_for_cp1_and_cp3() {
    let status = cp2_down();
    let plan = plan_for(&status, "v1.12.0");
    let guards = plan_guards(&plan, &status, &admin(), None);
    assert!(blocking(&guards, &[SINGLE_CONTROL_PLANE_ACK.to_string()]));
    let fails = failing(&guards);
    for id in [
        GuardId::NodesReachable,
        GuardId::NodesRunning,
        GuardId::NodesReady,
        GuardId::EtcdHealthy,
        GuardId::EtcdQuorum,
        GuardId::VersionPath,
    ] {
        assert!(fails.contains(&id), "{id:?} should fail: {guards:#?}");
    }
    assert_eq!(
        guard(&guards, GuardId::NodesReachable).reason,
        "unreachable: cp-2 (connection refused)"
    );
    assert_eq!(
        guard(&guards, GuardId::EtcdHealthy).reason,
        "etcd member cp-2 (0000000000000002) unhealthy: context deadline exceeded"
    );
    assert_eq!(
        guard(&guards, GuardId::EtcdQuorum).reason,
        "losing cp-3 or cp-1 breaks etcd quorum: 2 of 3 members healthy, 2 needed"
    );
    assert_eq!(
        guard(&guards, GuardId::VersionPath).reason,
        "no Talos version reported by cp-2"
    );
}

#[test]
fn quorum_after_losing_each_member() {
    let status = cp2_down();
    assert_eq!(quorum_after_losing(&status, "cp-1").verdict, Verdict::Fail);
    assert_eq!(quorum_after_losing(&status, "cp-3").verdict, Verdict::Fail);
    // cp-2 is already down: taking it down changes nothing
    assert_eq!(quorum_after_losing(&status, "cp-2").verdict, Verdict::Pass);
    let worker = quorum_after_losing(&status, "w-1");
    assert_eq!(worker.verdict, Verdict::Pass);
    assert_eq!(worker.reason, "w-1 is not an etcd member");
    let ok = quorum_after_losing(&healthy(), "127.10.0.2");
    assert_eq!(ok.verdict, Verdict::Pass, "{ok:?}");

    let mut learner = healthy();
    learner.etcd.members[1].is_learner = true;
    let g = quorum_after_losing(&learner, "cp-2");
    assert_eq!(g.reason, "cp-2 is an etcd learner and does not vote");

    let mut blind = healthy();
    blind.etcd.members.clear();
    assert_eq!(quorum_after_losing(&blind, "cp-1").verdict, Verdict::Fail);
}

#[test]
fn a_single_control_plane_warns_and_needs_its_own_acknowledgement() {
    let status = single_cp();
    let plan = plan_for(&status, "v1.12.0");
    let guards = plan_guards(&plan, &status, &admin(), None);
    assert!(failing(&guards).is_empty(), "{guards:#?}");
    let single = guard(&guards, GuardId::SingleControlPlane);
    assert_eq!(single.verdict, Verdict::Warn);
    assert_eq!(
        single.needs_ack.as_deref(),
        Some("the Kubernetes API will be down")
    );
    assert_eq!(guard(&guards, GuardId::EtcdQuorum).verdict, Verdict::Warn);
    assert!(blocking(&guards, &[]));
    assert!(blocking(&guards, &["single".to_string()]));
    assert!(!blocking(
        &guards,
        &[" the Kubernetes API will be down".to_string()]
    ));

    let mut left_out = plan.clone();
    left_out.leave_out("cp-1").expect("leave out");
    let guards = plan_guards(&left_out, &status, &admin(), None);
    assert_eq!(
        guard(&guards, GuardId::SingleControlPlane).verdict,
        Verdict::Pass
    );
    assert!(!blocking(&guards, &[]));
}

#[test]
fn an_etcd_alarm_fails() {
    let mut status = healthy();
    status.etcd.alarms.push(EtcdAlarmReport {
        member_id: "0000000000000003".into(),
        hostname: Some("cp-3".into()),
        alarm: "NOSPACE".into(),
    });
    let plan = plan_for(&status, "v1.12.0");
    let guards = plan_guards(&plan, &status, &admin(), None);
    assert_eq!(failing(&guards), [GuardId::EtcdAlarms]);
    assert_eq!(
        guard(&guards, GuardId::EtcdAlarms).reason,
        "etcd alarm: NOSPACE on cp-3 (0000000000000003)"
    );
}

#[test]
fn only_os_admin_may_upgrade() {
    let status = healthy();
    let plan = plan_for(&status, "v1.12.0");
    let reader = Roles(vec![Role::Reader]);
    let guards = plan_guards(&plan, &status, &reader, None);
    assert_eq!(failing(&guards), [GuardId::ClientRole]);
    assert_eq!(
        guard(&guards, GuardId::ClientRole).reason,
        "client role os:reader may not upgrade; upgrades need os:admin"
    );
    let operator = Roles(vec![Role::Operator]);
    assert!(blocking(&plan_guards(&plan, &status, &operator, None), &[]));
    let none = plan_guards(&plan, &status, &Roles::default(), None);
    assert!(
        guard(&none, GuardId::ClientRole)
            .reason
            .starts_with("client role none")
    );
}

#[test]
fn skipping_a_minor_fails_and_the_next_minor_passes() {
    let status = healthy();
    let skip = plan_for(&status, "v1.13.0");
    let guards = plan_guards(&skip, &status, &admin(), None);
    assert_eq!(failing(&guards), [GuardId::VersionPath]);
    assert_eq!(
        guard(&guards, GuardId::VersionPath).reason,
        "Talos v1.11.3 -> v1.13.0 skips a minor; go through 1.12 first"
    );
    let next = plan_for(&status, "v1.12.11");
    let guards = plan_guards(&next, &status, &admin(), None);
    assert_eq!(guard(&guards, GuardId::VersionPath).verdict, Verdict::Pass);
}

#[test]
fn a_downgrade_needs_asking() {
    let status = healthy_on("v1.12.0");
    let plan = plan_for(&status, "v1.11.3");
    let guards = plan_guards(&plan, &status, &admin(), None);
    assert!(
        guard(&guards, GuardId::VersionPath)
            .reason
            .contains("downgrade")
    );
    let options = UpgradeOptions {
        allow_downgrade: true,
        ..UpgradeOptions::default()
    };
    let asked = UpgradePlan::new(&status, version("v1.11.3"), options).expect("plan builds");
    let guards = plan_guards(&asked, &status, &admin(), None);
    assert_eq!(guard(&guards, GuardId::VersionPath).verdict, Verdict::Pass);
}

#[test]
fn the_target_must_support_the_running_kubernetes() {
    let mut status = healthy();
    for node in &mut status.nodes {
        node.kubelet_version = Some("v1.29.5".into());
    }
    if let Some(k) = status.kubernetes.as_mut() {
        k.server_version = Some("v1.29.5".into());
    }
    let plan = plan_for(&status, "v1.12.0");
    let guards = plan_guards(&plan, &status, &admin(), None);
    assert_eq!(failing(&guards), [GuardId::KubernetesSupported]);
    assert!(
        guard(&guards, GuardId::KubernetesSupported)
            .reason
            .starts_with("Kubernetes v1.29.5 is not supported by Talos v1.12.0")
    );

    status.kubernetes = None;
    for node in &mut status.nodes {
        node.kubelet_version = None;
    }
    let guards = plan_guards(&plan, &status, &admin(), None);
    let unknown = guard(&guards, GuardId::KubernetesSupported);
    assert_eq!(unknown.verdict, Verdict::Warn);
    assert!(
        !blocking(&guards, &[]),
        "an unknown version warns, it does not block"
    );
}

#[test]
fn another_rollout_in_progress_fails() {
    let status = healthy();
    let plan = plan_for(&status, "v1.12.0");
    let other = RolloutInProgress {
        holder: "alice@jump-1".into(),
        node_index: 3,
        node_count: 5,
    };
    let guards = plan_guards(&plan, &status, &admin(), Some(&other));
    assert_eq!(failing(&guards), [GuardId::NoOtherRollout]);
    assert_eq!(
        guard(&guards, GuardId::NoOtherRollout).reason,
        "upgrade in progress by alice@jump-1, node 3 of 5"
    );
}

#[test]
fn an_image_with_another_tag_warns_without_blocking() {
    let status = healthy();
    let mut plan = plan_for(&status, "v1.12.0");
    plan.set_image("factory.talos.dev/installer/abc:v1.11.0")
        .expect("image");
    let guards = plan_guards(&plan, &status, &admin(), None);
    let image = guard(&guards, GuardId::InstallerImage);
    assert_eq!(image.verdict, Verdict::Warn);
    assert!(
        image
            .reason
            .ends_with("is tagged v1.11.0, not the target v1.12.0")
    );
    assert!(!blocking(&guards, &[]));
    plan.set_image(&format!(
        "registry.local:5000/installer@sha256:{}",
        "ab".repeat(32)
    ))
    .expect("image");
    let guards = plan_guards(&plan, &status, &admin(), None);
    assert!(
        guard(&guards, GuardId::InstallerImage)
            .reason
            .contains("has no tag")
    );
}

#[test]
fn nodes_not_running_or_not_ready_fail_and_left_out_nodes_are_not_checked() {
    let mut status = healthy();
    status.nodes[4].stage = Some(MachineStage::Booting);
    status.nodes[4].ready = false;
    status.nodes[3].k8s_ready = Some(false);
    let mut plan = plan_for(&status, "v1.12.0");
    let guards = plan_guards(&plan, &status, &admin(), None);
    assert_eq!(
        guard(&guards, GuardId::NodesRunning).reason,
        "not running: w-2 (booting)"
    );
    assert_eq!(
        guard(&guards, GuardId::NodesReady).reason,
        "not ready: w-1 (Kubernetes node NotReady), w-2 (Talos not ready)"
    );
    plan.leave_out("w-1").expect("leave out");
    plan.leave_out("w-2").expect("leave out");
    let guards = plan_guards(&plan, &status, &admin(), None);
    assert!(failing(&guards).is_empty(), "{guards:#?}");
}

#[test]
fn the_recheck_before_a_step_fails_when_a_member_became_unhealthy() {
    let mut status = healthy();
    let plan = plan_for(&status, "v1.12.0");
    let first = step_guards(&plan, 0, &status);
    assert!(!blocking(&first, &[]), "{first:#?}");

    // cp-2 was upgraded; before cp-3 goes down, cp-2's member is not healthy again yet
    set_member_healthy(&mut status, "cp-2", false);
    let cp3 = plan.position("cp-3").expect("cp-3 planned");
    let guards = step_guards(&plan, cp3, &status);
    assert!(blocking(&guards, &[]));
    assert_eq!(
        guard(&guards, GuardId::EtcdHealthy).reason,
        "etcd member cp-2 (0000000000000002) unhealthy: context deadline exceeded"
    );
    assert_eq!(
        guard(&guards, GuardId::EtcdQuorum).reason,
        "taking cp-3 down breaks etcd quorum: 2 of 3 members healthy, 2 needed"
    );
}

#[test]
fn the_recheck_fails_when_a_member_left_and_on_a_bad_step_index() {
    let mut status = healthy();
    let plan = plan_for(&status, "v1.12.0");
    status.etcd.members.retain(|m| m.hostname != "cp-2");
    let guards = step_guards(&plan, 3, &status);
    assert_eq!(
        guard(&guards, GuardId::EtcdHealthy).reason,
        "etcd lost a member: cp-2 (0000000000000002) left the member list"
    );
    let bad = step_guards(&plan, 9, &status);
    assert_eq!(bad.len(), 1);
    assert_eq!(
        bad[0].reason,
        "the plan for healthy has no step 10 (it has 5)"
    );
}

#[test]
fn every_guard_explains_itself() {
    let status = healthy();
    let plan = plan_for(&status, "v1.12.0");
    let ids: BTreeSet<String> = plan_guards(&plan, &status, &admin(), None)
        .iter()
        .map(|g| {
            assert!(g.id.explain().len() > 120, "{:?} explains too little", g.id);
            assert!(!g.id.title().is_empty());
            format!("{:?}", g.id)
        })
        .collect();
    assert_eq!(ids.len(), 13, "each guard appears once");
    let json =
        serde_json::to_value(&plan_guards(&plan, &status, &admin(), None)[0]).expect("serializes");
    assert_eq!(json["id"], "no_other_rollout");
    assert_eq!(json["verdict"], "pass");
}

#[test]
fn an_unlisted_target_warns_until_acknowledged_naming_the_image() {
    let status = healthy();
    let plan = plan_for(&status, "v1.12.99");
    let guards = plan_guards(&plan, &status, &admin(), None);
    let listed = guards
        .iter()
        .find(|g| g.id == GuardId::ListedRelease)
        .unwrap();
    assert_eq!(listed.verdict, Verdict::Warn);
    assert!(
        listed
            .reason
            .contains("ghcr.io/siderolabs/installer:v1.12.99"),
        "{}",
        listed.reason
    );
    assert!(blocking(&guards, &[]));
    assert!(!blocking(
        &guards,
        &[crate::upgrade::UNLISTED_RELEASE_ACK.to_string()]
    ));
    let known = plan_for(&status, "v1.12.0");
    let guards = plan_guards(&known, &status, &admin(), None);
    let listed = guards
        .iter()
        .find(|g| g.id == GuardId::ListedRelease)
        .unwrap();
    assert_eq!(listed.verdict, Verdict::Pass);
    assert!(listed.reason.contains("built-in"), "{}", listed.reason);
}

#[test]
fn all_lists_every_guard_in_plan_screen_order() {
    let status = healthy();
    let plan = plan_for(&status, "v1.12.0");
    let shown: Vec<GuardId> = plan_guards(&plan, &status, &admin(), None)
        .iter()
        .map(|g| g.id)
        .collect();
    assert_eq!(shown, GuardId::ALL);
}
