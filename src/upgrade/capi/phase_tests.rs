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
