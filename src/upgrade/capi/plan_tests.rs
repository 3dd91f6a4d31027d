use super::*;
use crate::capi::tree_tests::fixture_tree;
use crate::kube::CapiVersion;

/// The Kubernetes plan of `tree` to `to` ("v1.34.2").
pub(crate) fn k8s_plan(tree: &ClusterTree, to: &str) -> CapiUpgradePlan {
    let text = to.trim_start_matches('v');
    capi_plan(
        "work",
        tree,
        CapiProduct::Kubernetes,
        (to, text),
        &PlanFacts::default(),
    )
    .expect("a plan")
}

fn talos_facts() -> PlanFacts {
    let mut facts = PlanFacts::default();
    facts.infra.insert(
        "TalosControlPlane/workload-cp".into(),
        InfraFacts {
            group: "infrastructure.cluster.x-k8s.io".into(),
            kind: "ONEMachineTemplate".into(),
            name: "workload-cp".into(),
            vm_template: "talos-workload-controlplane".into(),
        },
    );
    facts.infra.insert(
        "MachineDeployment/workload-workers".into(),
        InfraFacts {
            group: "infrastructure.cluster.x-k8s.io".into(),
            kind: "ONEMachineTemplate".into(),
            name: "workload-worker-v1.11.3".into(),
            vm_template: "talos-workload-worker-v1.11.3".into(),
        },
    );
    facts
}

#[test]
fn kubernetes_patches_the_control_plane_then_each_deployment() {
    let tree = fixture_tree(CapiVersion::V1beta2);
    let plan = k8s_plan(&tree, "v1.34.2");
    assert_eq!(plan.owner().to_string(), "mgmt/clusters/workload");
    assert_eq!(plan.from, "v1.34.1");
    let labels: Vec<String> = plan.phases.iter().map(CapiPhase::label).collect();
    assert_eq!(
        labels,
        [
            "TalosControlPlane/workload-cp",
            "MachineDeployment/workload-workers"
        ]
    );
    assert_eq!(plan.phases[0].patch["spec"]["version"], "v1.34.2");
    assert_eq!(
        plan.phases[1].patch["spec"]["template"]["spec"]["version"],
        "v1.34.2"
    );
    assert_eq!(
        plan.phases[0].replace,
        ["workload-cp-a", "workload-cp-b", "workload-cp-c"]
    );
    assert_eq!(plan.phases[1].replace.len(), 2);
    assert!(plan.phases.iter().all(|p| p.template.is_none()));
}

#[test]
fn talos_copies_each_machine_template_for_the_target() {
    let tree = fixture_tree(CapiVersion::V1beta1);
    let plan = capi_plan(
        "work",
        &tree,
        CapiProduct::TalosOs,
        ("v1.12.0", "v1.12.0"),
        &talos_facts(),
    )
    .expect("a plan");
    let cp = plan.phases[0].template.as_ref().unwrap();
    assert_eq!(
        (cp.to.as_str(), cp.vm_template_to.as_str()),
        ("workload-cp-v1.12.0", "talos-workload-controlplane-v1.12.0")
    );
    // Only the reference moves: no controlPlaneConfig, no talosVersion.
    assert_eq!(
        plan.phases[0].patch,
        serde_json::json!({"spec": {"infrastructureTemplate": {"name": "workload-cp-v1.12.0"}}})
    );
    assert_eq!(
        plan.phases[0].created,
        [CreatedObject {
            kind: "ONEMachineTemplate".into(),
            name: "workload-cp-v1.12.0".into(),
            copy_of: "workload-cp".into(),
        }]
    );
    assert_eq!(
        plan.phases[0].repointed,
        [Repoint {
            object: "TalosControlPlane/workload-cp".into(),
            field: "spec.infrastructureTemplate.name".into(),
            from: "workload-cp".into(),
            to: "workload-cp-v1.12.0".into(),
        }]
    );
    // A template of an earlier upgrade loses its version before it gets the new one.
    let workers = &plan.phases[1];
    let copy = workers.template.as_ref().unwrap();
    assert_eq!(copy.to, "workload-worker-v1.12.0");
    assert_eq!(copy.vm_template_to, "talos-workload-worker-v1.12.0");
    assert_eq!(
        workers.patch["spec"]["template"]["spec"]["infrastructureRef"]["name"],
        "workload-worker-v1.12.0"
    );
    assert_eq!(
        workers.patch,
        serde_json::json!({"spec": {"template": {"spec": {"infrastructureRef": {"name": "workload-worker-v1.12.0"}}}}}),
        "the bootstrap configRef and talosVersion stay"
    );
    assert_eq!(
        workers.repointed[0].field,
        "spec.template.spec.infrastructureRef.name"
    );
    assert_eq!(
        versioned_name("workload-cp-v1", "v1.12.0"),
        "workload-cp-v1-v1.12.0"
    );
}

#[test]
fn a_template_without_its_vm_template_name_is_no_plan() {
    let tree = fixture_tree(CapiVersion::V1beta2);
    let err = capi_plan(
        "work",
        &tree,
        CapiProduct::TalosOs,
        ("v1.12.0", "v1.12.0"),
        &PlanFacts::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, CapiPlanError::UnknownVmTemplate { ref object, .. } if object == "TalosControlPlane/workload-cp"),
        "{err}"
    );
}

#[test]
fn machines_on_the_target_are_left_alone() {
    let mut tree = fixture_tree(CapiVersion::V1beta2);
    for m in &mut tree.machines {
        m.version = "v1.34.1".into();
    }
    let err = capi_plan(
        "work",
        &tree,
        CapiProduct::Kubernetes,
        ("v1.34.1", "1.34.1"),
        &PlanFacts::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, CapiPlanError::NothingToUpgrade { .. }),
        "{err}"
    );
    tree.machines[2].version = "v1.33.5".into();
    let plan = k8s_plan(&tree, "v1.34.1");
    assert_eq!(plan.phases[0].replace, ["workload-cp-c"]);
    assert!(plan.phases[1].replace.is_empty());
}

/// Sets each named Machine's creation time.
fn created(tree: &mut ClusterTree, times: &[(&str, u64)]) {
    for (name, unix) in times {
        let m = tree.machines.iter_mut().find(|m| m.name == *name).unwrap();
        m.created_unix = Some(*unix);
    }
}

#[test]
fn control_planes_are_replaced_oldest_first_not_by_name() {
    let mut tree = fixture_tree(CapiVersion::V1beta2);
    created(
        &mut tree,
        &[
            ("workload-cp-a", 300),
            ("workload-cp-b", 200),
            ("workload-cp-c", 100),
        ],
    );
    let plan = k8s_plan(&tree, "v1.34.2");
    assert_eq!(
        plan.phases[0].replace,
        ["workload-cp-c", "workload-cp-b", "workload-cp-a"]
    );
    // The same second: by name, as collections.Machines.Oldest breaks the tie.
    created(&mut tree, &[("workload-cp-b", 100)]);
    let plan = k8s_plan(&tree, "v1.34.2");
    assert_eq!(
        plan.phases[0].replace,
        ["workload-cp-b", "workload-cp-c", "workload-cp-a"]
    );
}

#[test]
fn workers_follow_their_machine_set_deletion_order() {
    let mut tree = fixture_tree(CapiVersion::V1beta2);
    let workers = tree.machine_deployments[0].machine_sets[0].machines.clone();
    assert_eq!(workers.len(), 2, "{workers:?}");
    let (first, second) = (workers[0].as_str(), workers[1].as_str());
    created(&mut tree, &[(first, 200), (second, 100)]);
    let order = |tree: &ClusterTree| k8s_plan(tree, "v1.34.2").phases[1].replace.clone();
    // Random, the default: healthy Machines rank alike, by name.
    assert_eq!(order(&tree), [first, second]);
    tree.machine_deployments[0].machine_sets[0].deletion_order = "Oldest".into();
    assert_eq!(order(&tree), [second, first]);
    tree.machine_deployments[0].machine_sets[0].deletion_order = "Newest".into();
    assert_eq!(order(&tree), [first, second]);
}

#[test]
fn a_paused_cluster_is_refused_naming_what_pauses_it() {
    let mut tree = fixture_tree(CapiVersion::V1beta2);
    tree.paused = Some("Cluster clusters/workload has spec.paused: true".into());
    let err = capi_plan(
        "work",
        &tree,
        CapiProduct::Kubernetes,
        ("v1.34.2", "1.34.2"),
        &PlanFacts::default(),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("Cluster clusters/workload has spec.paused: true"),
        "{text}"
    );
    assert!(text.contains("unpause it first"), "{text}");
}
