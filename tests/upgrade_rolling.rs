//! The rolling Talos upgrade end to end against the sim: the legacy path (below 1.13) and the
//! ImageService + LifecycleService + Reboot path (1.13 and later), one control plane at a time
//! by the sim's own record; `cp2-down` and a reader context refused before any upgrade call.
mod upgrade_common;

use taloscope::operation::upgrade::TalosUpgradeRun;
use taloscope::rollout::{RolloutEvent, RolloutOutcome, StepPhase};
use taloscope::upgrade::UpgradeApi;
use taloscope_sim::Scenario;
use taloscope_sim::kube_api::KubeActionKind;
use upgrade_common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthy_cluster_upgrades_node_by_node_on_the_legacy_path() {
    let fx = start(builtin("healthy")).await;
    let plan = fx.plan("healthy", "v1.12.0").await;
    assert!(
        plan.steps
            .iter()
            .all(|s| s.api == Some(UpgradeApi::MachineUpgrade))
    );
    let (outcome, events) = run_talos(fx.talos_run("healthy", "v1.12.0", plan.clone())).await;
    assert_eq!(outcome, RolloutOutcome::Completed, "{events:#?}");
    for (node, version) in versions(&fx, "healthy") {
        assert_eq!(version, "v1.12.0", "{node}");
    }
    let state = fx.sim.state();
    for step in &plan.steps {
        assert_eq!(
            state.upgrade_calls("healthy", &step.node),
            1,
            "{}",
            step.node
        );
    }
    assert_control_planes_one_at_a_time(&fx, "healthy");
    // Every node (workers too, max-parallel 1) one after the other, in plan order.
    let windows = state.upgrade_record();
    let order: Vec<&str> = windows.iter().map(|w| w.node.as_str()).collect();
    let planned: Vec<&str> = plan.steps.iter().map(|s| s.node.as_str()).collect();
    assert_eq!(order, planned);
    for pair in windows.windows(2) {
        assert!(
            !pair[0].overlaps(&pair[1]),
            "{} / {}",
            pair[0].node,
            pair[1].node
        );
    }
    // The leader went last among control planes and handed leadership over first.
    let forfeits = state
        .mutating_calls()
        .into_iter()
        .filter(|c| c.method == "MachineService.EtcdForfeitLeadership")
        .count();
    assert_eq!(forfeits, 1);
    assert_boot_ids_checked(&fx, "healthy", &events);
    // Progress reached every phase a legacy upgrade has.
    let phases: Vec<StepPhase> = events
        .iter()
        .filter_map(|e| match e {
            RolloutEvent::Step { progress, .. } => Some(progress.phase),
            _ => None,
        })
        .collect();
    for want in [
        StepPhase::Installing,
        StepPhase::Rebooting,
        StepPhase::WaitingForReady,
        StepPhase::Done,
    ] {
        assert!(phases.contains(&want), "no {want:?} in {phases:?}");
    }
    let journal = taloscope::rollout::RolloutJournal::load(
        &taloscope::journal::ROLLOUTS.path_for(&fx.state_dir(), "healthy"),
    )
    .expect("journal readable")
    .expect("journal kept");
    assert_eq!(journal.outcome, Some(RolloutOutcome::Completed));
    let lease = fx
        .kube("healthy")
        .await
        .read_rollout_lease()
        .await
        .expect("read lease");
    assert_eq!(lease, None, "the rollout lease is released at the end");
}

const V113: &str = "\
clusters:
  - name: lab
    talos_version: v1.13.0
    nodes:
      - name: cp-1
        role: controlplane
        address: 127.10.7.1
      - name: cp-2
        role: controlplane
        address: 127.10.7.2
      - name: cp-3
        role: controlplane
        address: 127.10.7.3
      - name: w-1
        role: worker
        address: 127.10.7.4
      - name: w-2
        role: worker
        address: 127.10.7.5
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_1_13_nodes_upgrade_through_pull_lifecycle_and_reboot() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v113.yaml");
    std::fs::write(&file, V113).unwrap();
    let fx = start(Scenario::from_file(&file).expect("scenario")).await;
    let plan = fx.plan("lab", "v1.13.9").await;
    assert!(
        plan.steps
            .iter()
            .all(|s| s.api == Some(UpgradeApi::Lifecycle))
    );
    let (outcome, events) = run_talos(fx.talos_run("lab", "v1.13.9", plan)).await;
    assert_eq!(outcome, RolloutOutcome::Completed, "{events:#?}");
    for (node, version) in versions(&fx, "lab") {
        assert_eq!(version, "v1.13.9", "{node}");
    }
    let calls = fx.sim.state().mutating_calls();
    for node in ["cp-1", "cp-2", "cp-3", "w-1", "w-2"] {
        let methods: Vec<&str> = calls
            .iter()
            .filter(|c| c.node == node)
            .map(|c| c.method)
            .filter(|m| *m != "MachineService.EtcdForfeitLeadership")
            .collect();
        assert_eq!(
            methods,
            [
                "ImageService.Pull",
                "LifecycleService.Upgrade",
                "MachineService.Reboot"
            ],
            "{node}"
        );
    }
    assert!(
        !calls.iter().any(|c| c.method == "MachineService.Upgrade"),
        "no legacy call on 1.13"
    );
    assert_control_planes_one_at_a_time(&fx, "lab");
    assert!(events.iter().any(
        |e| matches!(e, RolloutEvent::Step { progress, .. } if progress.phase == StepPhase::Pulling)
    ));
    assert_boot_ids_checked(&fx, "lab", &events);
    assert_drained_around_each_reboot(&fx, &events).await;
}

/// From the sim's record: every node's boot id was read before its upgrade call and again in
/// a later boot; and the log says the check passed.
fn assert_boot_ids_checked(fx: &Fixture, cluster: &str, events: &[RolloutEvent]) {
    let state = fx.sim.state();
    let reads = state.file_reads();
    let calls = state.mutating_calls();
    for window in state
        .upgrade_record()
        .iter()
        .filter(|w| w.cluster == cluster)
    {
        let node = window.node.as_str();
        let mine: Vec<_> = reads.iter().filter(|r| r.node == node).collect();
        let first_call = calls
            .iter()
            .filter(|c| c.node == node && c.method != "MachineService.EtcdForfeitLeadership")
            .map(|c| c.at)
            .min()
            .expect("an upgrade call");
        let before = mine
            .iter()
            .find(|r| r.at < first_call)
            .unwrap_or_else(|| panic!("{node}: boot id not read before the upgrade call"));
        assert!(
            mine.iter().any(|r| r.boot > before.boot),
            "{node}: boot id not read again after the reboot"
        );
    }
    let changed = events
        .iter()
        .filter(|e| matches!(e, RolloutEvent::Log { line, .. } if line.contains("boot id changed")))
        .count();
    assert_eq!(changed, state.upgrade_record().len(), "one per node");
}

/// From the kube sim's record: each node was cordoned before its reboot call and uncordoned
/// only after it was back; the workers' Deployment pods were evicted and replaced on the other
/// worker; nothing is left cordoned.
async fn assert_drained_around_each_reboot(fx: &Fixture, events: &[RolloutEvent]) {
    let actions = fx.sim.kube_api(0).expect("kube API of lab").actions();
    let state = fx.sim.state();
    let calls = state.mutating_calls();
    let windows = state.upgrade_record();
    for node in ["cp-1", "cp-2", "cp-3", "w-1", "w-2"] {
        let reboot = calls
            .iter()
            .find(|c| c.node == node && c.method == "MachineService.Reboot")
            .expect("reboot call");
        let ended = windows
            .iter()
            .find(|w| w.node == node)
            .and_then(|w| w.ended_at)
            .expect("upgrade window ended");
        let cordoned = actions
            .iter()
            .find(|a| a.node == node && a.kind == KubeActionKind::Cordoned)
            .unwrap_or_else(|| panic!("{node} never cordoned"));
        let uncordoned = actions
            .iter()
            .find(|a| a.node == node && a.kind == KubeActionKind::Uncordoned)
            .unwrap_or_else(|| panic!("{node} never uncordoned"));
        assert!(cordoned.at < reboot.at, "{node}: cordoned after its reboot");
        assert!(
            uncordoned.at >= ended,
            "{node}: uncordoned before it was back"
        );
        let evicted: Vec<_> = actions
            .iter()
            .filter(|a| a.node == node)
            .filter_map(|a| match &a.kind {
                KubeActionKind::Evicted { replaced_on, .. } => Some((a.at, replaced_on.clone())),
                _ => None,
            })
            .collect();
        if node.starts_with("w-") {
            assert!(!evicted.is_empty(), "{node}: its Deployment pods evicted");
            let other = if node == "w-1" { "w-2" } else { "w-1" };
            for (at, replaced_on) in evicted {
                assert!(
                    cordoned.at < at && at < reboot.at,
                    "{node}: evicted outside the drain"
                );
                assert_eq!(replaced_on.as_deref(), Some(other), "{node}: pods moved");
            }
        } else {
            assert!(evicted.is_empty(), "{node}: only DaemonSet and static pods");
        }
    }
    let kube = fx.kube("lab").await;
    for n in kube.nodes().await.expect("nodes") {
        assert!(!n.unschedulable, "{} left cordoned", n.name);
    }
    let mut workloads = 0;
    for worker in ["w-1", "w-2"] {
        let pods = kube.pods_on_node(worker).await.expect("pods");
        workloads += pods.iter().filter(|p| p.must_evict()).count();
    }
    assert_eq!(workloads, 4, "every Deployment pod runs on a worker again");
    for word in ["cordoning", "draining"] {
        assert!(
            events.iter().any(|e| matches!(
                e,
                RolloutEvent::Step { progress, .. } if progress.detail.starts_with(word)
            )),
            "no {word} in the step details"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cp2_down_is_refused_before_any_call() {
    let fx = start(builtin("cp2-down")).await;
    let plan = fx.plan("cp2-down", "v1.12.0").await;
    let (outcome, _) = run_talos(fx.talos_run("cp2-down", "v1.12.0", plan)).await;
    let RolloutOutcome::Halted(reason) = outcome else {
        panic!("cp2-down was not refused: {outcome:?}");
    };
    assert!(reason.contains("cp-2"), "{reason}");
    assert!(fx.sim.state().mutating_calls().is_empty(), "no call at all");
    assert!(fx.sim.state().upgrade_record().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_context_is_refused_by_the_role_guard() {
    let fx = start(builtin("healthy")).await;
    let plan = fx.plan("healthy", "v1.12.0").await;
    let (outcome, _) = run_talos(TalosUpgradeRun {
        cluster: fx.cluster("healthy-reader"),
        ..fx.talos_run("healthy", "v1.12.0", plan)
    })
    .await;
    let RolloutOutcome::Halted(reason) = outcome else {
        panic!("a reader ran an upgrade: {outcome:?}");
    };
    assert!(
        reason.contains("client role") && reason.contains("os:reader"),
        "{reason}"
    );
    assert!(fx.sim.state().mutating_calls().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_in_batches_of_max_parallel_while_control_planes_stay_alone() {
    let fx = start(builtin("healthy")).await;
    let status = fx.status("healthy").await;
    let options = taloscope::upgrade::UpgradeOptions {
        max_parallel: 2,
        ..Default::default()
    };
    let target = taloscope::versions::Version::parse("v1.12.0").unwrap();
    let plan = taloscope::upgrade::UpgradePlan::new(&status, target, options).expect("plan");
    assert_eq!(
        plan.batches().len(),
        4,
        "three control planes alone, two workers together"
    );
    let (outcome, events) = run_talos(fx.talos_run("healthy", "v1.12.0", plan)).await;
    assert_eq!(outcome, RolloutOutcome::Completed, "{events:#?}");
    for (node, version) in versions(&fx, "healthy") {
        assert_eq!(version, "v1.12.0", "{node}");
    }
    assert_control_planes_one_at_a_time(&fx, "healthy");
    let windows = fx.sim.state().upgrade_record();
    let last_cp_end = windows
        .iter()
        .filter(|w| w.role == taloscope_sim::NodeRole::ControlPlane)
        .filter_map(|w| w.ended_at)
        .max()
        .expect("control planes ended");
    assert!(
        windows
            .iter()
            .filter(|w| w.role == taloscope_sim::NodeRole::Worker)
            .all(|w| w.started_at >= last_cp_end),
        "workers start after every control plane is done"
    );
}
