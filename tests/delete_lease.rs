//! Issue 27's "guards that fail closed", end to end on the sim: a delete whose rollout Lease
//! cannot be read (`--kubeconfig` naming a file without a context of the cluster, so not its
//! API) does not pass "no other rollout": it asks the acknowledgement every mutating operation
//! asks then ("no one else is changing this cluster"), and runs once it is typed.
mod create_common;
mod provision_common;
mod talos_common;

use create_common::{DELETE_ARGS, create_args};
use talos_common::{scenario, start};

const LEASE_UNREAD_ACK: &str = "no one else is changing this cluster";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_through_another_kubeconfig_asks_the_lease_acknowledgement() {
    let sim = start(scenario("healthy")).await;
    let r = create_common::run(&sim, &create_args("sim-opennebula", 1, 0, "v1.11.3", &[])).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let other = sim.dir.path().join("other-kubeconfig");
    std::fs::write(
        &other,
        "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n",
    )
    .unwrap();
    let other = other.to_str().unwrap();

    let plan = [
        "delete",
        "--context",
        "lab",
        "--kubeconfig",
        other,
        "--plan",
        "-o",
        "json",
    ]
    .map(String::from);
    let r = create_common::run(&sim, &plan).await;
    let json: serde_json::Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", r.stdout, r.stderr));
    let guard = json["guards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == "no_other_rollout")
        .expect("the rollout guard")
        .clone();
    assert_eq!(guard["verdict"], "warn", "{guard}");
    assert!(
        guard["reason"].as_str().unwrap().contains("cannot be read"),
        "{guard}"
    );

    let mut delete: Vec<String> = DELETE_ARGS.map(String::from).to_vec();
    delete.extend(["--kubeconfig", other].map(String::from));
    let r = create_common::run(&sim, &delete).await;
    assert_eq!(
        r.code, 1,
        "refused without the Lease's ack: {}{}",
        r.stdout, r.stderr
    );
    let still = provision_common::one_client(&sim).vms().await.expect("VMs");
    assert!(
        still.iter().any(|vm| vm.name == "lab-controlplane-1"),
        "nothing deleted: {still:?}"
    );

    delete.extend(["--ack", LEASE_UNREAD_ACK].map(String::from));
    let r = create_common::run(&sim, &delete).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}
