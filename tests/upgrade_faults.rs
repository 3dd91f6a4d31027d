//! The rolling upgrade when things go wrong, against the sim: an etcd member turning unhealthy
//! between two nodes halts before the next; a node that never returns halts on its timeout
//! with no other node touched; a run killed mid-rollout resumes from its journal and completes.
mod upgrade_common;

use std::time::Duration;

use taloscope::operation::upgrade::{TalosUpgradeRun, resume_talos_upgrade_with};
use taloscope::rollout::{RolloutEvent, RolloutJournal, RolloutOutcome, StepPhase};
use upgrade_common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_going_unhealthy_between_two_nodes_halts_the_rollout() {
    let fx = start(builtin("healthy")).await;
    let plan = fx.plan("healthy", "v1.12.0").await;
    let first = plan.steps[0].node.clone();
    let second = plan.steps[1].node.clone();
    let leader = plan.leader.clone().expect("a leader");
    let (handle, mut rx) = spawn_talos(fx.talos_run("healthy", "v1.12.0", plan));
    // Once the sim accepted the first node's upgrade, the leader's member turns unhealthy.
    let state = fx.sim.state();
    tokio::time::timeout(LIMIT, async {
        while state.upgrade_record().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("first upgrade accepted");
    state
        .cluster("healthy")
        .expect("cluster")
        .set_etcd_unhealthy(&leader, true)
        .expect("leader node");
    let (outcome, _) = finish(handle, &mut rx, LIMIT).await;
    let RolloutOutcome::Halted(reason) = outcome else {
        panic!("not halted: {outcome:?}");
    };
    assert!(
        reason.contains(&format!("before {second}")) && reason.contains("etcd"),
        "{reason}"
    );
    assert_eq!(state.upgrade_calls("healthy", &first), 1);
    for (node, _) in versions(&fx, "healthy") {
        if node != first {
            assert_eq!(
                state.upgrade_calls("healthy", &node),
                0,
                "{node} was touched"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_never_returns_halts_with_no_other_node_touched() {
    let fx = start(builtin("healthy")).await;
    let plan = fx.plan("healthy", "v1.12.0").await;
    let first = plan.steps[0].node.clone();
    let state = fx.sim.state();
    state
        .cluster("healthy")
        .expect("cluster")
        .set_never_returns(&first, true)
        .expect("node");
    let mut options = fx.options();
    options.node_timeout = Duration::from_secs(3);
    let (outcome, events) = run_talos(TalosUpgradeRun {
        options,
        ..fx.talos_run("healthy", "v1.12.0", plan)
    })
    .await;
    let RolloutOutcome::Halted(reason) = outcome else {
        panic!("not halted: {outcome:?}");
    };
    assert!(
        reason.starts_with(&format!("{first}: timed out after 3s")),
        "{reason}"
    );
    let failed = events.iter().any(|e| {
        matches!(e, RolloutEvent::Step { index: 0, progress, .. }
        if progress.phase == StepPhase::Failed)
    });
    assert!(failed, "{first} marked failed");
    let upgraded: Vec<String> = state
        .mutating_calls()
        .into_iter()
        .filter(|c| c.is_upgrade())
        .map(|c| c.node)
        .collect();
    assert_eq!(upgraded, vec![first]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_mid_rollout_resumes_from_its_journal_and_completes() {
    let fx = start(builtin("healthy")).await;
    let plan = fx.plan("healthy", "v1.12.0").await;
    let second = plan.steps[1].node.clone();
    let (handle, mut rx) = spawn_talos(fx.talos_run("healthy", "v1.12.0", plan.clone()));
    wait_for_step(&mut rx, 1, StepPhase::Installing).await;
    // The console dies: the runner task is gone mid-node.
    handle.task.abort();
    let _ = handle.task.await;
    let journal = RolloutJournal::load_unfinished(&fx.state_dir(), "healthy")
        .expect("journal readable")
        .expect("an unfinished journal");
    assert_eq!(journal.steps[0].phase, StepPhase::Done);
    let held = fx
        .kube("healthy")
        .await
        .read_rollout_lease()
        .await
        .expect("read lease")
        .expect("the killed run's lease is still there");
    assert_eq!(held.holder, journal.holder);
    assert_eq!(held.node_index, 2, "renewed with the node in progress");
    assert_eq!(held.node_count, 5);
    assert_eq!(journal.summary().first_unfinished(), Some(1));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = resume_talos_upgrade_with(
        journal,
        fx.approve("healthy", "v1.12.0"),
        fx.dispatcher(),
        fx.cluster("healthy"),
        fx.options(),
        tx,
    );
    let (outcome, events) = finish(handle, &mut rx, LIMIT).await;
    assert_eq!(outcome, RolloutOutcome::Completed, "{events:#?}");
    for (node, version) in versions(&fx, "healthy") {
        assert_eq!(version, "v1.12.0", "{node}");
        assert_eq!(
            fx.sim.state().upgrade_calls("healthy", &node),
            1,
            "{node} upgraded once, even {second} that was in progress"
        );
    }
    assert_control_planes_one_at_a_time(&fx, "healthy");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_held_by_another_console_is_refused_with_its_holder() {
    let fx = start(builtin("healthy")).await;
    let kube = fx.kube("healthy").await;
    let _theirs = fx.lease_held_by_bob("healthy").await;
    let plan = fx.plan("healthy", "v1.12.0").await;
    let (outcome, _) = run_talos(fx.talos_run("healthy", "v1.12.0", plan)).await;
    let RolloutOutcome::Halted(reason) = outcome else {
        panic!("a second rollout ran: {outcome:?}");
    };
    assert!(
        reason.contains("in progress") && reason.contains("bob@jump2"),
        "{reason}"
    );
    assert!(fx.sim.state().mutating_calls().is_empty());
    let lease = kube
        .read_rollout_lease()
        .await
        .expect("read")
        .expect("still bob's");
    assert_eq!(lease.holder, "bob@jump2");
}

/// Reboot mode `force` exists in RebootRequest from Talos 1.12 and never in the legacy
/// UpgradeRequest (api/machine/machine.proto): on the legacy path (Talos 1.10 .. 1.12) the
/// step refuses it by name instead of dropping it, and no node is asked to upgrade.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reboot_mode_force_is_refused_on_the_legacy_upgrade_path() {
    use taloscope::talos::RebootMode;
    use taloscope::upgrade::{UpgradeOptions, UpgradePlan};
    use taloscope::versions::Version;
    for (context, target) in [
        ("talos-1.10", "v1.11.3"),
        ("talos-1.11", "v1.12.0"),
        ("talos-1.12", "v1.13.0"),
    ] {
        let fx = start(builtin(context)).await;
        let status = fx.status(context).await;
        let options = UpgradeOptions {
            reboot_mode: RebootMode::Force,
            ..UpgradeOptions::default()
        };
        let plan = UpgradePlan::new(&status, Version::parse(target).expect("target"), options)
            .expect("plan");
        let (outcome, _) = run_talos(fx.talos_run(context, target, plan)).await;
        match outcome {
            RolloutOutcome::Halted(reason) => assert!(
                reason.contains("reboot mode force is not available"),
                "{context}: {reason}"
            ),
            other => panic!("{context}: {other:?}"),
        }
        let upgrades: Vec<_> = fx
            .sim
            .state()
            .mutating_calls()
            .into_iter()
            .filter(|c| c.method.ends_with(".Upgrade"))
            .collect();
        assert!(upgrades.is_empty(), "{context}: {upgrades:?}");
    }
}
