use super::*;
use crate::fleet::ComponentReport;
use crate::kube::removed_apis::RemovedApiCount;
use crate::talos::{Role, Roles};
use crate::upgrade::fixtures::{cp2_down, healthy, healthy_on, single_cp, version};
use crate::upgrade::kubernetes::plan::{Component, KubeStepState, KubernetesUpgradePlan};

/// Every control plane runs its three components on `v`; kube-proxy too.
pub(crate) fn with_components(mut status: ClusterStatus, v: &str) -> ClusterStatus {
    let cps: Vec<String> = status
        .nodes
        .iter()
        .filter(|n| n.role == NodeRole::Controlplane)
        .map(|n| n.name.clone())
        .collect();
    if let Some(k) = status.kubernetes.as_mut() {
        k.components = cps
            .iter()
            .flat_map(|node| {
                Component::STATIC_PODS.iter().map(move |c| ComponentReport {
                    node: node.clone(),
                    name: c.as_str().to_string(),
                    version: v.to_string(),
                    ready: true,
                })
            })
            .collect();
        k.kube_proxy_version = Some(v.to_string());
    }
    status
}

fn admin() -> Roles {
    Roles(vec![Role::parse("os:admin")])
}

fn plan_for(status: &ClusterStatus, to: &str) -> KubernetesUpgradePlan {
    KubernetesUpgradePlan::new(status, &version(to), false).expect("plan")
}

fn guards(
    status: &ClusterStatus,
    to: &str,
    counts: Result<Vec<RemovedApiCount>, String>,
    acks: &[String],
) -> Vec<Guard> {
    let plan = plan_for(status, to);
    let roles = admin();
    kubernetes_plan_guards(
        &plan,
        status,
        KubeGuardInput {
            roles: &roles,
            other_rollout: None,
            removed_apis: &counts,
            removed_flags: &Ok(Vec::new()),
            acks,
        },
    )
}

fn verdict(guards: &[Guard], id: GuardId) -> Verdict {
    guards
        .iter()
        .find(|g| g.id == id)
        .map(|g| g.verdict)
        .expect("guard present")
}

#[test]
fn plan_orders_like_upstream() {
    let status = with_components(healthy(), "v1.34.1");
    let plan = plan_for(&status, "v1.35.0");
    let order: Vec<(String, &str)> = plan
        .steps
        .iter()
        .map(|s| (s.node.clone(), s.component.as_str()))
        .collect();
    let expect = [
        ("cp-1", "kube-apiserver"),
        ("cp-2", "kube-apiserver"),
        ("cp-3", "kube-apiserver"),
        ("cp-1", "kube-controller-manager"),
        ("cp-2", "kube-controller-manager"),
        ("cp-3", "kube-controller-manager"),
        ("cp-1", "kube-scheduler"),
        ("cp-2", "kube-scheduler"),
        ("cp-3", "kube-scheduler"),
        ("cp-1", "kube-proxy"),
        ("cp-2", "kube-proxy"),
        ("cp-3", "kube-proxy"),
        ("cp-1", "kubelet"),
        ("cp-2", "kubelet"),
        ("cp-3", "kubelet"),
        ("w-1", "kubelet"),
        ("w-2", "kubelet"),
    ];
    let expect: Vec<(String, &str)> = expect.iter().map(|(n, c)| (n.to_string(), *c)).collect();
    assert_eq!(order, expect);
    assert_eq!(plan.from, version("v1.34.1"));
    assert_eq!(plan.batches().len(), 17);
    assert!(plan.batches().iter().all(|b| b.len() == 1));
    let pulls = plan.images_to_pull();
    // 3 static pods + kubelet on each control plane, kubelet on each worker.
    assert_eq!(pulls.len(), 3 * 4 + 2);
    assert!(pulls.iter().all(|p| p.image.ends_with(":v1.35.0")));
}

#[test]
fn components_already_on_target_are_skipped() {
    let mut status = with_components(healthy(), "v1.34.1");
    if let Some(k) = status.kubernetes.as_mut() {
        for c in k.components.iter_mut().filter(|c| c.node == "cp-1") {
            c.version = "v1.34.2".into();
        }
    }
    let plan = plan_for(&status, "v1.34.2");
    let skipped: Vec<&str> = plan
        .steps
        .iter()
        .filter(|s| s.state == KubeStepState::AlreadyOnTarget)
        .map(|s| s.component.as_str())
        .collect();
    assert_eq!(
        skipped,
        [
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler"
        ]
    );
    assert_eq!(plan.from, version("v1.34.1"));
}

#[test]
fn healthy_cluster_on_talos_112_passes_every_guard_to_135() {
    let status = with_components(healthy_on("v1.12.0"), "v1.34.1");
    let g = guards(&status, "v1.35.0", Ok(vec![]), &[]);
    let ids: Vec<GuardId> = g.iter().map(|g| g.id).collect();
    assert_eq!(ids, GuardId::KUBERNETES);
    let failing: Vec<&Guard> = g.iter().filter(|g| g.verdict != Verdict::Pass).collect();
    assert!(failing.is_empty(), "{failing:?}");
    assert!(!crate::upgrade::blocking(&g, &[]));
}

#[test]
fn talos_111_does_not_run_135() {
    let status = with_components(healthy(), "v1.34.1");
    let g = guards(&status, "v1.35.0", Ok(vec![]), &[]);
    assert_eq!(verdict(&g, GuardId::TalosSupportsTarget), Verdict::Fail);
    assert_eq!(verdict(&g, GuardId::KubernetesPath), Verdict::Pass);
    let reason = &g
        .iter()
        .find(|g| g.id == GuardId::TalosSupportsTarget)
        .unwrap()
        .reason;
    assert!(reason.contains("v1.11.3"), "{reason}");
    assert!(
        reason.ends_with("upgrade Talos to v1.12 first (taloscope upgrade --to v1.12.x)"),
        "the way forward is named: {reason}"
    );
}

#[test]
fn skipping_a_minor_is_refused() {
    let status = with_components(healthy_on("v1.13.0"), "v1.34.1");
    let g = guards(&status, "v1.36.0", Ok(vec![]), &[]);
    let path = g.iter().find(|g| g.id == GuardId::KubernetesPath).unwrap();
    assert_eq!(path.verdict, Verdict::Fail);
    assert!(path.reason.contains("skips a minor"), "{}", path.reason);
}

#[test]
fn removed_api_objects_fail_until_acknowledged() {
    let status = with_components(healthy(), "v1.31.4");
    let counts = vec![
        RemovedApiCount {
            api: "flowschemas.v1beta3.flowcontrol.apiserver.k8s.io".into(),
            removed_in: "1.32".into(),
            replacement: "flowcontrol.apiserver.k8s.io/v1".into(),
            count: 2,
        },
        RemovedApiCount {
            api: "podschedulingcontexts.v1alpha3.resource.k8s.io".into(),
            removed_in: "1.32".into(),
            replacement: "none".into(),
            count: 0,
        },
    ];
    let g = guards(&status, "v1.32.0", Ok(counts.clone()), &[]);
    let removed = g.iter().find(|g| g.id == GuardId::RemovedApis).unwrap();
    assert_eq!(removed.verdict, Verdict::Fail);
    assert!(
        removed
            .reason
            .contains("flowschemas.v1beta3.flowcontrol.apiserver.k8s.io: 2")
    );
    assert!(!removed.reason.contains("podschedulingcontexts"));
    assert!(crate::upgrade::blocking(&g, &[]));
    let acks = vec![REMOVED_APIS_ACK.to_string()];
    let g = guards(&status, "v1.32.0", Ok(counts), &acks);
    assert_eq!(verdict(&g, GuardId::RemovedApis), Verdict::Warn);
    assert!(!crate::upgrade::blocking(&g, &acks));
    let g = guards(&status, "v1.32.0", Err("unreachable".into()), &acks);
    assert_eq!(verdict(&g, GuardId::RemovedApis), Verdict::Fail);
}

#[test]
fn a_down_node_and_its_member_fail_the_guards() {
    let status = with_components(cp2_down(), "v1.34.1");
    let g = guards(&status, "v1.34.2", Ok(vec![]), &[]);
    assert_eq!(verdict(&g, GuardId::NodesReady), Verdict::Fail);
    assert_eq!(verdict(&g, GuardId::EtcdHealthy), Verdict::Fail);
    assert_eq!(verdict(&g, GuardId::TalosSupportsTarget), Verdict::Fail);
}

#[test]
fn a_component_not_ready_halts_the_next_step() {
    let mut status = with_components(healthy(), "v1.34.1");
    assert!(
        kubernetes_step_guards(&status)
            .iter()
            .all(|g| g.verdict == Verdict::Pass)
    );
    if let Some(k) = status.kubernetes.as_mut() {
        k.components[4].ready = false;
    }
    let g = kubernetes_step_guards(&status);
    let ready = g.iter().find(|g| g.id == GuardId::ComponentsReady).unwrap();
    assert_eq!(ready.verdict, Verdict::Fail);
    assert!(
        ready.reason.contains("kube-controller-manager on cp-2"),
        "{}",
        ready.reason
    );
}

#[test]
fn reader_and_other_rollout_fail_and_single_cp_warns() {
    let status = with_components(single_cp(), "v1.34.1");
    let plan = plan_for(&status, "v1.34.2");
    let reader = Roles(vec![Role::parse("os:reader")]);
    let other = RolloutInProgress {
        holder: "ops@jump-2".into(),
        node_index: 2,
        node_count: 5,
    };
    let counts = Ok(vec![]);
    let g = kubernetes_plan_guards(
        &plan,
        &status,
        KubeGuardInput {
            roles: &reader,
            other_rollout: Some(&other),
            removed_apis: &counts,
            removed_flags: &Ok(Vec::new()),
            acks: &[],
        },
    );
    assert_eq!(verdict(&g, GuardId::ClientRole), Verdict::Fail);
    assert_eq!(verdict(&g, GuardId::NoOtherRollout), Verdict::Fail);
    assert_eq!(verdict(&g, GuardId::SingleControlPlane), Verdict::Warn);
}

#[test]
fn no_kubernetes_no_plan() {
    let mut status = healthy();
    status.kubernetes = None;
    assert!(matches!(
        KubernetesUpgradePlan::new(&status, &version("v1.35.0"), false),
        Err(super::super::KubePlanError::NoKubernetes { .. })
    ));
}

#[test]
fn offered_targets_stay_within_the_next_minor_and_talos_support() {
    let on_111 = with_components(healthy(), "v1.34.1");
    let offered = super::super::offered_kubernetes_targets(&on_111);
    assert!(!offered.is_empty());
    assert!(
        offered
            .iter()
            .all(|v| (v.major, v.minor) == (1, 34) && v.patch > 1),
        "{offered:?}"
    );
    let on_112 = with_components(healthy_on("v1.12.0"), "v1.34.1");
    let offered = super::super::offered_kubernetes_targets(&on_112);
    assert!(offered.contains(&version("v1.35.0")), "{offered:?}");
    assert!(offered.iter().all(|v| v.minor <= 35));
}

#[test]
fn without_a_kube_proxy_daemonset_its_steps_are_skipped_with_a_note() {
    let mut status = with_components(healthy(), "v1.34.1");
    if let Some(k) = status.kubernetes.as_mut() {
        k.kube_proxy_version = None;
    }
    let plan = plan_for(&status, "v1.34.2");
    let proxy: Vec<&KubeStepState> = plan
        .steps
        .iter()
        .filter(|s| s.component == Component::KubeProxy)
        .map(|s| &s.state)
        .collect();
    assert!(!proxy.is_empty());
    assert!(proxy.iter().all(|s| **s == KubeStepState::NoKubeProxy));
    assert!(
        plan.steps_to_run()
            .all(|(_, s)| s.component != Component::KubeProxy)
    );
    let progress = crate::upgrade::kubernetes::runner::initial_steps(&plan);
    assert!(
        progress
            .iter()
            .any(|p| p.detail.contains("kube-proxy disabled"))
    );
}

#[test]
fn removed_flags_fail_by_name_and_pass_within_a_minor() {
    use crate::upgrade::kubernetes::removed_flags::{RemovedItem, RemovedKind};
    let status = with_components(healthy(), "v1.34.1");
    let found = vec![RemovedItem {
        node: "cp-1".into(),
        component: "kubelet".into(),
        kind: RemovedKind::Flag,
        value: "pod-infra-container-image".into(),
    }];
    let guard_with = |to: &str, flags: Result<Vec<RemovedItem>, String>| {
        let plan = plan_for(&status, to);
        let roles = admin();
        let guards = kubernetes_plan_guards(
            &plan,
            &status,
            KubeGuardInput {
                roles: &roles,
                other_rollout: None,
                removed_apis: &Ok(Vec::new()),
                removed_flags: &flags,
                acks: &[],
            },
        );
        guards
            .into_iter()
            .find(|g| g.id == GuardId::RemovedFlags)
            .expect("removed-flags guard")
    };
    let g = guard_with("v1.35.0", Ok(found.clone()));
    assert_eq!(g.verdict, Verdict::Fail);
    assert_eq!(g.needs_ack, None, "upstream refuses outright");
    assert!(
        g.reason
            .contains("cp-1 kubelet flag --pod-infra-container-image"),
        "{}",
        g.reason
    );
    assert_eq!(guard_with("v1.35.0", Ok(Vec::new())).verdict, Verdict::Pass);
    let unread = guard_with("v1.35.0", Err("cp-1 did not answer".into()));
    assert_eq!(unread.verdict, Verdict::Fail);
    assert!(unread.reason.contains("cp-1 did not answer"));
    // 1.34.1 -> 1.34.2 crosses no removal: nothing needs reading.
    assert_eq!(
        guard_with("v1.34.2", Err("unread".into())).verdict,
        Verdict::Pass
    );
}
