//! The tree over the fixtures of tests/fixtures/capi, written from the v1beta1 and v1beta2
//! Go types: both versions give the same tree.
use super::tree::{ClusterTree, MachineRole, cluster_trees, needs_attention};
use crate::kube::{CapiObjects, CapiVersion};

macro_rules! fixture_lists {
    ($v:literal) => {
        [
            (
                "clusters",
                include_str!(concat!("../../tests/fixtures/capi/", $v, "/clusters.json")),
            ),
            (
                "machines",
                include_str!(concat!("../../tests/fixtures/capi/", $v, "/machines.json")),
            ),
            (
                "machinedeployments",
                include_str!(concat!(
                    "../../tests/fixtures/capi/",
                    $v,
                    "/machinedeployments.json"
                )),
            ),
            (
                "machinesets",
                include_str!(concat!(
                    "../../tests/fixtures/capi/",
                    $v,
                    "/machinesets.json"
                )),
            ),
            (
                "taloscontrolplanes",
                include_str!(concat!(
                    "../../tests/fixtures/capi/",
                    $v,
                    "/taloscontrolplanes.json"
                )),
            ),
            (
                "simmachines",
                include_str!(concat!(
                    "../../tests/fixtures/capi/",
                    $v,
                    "/simmachines.json"
                )),
            ),
        ]
    };
}

/// The fixture management cluster's objects, read as `version` serves them.
pub(crate) fn fixture_objects(version: CapiVersion) -> CapiObjects {
    match version {
        CapiVersion::V1beta1 => CapiObjects::from_list_texts(version, &fixture_lists!("v1beta1")),
        CapiVersion::V1beta2 => CapiObjects::from_list_texts(version, &fixture_lists!("v1beta2")),
    }
    .expect("fixtures decode")
}

/// The fixture cluster's tree, read as `version` serves it.
pub(crate) fn fixture_tree(version: CapiVersion) -> ClusterTree {
    let objects = fixture_objects(version);
    let mut trees = cluster_trees("mgmt", &objects);
    assert_eq!(trees.len(), 1);
    trees.remove(0)
}

#[test]
fn both_versions_give_the_same_tree() {
    let mut v1 = fixture_tree(CapiVersion::V1beta1);
    let v2 = fixture_tree(CapiVersion::V1beta2);
    assert_eq!(v1.api_version, "v1beta1");
    v1.api_version = v2.api_version.clone();
    assert_eq!(v1, v2);
}

#[test]
fn the_control_plane_counts_derive_up_to_date_from_machine_versions_and_templates() {
    let tree = fixture_tree(CapiVersion::V1beta2);
    let cp = tree.control_plane.as_ref().expect("a TalosControlPlane");
    assert_eq!(
        (cp.counts.replicas, cp.counts.current, cp.counts.ready),
        (3, 3, 3)
    );
    // cp-c runs v1.33.5 on a machine cloned from the old template.
    assert_eq!(cp.counts.up_to_date, 2);
    assert_eq!(cp.counts.available, 3);
    assert_eq!(
        cp.machines,
        ["workload-cp-a", "workload-cp-b", "workload-cp-c"]
    );
    let c = tree.machine("workload-cp-c").unwrap();
    assert!(!c.up_to_date && c.ready);
    assert_eq!(c.infrastructure_template, "workload-cp-v1");
    assert_eq!(tree.endpoint, "127.0.0.1:6443");
    assert_eq!(tree.endpoint_text(), "127.0.0.1:6443");
    let unset = ClusterTree {
        endpoint: String::new(),
        ..tree.clone()
    };
    assert_eq!(unset.endpoint_text(), "(none yet)");
    assert_eq!(tree.version, "v1.34.1");
}

#[test]
fn deployments_hold_their_sets_and_the_sets_their_machines() {
    let tree = fixture_tree(CapiVersion::V1beta1);
    let [md] = tree.machine_deployments.as_slice() else {
        panic!("one MachineDeployment: {:?}", tree.machine_deployments);
    };
    assert_eq!(
        (
            md.counts.replicas,
            md.counts.ready,
            md.counts.up_to_date,
            md.counts.available
        ),
        (2, 1, 2, 1)
    );
    let [set] = md.machine_sets.as_slice() else {
        panic!("one MachineSet");
    };
    assert_eq!(
        set.machines,
        ["workload-workers-7f9c-q8zt", "workload-workers-7f9c-x2k4"]
    );
    let pending = tree.machine("workload-workers-7f9c-q8zt").unwrap();
    assert_eq!(
        (pending.role, pending.phase.as_str(), pending.node.as_str()),
        (MachineRole::Worker, "Provisioning", "")
    );
    assert!(!pending.ready && pending.up_to_date);
    assert_eq!(tree.unowned_machines().count(), 0);
}

#[test]
fn attention_follows_each_conditions_polarity() {
    let tree = fixture_tree(CapiVersion::V1beta2);
    let shown: Vec<&str> = tree
        .conditions
        .iter()
        .filter(|c| needs_attention(c))
        .map(|c| c.kind.as_str())
        .collect();
    // RollingOut True is news; Deleting/Paused False are not.
    assert_eq!(shown, ["RollingOut"]);
    let cp = tree.control_plane.unwrap();
    let tcp: Vec<(&str, &str)> = cp
        .conditions
        .iter()
        .filter(|c| needs_attention(c))
        .map(|c| (c.kind.as_str(), c.severity.as_str()))
        .collect();
    assert_eq!(tcp, [("MachinesSpecUpToDate", "Warning")]);
}
