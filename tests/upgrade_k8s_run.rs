//! The Kubernetes upgrade through the one operation pipeline against the sim: 1.34.1 → 1.35.0 with
//! every component and kubelet moved and the control planes one at a time; a control-plane
//! component that never becomes ready halts the rollout; a run killed mid-rollout resumes from
//! its journal; `removed-api` is refused until acknowledged; a skipped minor is refused; and on
//! `healthy` the real sequence: Talos to v1.12.0 first, then Kubernetes to 1.35.0.
mod upgrade_common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use taloscope::operation::upgrade::{
    KubernetesUpgradeRun, resume_kubernetes_upgrade_with, spawn_kubernetes_upgrade,
};
use taloscope::rollout::{
    RolloutControl, RolloutEvent, RolloutJournal, RolloutKind, RolloutOutcome, StepPhase,
};
use taloscope::upgrade::kubernetes::{KubernetesUpgradePlan, REMOVED_APIS_ACK};
use taloscope::upgrade::{RolloutHandle, RunOptions};
use taloscope::versions::Version;
use taloscope_sim::{NodeRole, Scenario};
use tokio::sync::mpsc::UnboundedReceiver;
use upgrade_common::*;

async fn k8s_plan(fx: &Fixture, context: &str, target: &str) -> KubernetesUpgradePlan {
    let status = fx.status(context).await;
    let target = Version::parse(target).expect("target");
    KubernetesUpgradePlan::new(&status, &target, false).expect("plan")
}

fn options(fx: &Fixture, step_timeout: Duration) -> RunOptions {
    RunOptions {
        node_timeout: step_timeout,
        ..fx.options()
    }
}

async fn run_k8s(
    fx: &Fixture,
    context: &str,
    target: &str,
    acks: Vec<String>,
    step_timeout: Duration,
) -> (RolloutOutcome, Vec<RolloutEvent>) {
    let plan = k8s_plan(fx, context, target).await;
    let run = KubernetesUpgradeRun {
        acks,
        options: options(fx, step_timeout),
        ..k8s_run(fx, context, target, plan)
    };
    let (handle, mut rx) = spawn_k8s(run);
    finish(handle, &mut rx, LIMIT).await
}

/// The approved Kubernetes upgrade of `plan` on the cluster of `context`, with a 20 s step
/// timeout and no acknowledgements.
fn k8s_run(
    fx: &Fixture,
    context: &str,
    target: &str,
    plan: KubernetesUpgradePlan,
) -> KubernetesUpgradeRun {
    KubernetesUpgradeRun {
        approved: fx.approve_k8s(context, target.trim_start_matches('v')),
        dispatcher: fx.dispatcher(),
        plan,
        acks: vec![],
        cluster: fx.cluster(context),
        options: options(fx, Duration::from_secs(20)),
    }
}

fn spawn_k8s(run: KubernetesUpgradeRun) -> (RolloutHandle, UnboundedReceiver<RolloutEvent>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    (spawn_kubernetes_upgrade(run, tx), rx)
}

/// Every component of every node, from the sim: (node, component, version).
fn components(fx: &Fixture, cluster: &str) -> Vec<(String, String, String)> {
    let state = fx.sim.state();
    let c = state.cluster(cluster).expect("cluster in sim");
    let mut out = Vec::new();
    for n in c.nodes() {
        let k = n.status().kubernetes;
        out.push((n.name().to_string(), "kubelet".into(), k.kubelet.version));
        for p in k.static_pods {
            out.push((n.name().to_string(), p.name, p.version));
        }
        if n.role() == NodeRole::ControlPlane {
            out.push((n.name().to_string(), "kube-proxy".into(), k.proxy_version));
        }
    }
    out
}

/// Watches the sim while a rollout runs: the most control planes with a static pod not ready
/// at the same moment.
fn watch_control_planes(
    fx: &Fixture,
    cluster: &str,
) -> (Arc<Mutex<usize>>, tokio::task::JoinHandle<()>) {
    let state = fx.sim.state();
    let mut changes = state.subscribe();
    let cluster = cluster.to_string();
    let most = Arc::new(Mutex::new(0usize));
    let seen = most.clone();
    let task = tokio::spawn(async move {
        loop {
            if let Some(c) = state.cluster(&cluster) {
                let down = c
                    .nodes()
                    .iter()
                    .filter(|n| n.status().kubernetes.static_pods.iter().any(|p| !p.ready))
                    .count();
                if let Ok(mut m) = seen.lock() {
                    *m = (*m).max(down);
                }
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    });
    (most, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_upgrade_moves_every_component_control_planes_one_at_a_time() {
    let fx = start(builtin("healthy-112")).await;
    let (most, watcher) = watch_control_planes(&fx, "healthy-112");
    let (outcome, events) = run_k8s(
        &fx,
        "healthy-112",
        "1.35.0",
        vec![],
        Duration::from_secs(20),
    )
    .await;
    watcher.abort();
    assert_eq!(outcome, RolloutOutcome::Completed, "{events:#?}");
    for (node, component, version) in components(&fx, "healthy-112") {
        assert_eq!(version, "v1.35.0", "{component} on {node}");
    }
    let most = *most.lock().expect("watcher");
    assert_eq!(
        most, 1,
        "exactly one control plane restarting a component at a time"
    );
    // The steps ran in upstream's order: every apiserver before any controller-manager, and so on.
    let done: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            RolloutEvent::Step { progress, .. } if progress.phase == StepPhase::Done => {
                Some(format!("{} {}", progress.node, progress.label))
            }
            _ => None,
        })
        .collect();
    assert_eq!(done.len(), 17, "{done:#?}");
    assert!(done[0].starts_with("cp-1 kube-apiserver"), "{done:?}");
    assert!(
        done[3].starts_with("cp-1 kube-controller-manager"),
        "{done:?}"
    );
    assert!(done[6].starts_with("cp-1 kube-scheduler"), "{done:?}");
    assert!(done[9].starts_with("cp-1 kube-proxy"), "{done:?}");
    assert!(done[16].starts_with("w-2 kubelet"), "{done:?}");
    let status = fx.status("healthy-112").await;
    let kube = status.kubernetes.as_ref().expect("kubernetes");
    assert_eq!(kube.server_version.as_deref(), Some("v1.35.0"));
    assert_eq!(kube.kube_proxy_version.as_deref(), Some("v1.35.0"));
    assert!(
        kube.components
            .iter()
            .all(|c| c.version == "v1.35.0" && c.ready)
    );
    assert!(
        status
            .nodes
            .iter()
            .all(|n| n.kubelet_version.as_deref() == Some("v1.35.0") && n.k8s_ready == Some(true))
    );
    // The journal is finished; the lease is released.
    assert!(
        RolloutJournal::load_unfinished(&fx.state_dir(), "healthy-112")
            .expect("journal readable")
            .is_none()
    );
}

const STUCK_SCHEDULER: &str = "clusters:
  - name: stuck
    talos_version: v1.12.0
    nodes:
      - {name: cp-1, role: controlplane}
      - name: cp-2
        role: controlplane
        faults:
          component_never_ready: kube-scheduler
      - {name: cp-3, role: controlplane}
      - {name: w-1, role: worker}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_that_never_becomes_ready_halts_the_rollout() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("stuck.yaml");
    std::fs::write(&file, STUCK_SCHEDULER).expect("scenario file");
    let fx = start(Scenario::from_file(&file).expect("scenario")).await;
    let (outcome, events) = run_k8s(&fx, "stuck", "1.35.0", vec![], Duration::from_secs(3)).await;
    let RolloutOutcome::Halted(reason) = &outcome else {
        panic!("halted, not {outcome:?}: {events:#?}");
    };
    assert!(
        reason.contains("cp-2") && reason.contains("timed out"),
        "{reason}"
    );
    let versions = components(&fx, "stuck");
    let version_of = |node: &str, component: &str| {
        versions
            .iter()
            .find(|(n, c, _)| n == node && c == component)
            .map(|(_, _, v)| v.clone())
            .expect("component")
    };
    assert_eq!(version_of("cp-1", "kube-scheduler"), "v1.35.0");
    assert_eq!(
        version_of("cp-3", "kube-scheduler"),
        "v1.34.1",
        "cp-3 not touched"
    );
    for node in ["cp-1", "cp-2", "cp-3", "w-1"] {
        assert_eq!(
            version_of(node, "kubelet"),
            "v1.34.1",
            "{node} kubelet not touched"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_mid_rollout_resumes_and_completes() {
    let fx = start(builtin("healthy-112")).await;
    let plan = k8s_plan(&fx, "healthy-112", "1.35.0").await;
    let (handle, mut rx) = spawn_k8s(k8s_run(&fx, "healthy-112", "1.35.0", plan));
    wait_for_step(&mut rx, 4, StepPhase::WaitingForReady).await;
    handle.task.abort();
    let _ = handle.task.await;
    let journal = RolloutJournal::load_unfinished(&fx.state_dir(), "healthy-112")
        .expect("journal readable")
        .expect("an unfinished journal");
    assert_eq!(journal.summary().first_unfinished(), Some(4));
    let held = fx
        .kube("healthy-112")
        .await
        .read_rollout_lease()
        .await
        .expect("read lease")
        .expect("the killed run's lease is still there");
    assert_eq!(held.holder, journal.holder);
    assert_eq!(held.kind, Some(RolloutKind::KubernetesUpgrade));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = resume_kubernetes_upgrade_with(
        journal,
        fx.approve_k8s("healthy-112", "1.35.0"),
        fx.dispatcher(),
        fx.cluster("healthy-112"),
        options(&fx, Duration::from_secs(20)),
        tx,
    );
    let (outcome, events) = finish(handle, &mut rx, LIMIT).await;
    assert_eq!(outcome, RolloutOutcome::Completed, "{events:#?}");
    for (node, component, version) in components(&fx, "healthy-112") {
        assert_eq!(version, "v1.35.0", "{component} on {node}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removed_api_is_refused_until_acknowledged() {
    let fx = start(builtin("removed-api")).await;
    let (outcome, _) = run_k8s(
        &fx,
        "removed-api",
        "1.32.0",
        vec![],
        Duration::from_secs(20),
    )
    .await;
    let RolloutOutcome::Halted(reason) = &outcome else {
        panic!("refused, not {outcome:?}");
    };
    assert!(
        reason.contains("removed APIs")
            && reason.contains("flowschemas.v1beta3.flowcontrol.apiserver.k8s.io: 2"),
        "{reason}"
    );
    assert!(
        components(&fx, "removed-api")
            .iter()
            .all(|(_, _, v)| v == "v1.31.4"),
        "nothing was changed"
    );
    let (outcome, events) = run_k8s(
        &fx,
        "removed-api",
        "1.32.0",
        vec![REMOVED_APIS_ACK.to_string()],
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(outcome, RolloutOutcome::Completed, "{events:#?}");
    for (node, component, version) in components(&fx, "removed-api") {
        assert_eq!(version, "v1.32.0", "{component} on {node}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skipping_a_minor_is_refused_before_any_change() {
    let fx = start(builtin("healthy-112")).await;
    let (outcome, _) = run_k8s(
        &fx,
        "healthy-112",
        "1.36.0",
        vec![],
        Duration::from_secs(20),
    )
    .await;
    let RolloutOutcome::Halted(reason) = &outcome else {
        panic!("refused, not {outcome:?}");
    };
    assert!(reason.contains("skips a minor"), "{reason}");
    assert!(
        components(&fx, "healthy-112")
            .iter()
            .all(|(_, _, v)| v == "v1.34.1"),
        "nothing was changed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_healthy_talos_goes_first_then_kubernetes() {
    let fx = start(builtin("healthy")).await;
    // Talos 1.11 does not run Kubernetes 1.35: refused.
    let (outcome, _) = run_k8s(&fx, "healthy", "1.35.0", vec![], Duration::from_secs(20)).await;
    let RolloutOutcome::Halted(reason) = &outcome else {
        panic!("refused, not {outcome:?}");
    };
    assert!(reason.contains("Talos supports target"), "{reason}");
    // The OS upgrade to v1.12.0 through the Talos runner, then Kubernetes.
    let plan = fx.plan("healthy", "v1.12.0").await;
    let (outcome, events) = run_talos(fx.talos_run("healthy", "v1.12.0", plan)).await;
    assert_eq!(outcome, RolloutOutcome::Completed, "{events:#?}");
    let (outcome, events) =
        run_k8s(&fx, "healthy", "1.35.0", vec![], Duration::from_secs(20)).await;
    assert_eq!(outcome, RolloutOutcome::Completed, "{events:#?}");
    for (node, component, version) in components(&fx, "healthy") {
        assert_eq!(version, "v1.35.0", "{component} on {node}");
    }
    for (node, version) in versions(&fx, "healthy") {
        assert_eq!(version, "v1.12.0", "{node}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_finishes_the_step_in_progress_and_stops() {
    let fx = start(builtin("healthy-112")).await;
    let plan = k8s_plan(&fx, "healthy-112", "1.35.0").await;
    let (handle, mut rx) = spawn_k8s(k8s_run(&fx, "healthy-112", "1.35.0", plan));
    wait_for_step(&mut rx, 0, StepPhase::Installing).await;
    handle.control.send(RolloutControl::Abort).expect("control");
    let (outcome, _) = finish(handle, &mut rx, LIMIT).await;
    assert_eq!(outcome, RolloutOutcome::Aborted);
    let versions = components(&fx, "healthy-112");
    let version_of = |node: &str, component: &str| {
        versions
            .iter()
            .find(|(n, c, _)| n == node && c == component)
            .map(|(_, _, v)| v.clone())
            .expect("component")
    };
    assert_eq!(
        version_of("cp-1", "kube-apiserver"),
        "v1.35.0",
        "finished, not cut"
    );
    assert_eq!(
        version_of("cp-2", "kube-apiserver"),
        "v1.34.1",
        "nothing after the abort"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_context_is_refused() {
    let fx = start(builtin("healthy-112")).await;
    // The reader's talosconfig context with the cluster's kube context.
    let mut reader = fx.cluster("healthy-112-reader");
    reader.kube = fx.cluster("healthy-112").kube;
    let plan = k8s_plan(&fx, "healthy-112", "1.35.0").await;
    let (handle, mut rx) = spawn_k8s(KubernetesUpgradeRun {
        cluster: reader,
        ..k8s_run(&fx, "healthy-112", "1.35.0", plan)
    });
    let (outcome, _) = finish(handle, &mut rx, LIMIT).await;
    let RolloutOutcome::Halted(reason) = &outcome else {
        panic!("refused, not {outcome:?}");
    };
    assert!(reason.contains("client role"), "{reason}");
    assert!(
        fx.sim.state().mutating_calls().is_empty(),
        "no node was called"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_planes_in_any_order_complete_kube_proxy() {
    // The console may list control planes in the order their reports arrived: the kube-proxy
    // step must not depend on the first control plane being stepped first.
    let fx = start(builtin("healthy-112")).await;
    let mut status = fx.status("healthy-112").await;
    status.nodes.reverse();
    let target = Version::parse("1.35.0").expect("target");
    let plan = KubernetesUpgradePlan::new(&status, &target, false).expect("plan");
    let (handle, mut rx) = spawn_k8s(k8s_run(&fx, "healthy-112", "1.35.0", plan));
    let (outcome, events) = finish(handle, &mut rx, LIMIT).await;
    assert_eq!(outcome, RolloutOutcome::Completed, "{events:#?}");
    let status = fx.status("healthy-112").await;
    let kube = status.kubernetes.as_ref().expect("kubernetes");
    assert_eq!(kube.kube_proxy_version.as_deref(), Some("v1.35.0"));
}
