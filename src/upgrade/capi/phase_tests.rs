use super::*;
use crate::capi::tree_tests::fixture_tree;
use crate::kube::CapiVersion;
use crate::upgrade::capi::plan::tests::k8s_plan;

#[test]
fn progress_lines_say_created_ready_and_deleted() {
    let before: MachineStates = [("old".to_string(), true), ("new".to_string(), false)].into();
    let after: MachineStates = [("new".to_string(), true), ("newer".to_string(), false)].into();
    assert_eq!(
        machine_changes(&before, &after),
        [
            "node new Ready",
            "machine newer created",
            "old machine old deleted"
        ]
    );
    assert!(machine_changes(&after, &after).is_empty());
}

#[test]
fn a_phase_is_done_when_every_machine_runs_the_target_and_is_ready() {
    let mut tree = fixture_tree(CapiVersion::V1beta2);
    let plan = k8s_plan(&tree, "v1.34.2");
    let cp = &plan.phases[0];
    let waiting = phase_waiting(&plan, cp, &tree).unwrap_err();
    assert!(waiting.contains("does not ask for v1.34.2"), "{waiting}");
    tree.control_plane.as_mut().unwrap().version = "v1.34.2".into();
    let waiting = phase_waiting(&plan, cp, &tree).unwrap_err();
    assert!(
        waiting.starts_with("to replace: workload-cp-a"),
        "{waiting}"
    );
    for m in tree
        .machines
        .iter_mut()
        .filter(|m| m.name.starts_with("workload-cp"))
    {
        m.version = "v1.34.2".into();
    }
    tree.machines[0].ready = false;
    let waiting = phase_waiting(&plan, cp, &tree).unwrap_err();
    assert_eq!(waiting, "not ready yet: workload-cp-a");
    tree.machines[0].ready = true;
    assert_eq!(phase_waiting(&plan, cp, &tree), Ok(()));
}

#[test]
fn an_on_delete_phase_deletes_the_next_outdated_machine_only_when_all_are_settled() {
    let mut tree = fixture_tree(CapiVersion::V1beta2);
    for m in &mut tree.machines {
        m.ready = true;
    }
    let cp = tree.control_plane.as_mut().unwrap();
    cp.rollout_strategy = "OnDelete".into();
    cp.counts.replicas = 3;
    let plan = k8s_plan(&tree, "v1.34.2");
    let phase = &plan.phases[0];
    assert!(phase.on_delete);
    assert!(
        phase.replace_text().contains("OnDelete"),
        "{}",
        phase.replace_text()
    );
    // Not patched yet: nothing is deleted.
    assert_eq!(next_on_delete(&plan, phase, &tree), None);
    tree.control_plane.as_mut().unwrap().version = "v1.34.2".into();
    assert_eq!(next_on_delete(&plan, phase, &tree), Some("workload-cp-a"));
    // A replacement still joining: wait.
    tree.machines[0].ready = false;
    assert_eq!(next_on_delete(&plan, phase, &tree), None);
    tree.machines[0].ready = true;
    tree.machines[0].version = "v1.34.2".into();
    assert_eq!(next_on_delete(&plan, phase, &tree), Some("workload-cp-b"));
    tree.machines[1].deleting = true;
    assert_eq!(next_on_delete(&plan, phase, &tree), None);
    // A rolling phase never deletes.
    let rolling = &plan.phases[1];
    assert!(!rolling.on_delete);
    assert_eq!(next_on_delete(&plan, rolling, &tree), None);
}
