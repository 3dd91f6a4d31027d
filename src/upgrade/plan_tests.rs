use super::*;
use crate::upgrade::fixtures::{healthy, healthy_on, node, single_cp, version};

fn order(plan: &UpgradePlan) -> Vec<&str> {
    plan.steps.iter().map(|s| s.node.as_str()).collect()
}

fn plan_for(status: &ClusterStatus, target: &str) -> UpgradePlan {
    UpgradePlan::new(status, version(target), UpgradeOptions::default()).expect("plan builds")
}

#[test]
fn control_planes_first_with_the_leader_last_then_workers() {
    let plan = plan_for(&healthy(), "v1.12.0");
    assert_eq!(order(&plan), ["cp-2", "cp-3", "cp-1", "w-1", "w-2"]);
    let forfeits: Vec<&str> = plan
        .steps
        .iter()
        .filter(|s| s.forfeit_leadership)
        .map(|s| s.node.as_str())
        .collect();
    assert_eq!(forfeits, ["cp-1"]);
    assert_eq!(plan.image, "ghcr.io/siderolabs/installer:v1.12.0");
    assert_eq!(
        plan.batches(),
        vec![vec![0], vec![1], vec![2], vec![3], vec![4]]
    );
    assert!(
        plan.steps
            .iter()
            .all(|s| s.api == Some(UpgradeApi::MachineUpgrade))
    );
}

/// The plan's order does not depend on the order the nodes answered in: names in natural
/// order within each role (the leader last among control planes), in the console and the CLI.
#[test]
fn the_order_is_the_same_whatever_order_the_nodes_answered_in() {
    let mut status = healthy();
    status
        .nodes
        .push(node("w-10", 6, NodeRole::Worker, "v1.11.3"));
    let expected = ["cp-2", "cp-3", "cp-1", "w-1", "w-2", "w-10"];
    assert_eq!(order(&plan_for(&status, "v1.12.0")), expected);
    status.nodes.reverse();
    assert_eq!(order(&plan_for(&status, "v1.12.0")), expected);
    status.nodes.rotate_left(2);
    assert_eq!(order(&plan_for(&status, "v1.12.0")), expected);
}

#[test]
fn workers_go_in_batches_of_max_parallel_control_planes_alone() {
    let mut status = healthy();
    status
        .nodes
        .push(node("w-3", 5, NodeRole::Worker, "v1.11.3"));
    let options = UpgradeOptions {
        max_parallel: 2,
        ..UpgradeOptions::default()
    };
    let plan = UpgradePlan::new(&status, version("v1.12.0"), options).expect("plan builds");
    assert_eq!(
        plan.batches(),
        vec![vec![0], vec![1], vec![2], vec![3, 4], vec![5]]
    );
}

#[test]
fn the_api_follows_each_nodes_talos_version() {
    assert_eq!(
        UpgradeApi::for_version(&version("v1.12.11")),
        UpgradeApi::MachineUpgrade
    );
    assert_eq!(
        UpgradeApi::for_version(&version("v1.13.0-alpha.2")),
        UpgradeApi::MachineUpgrade
    );
    assert_eq!(
        UpgradeApi::for_version(&version("v1.13.0-beta.1")),
        UpgradeApi::Lifecycle
    );
    let plan = plan_for(&healthy_on("v1.13.0"), "v1.13.9");
    assert!(
        plan.steps
            .iter()
            .all(|s| s.api == Some(UpgradeApi::Lifecycle))
    );
    assert!(
        UpgradeApi::Lifecycle
            .calls()
            .contains("LifecycleService.Upgrade")
    );
}

#[test]
fn nodes_on_the_target_are_skipped_and_an_all_done_cluster_is_refused() {
    let mut status = healthy();
    status.nodes[3].talos_version = Some("v1.12.0".into());
    let plan = plan_for(&status, "v1.12.0");
    let w1 = &plan.steps[plan.position("w-1").expect("w-1 planned")];
    assert_eq!(w1.state, StepState::AlreadyOnTarget);
    assert_eq!(w1.batch, None);
    assert_eq!(plan.nodes_to_upgrade().count(), 4);

    let done = healthy_on("v1.12.0");
    let err = UpgradePlan::new(&done, version("v1.12.0"), UpgradeOptions::default())
        .expect_err("nothing to do");
    assert_eq!(
        err.to_string(),
        "every node of healthy already runs Talos v1.12.0; nothing to upgrade"
    );
}

#[test]
fn bad_inputs_are_refused_with_the_cluster_named() {
    let mut empty = healthy();
    empty.nodes.clear();
    let err = UpgradePlan::new(&empty, version("v1.12.0"), UpgradeOptions::default())
        .expect_err("no nodes");
    assert!(matches!(err, PlanError::NoNodes { .. }), "{err}");

    let unlisted = UpgradePlan::new(&healthy(), version("v1.12.99"), UpgradeOptions::default())
        .expect("an unlisted target is planned; its guard refuses it");
    assert_eq!(unlisted.target_source, None);

    let zero = UpgradeOptions {
        max_parallel: 0,
        ..UpgradeOptions::default()
    };
    let err = UpgradePlan::new(&healthy(), version("v1.12.0"), zero).expect_err("zero");
    assert_eq!(
        err.to_string(),
        "max-parallel for healthy must be at least 1"
    );
}

#[test]
fn a_custom_image_is_kept_and_an_empty_one_refused() {
    let mut plan = plan_for(&healthy(), "v1.12.0");
    plan.set_image(" factory.talos.dev/installer/abc123:v1.12.0 ")
        .expect("factory image");
    assert_eq!(plan.image, "factory.talos.dev/installer/abc123:v1.12.0");
    assert!(matches!(
        plan.set_image("  "),
        Err(PlanError::InvalidImage { .. })
    ));
    let err = plan.set_image("not an image!").unwrap_err().to_string();
    assert!(
        err.starts_with(
            "installer image \"not an image!\" for healthy is not an image reference: "
        ),
        "{err}"
    );
    assert_eq!(plan.image, "factory.talos.dev/installer/abc123:v1.12.0");
}

#[test]
fn moving_nodes_keeps_control_planes_first_and_the_forfeit_on_the_leader() {
    let mut plan = plan_for(&healthy(), "v1.12.0");
    plan.move_node("cp-1", Direction::Up).expect("moves up");
    assert_eq!(order(&plan), ["cp-2", "cp-1", "cp-3", "w-1", "w-2"]);
    let cp1 = &plan.steps[1];
    assert!(
        cp1.forfeit_leadership && cp1.batch == Some(2),
        "batches count from 1"
    );
    assert!(!plan.steps[2].forfeit_leadership);

    let err = plan
        .move_node("w-1", Direction::Up)
        .expect_err("cannot pass cp-3");
    assert_eq!(
        err.to_string(),
        "cannot move w-1 past cp-3: control planes go before workers"
    );
    let err = plan.move_node("cp-2", Direction::Up).expect_err("first");
    assert_eq!(err.to_string(), "cp-2 is already first in the plan");
    plan.move_node("w-1", Direction::Down).expect("w-1 down");
    assert_eq!(order(&plan), ["cp-2", "cp-1", "cp-3", "w-2", "w-1"]);
    let err = plan.move_node("w-1", Direction::Down).expect_err("last");
    assert!(matches!(err, PlanError::AtEdge { edge: "last", .. }));
    // by address too
    plan.move_node("127.10.0.5", Direction::Up)
        .expect("w-1 by address");
    assert_eq!(order(&plan), ["cp-2", "cp-1", "cp-3", "w-1", "w-2"]);
    let err = plan.move_node("nope", Direction::Up).expect_err("unknown");
    assert_eq!(
        err.to_string(),
        "nope is not a node in the plan for healthy"
    );
}

#[test]
fn leaving_out_and_including_renumbers_and_moves_the_forfeit() {
    let mut plan = plan_for(&healthy(), "v1.12.0");
    plan.leave_out("cp-1").expect("leave out leader");
    let cp1 = &plan.steps[2];
    assert_eq!(cp1.state, StepState::LeftOut);
    assert!(
        !cp1.forfeit_leadership,
        "a left-out leader does not forfeit"
    );
    assert_eq!(plan.batches(), vec![vec![0], vec![1], vec![3], vec![4]]);
    plan.include("cp-1").expect("include");
    assert!(plan.steps[2].forfeit_leadership);
    assert_eq!(plan.steps[2].state, StepState::Upgrade);
    assert_eq!(plan.nodes_to_upgrade().count(), 5);
}

#[test]
fn a_lone_control_plane_has_nobody_to_forfeit_to() {
    let plan = plan_for(&single_cp(), "v1.12.0");
    assert_eq!(order(&plan), ["cp-1", "w-1"]);
    assert_eq!(plan.leader, None);
    assert!(plan.steps.iter().all(|s| !s.forfeit_leadership));
}

#[test]
fn unknown_roles_go_between_control_planes_and_workers_one_at_a_time() {
    let mut status = healthy();
    let mut stray = node("stray", 9, NodeRole::Unknown, "v1.11.3");
    stray.talos_version = None;
    status.nodes.insert(0, stray);
    let options = UpgradeOptions {
        max_parallel: 5,
        ..UpgradeOptions::default()
    };
    let plan = UpgradePlan::new(&status, version("v1.12.0"), options).expect("plan builds");
    assert_eq!(
        order(&plan),
        ["cp-2", "cp-3", "cp-1", "stray", "w-1", "w-2"]
    );
    assert_eq!(plan.steps[3].api, None);
    assert_eq!(plan.batches().len(), 5);
}

#[test]
fn option_notes_say_what_preserve_and_stage_mean_here() {
    let options = UpgradeOptions {
        preserve: true,
        stage: true,
        ..UpgradeOptions::default()
    };
    let plan =
        UpgradePlan::new(&healthy_on("v1.13.0"), version("v1.13.9"), options).expect("plan builds");
    let notes = plan.option_notes();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].starts_with("preserve does nothing here"));
    assert!(notes[1].contains("cp-2, cp-3, cp-1, w-1, w-2 (Talos 1.13+) upgrade unstaged"));

    let old = UpgradePlan::new(
        &healthy_on("v1.7.7"),
        version("v1.8.0"),
        UpgradeOptions::default(),
    )
    .expect("plan builds");
    assert!(old.option_notes()[0].contains("wipe EPHEMERAL"));
    assert!(UpgradeOptions::preserve_applies(&version("v1.7.7")));
    assert!(!UpgradeOptions::preserve_applies(&version("v1.8.0")));
}

#[test]
fn forfeit_follows_the_live_leader() {
    let mut status = healthy();
    assert!(must_forfeit_leadership(&status, "cp-1"));
    assert!(must_forfeit_leadership(&status, "127.10.0.2"));
    assert!(!must_forfeit_leadership(&status, "cp-2"));
    assert!(!must_forfeit_leadership(&status, "w-1"));
    for m in &mut status.etcd.members {
        m.leader = m.hostname == "cp-2";
    }
    assert!(must_forfeit_leadership(&status, "cp-2"));
    assert!(!must_forfeit_leadership(&single_cp(), "cp-1"));
}

#[test]
fn the_plan_serializes_for_headless_output() {
    let plan = plan_for(&healthy(), "v1.12.0");
    let json = serde_json::to_value(&plan).expect("serializes");
    assert_eq!(json["target"], "v1.12.0");
    assert_eq!(json["options"]["reboot_mode"], "default");
    assert_eq!(json["steps"][2]["node"], "cp-1");
    assert_eq!(json["steps"][2]["forfeit_leadership"], true);
    assert_eq!(json["steps"][0]["api"], "machine_upgrade");
    assert_eq!(json["steps"][0]["state"], "upgrade");
    // Batches count from 1, as the plan table does.
    assert_eq!(json["steps"][0]["batch"], 1);
    assert_eq!(json["steps"][4]["batch"], 5);
}

#[test]
fn a_journal_plan_counted_from_0_still_groups_its_batches() {
    let mut plan = plan_for(&healthy(), "v1.12.0");
    for step in &mut plan.steps {
        step.batch = step.batch.map(|b| b - 1);
    }
    assert_eq!(
        plan.batches(),
        vec![vec![0], vec![1], vec![2], vec![3], vec![4]]
    );
}

#[test]
fn offered_targets_go_one_minor_at_a_time() {
    let targets = offered_targets(&healthy(), false);
    assert!(targets.contains(&version("v1.11.6")));
    assert!(targets.contains(&version("v1.12.11")));
    assert!(
        targets
            .iter()
            .all(|t| t.minor < 13 && *t > version("v1.11.3"))
    );
    let back = offered_targets(&healthy(), true);
    assert!(back.iter().any(|t| t.minor == 10), "{back:?}");
}
