//! Cordon and drain of one Kubernetes node against the kube sim: DaemonSet and mirror pods
//! stay, the Deployment's pods are evicted and replaced on the other worker, an eviction a
//! disruption budget refuses is retried, and a drain that cannot finish stops at its timeout.
mod upgrade_common;

use std::sync::Mutex;
use std::time::Duration;

use taloscope::kube::{DrainError, DrainOptions};
use taloscope_sim::kube_api::KubeActionKind;
use upgrade_common::*;

fn quick(timeout_ms: u64) -> DrainOptions {
    DrainOptions {
        timeout: Duration::from_millis(timeout_ms),
        retry_every: Duration::from_millis(20),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_evicts_workloads_only_and_retries_a_refused_eviction() {
    let fx = start(builtin("healthy")).await;
    let kube = fx.kube("healthy").await;
    let before = kube.pods_on_node("w-1").await.expect("pods");
    let workloads = before.iter().filter(|p| p.must_evict()).count();
    assert_eq!(workloads, 2, "{before:?}");
    assert!(
        before
            .iter()
            .any(|p| p.owner_kind.as_deref() == Some("DaemonSet"))
    );
    let cp_pods = kube.pods_on_node("cp-1").await.expect("pods");
    assert!(
        cp_pods.iter().any(|p| p.mirror),
        "static pods are mirror pods"
    );
    assert!(cp_pods.iter().all(|p| !p.must_evict()));

    let api = fx.sim.kube_api(0).expect("kube API");
    api.refuse_evictions(2);
    let lines = Mutex::new(Vec::new());
    let progress = |line: String| lines.lock().unwrap().push(line);
    let report = tokio::time::timeout(
        Duration::from_secs(20),
        kube.cordon_and_drain("w-1", quick(10_000), &progress),
    )
    .await
    .expect("drain ends")
    .expect("drained");
    assert_eq!(report.evicted.len(), 2);
    assert_eq!(report.kept, 1, "the DaemonSet's pod stays");
    let lines = lines.into_inner().unwrap();
    assert_eq!(lines.first().map(String::as_str), Some("cordoning w-1"));
    assert!(
        lines.iter().any(|l| l.contains("disruption budget")),
        "{lines:?}"
    );

    let after = kube.pods_on_node("w-1").await.expect("pods");
    assert!(after.iter().all(|p| !p.must_evict()), "{after:?}");
    let moved = kube.pods_on_node("w-2").await.expect("pods");
    assert_eq!(moved.iter().filter(|p| p.must_evict()).count(), 4);
    let nodes = kube.nodes().await.expect("nodes");
    let w1 = nodes.iter().find(|n| n.name == "w-1").expect("w-1");
    assert!(w1.unschedulable, "a drained node stays cordoned");
    assert_eq!(
        w1.cordoned_by.as_deref(),
        Some(taloscope::kube::drain::CORDONED_BY_TALOSCOPE),
        "the cordon carries taloscope's mark, so a resumed rollout may undo it"
    );
    // An operator's own cordon carries no mark; uncordoning ours clears both.
    kube.set_cordoned("w-2", true).await.expect("cordon w-2");
    kube.uncordon_marked("w-1").await.expect("uncordon w-1");
    let nodes = kube.nodes().await.expect("nodes");
    let w1 = nodes.iter().find(|n| n.name == "w-1").expect("w-1");
    let w2 = nodes.iter().find(|n| n.name == "w-2").expect("w-2");
    assert!(!w1.unschedulable && w1.cordoned_by.is_none(), "{w1:?}");
    assert!(w2.unschedulable && w2.cordoned_by.is_none(), "{w2:?}");
    let actions = api.actions();
    assert_eq!(
        actions.first().map(|a| &a.kind),
        Some(&KubeActionKind::Cordoned)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_a_budget_keeps_refusing_stops_at_its_timeout() {
    let fx = start(builtin("healthy")).await;
    let kube = fx.kube("healthy").await;
    fx.sim
        .kube_api(0)
        .expect("kube API")
        .refuse_evictions(usize::MAX);
    let result = tokio::time::timeout(
        Duration::from_secs(20),
        kube.cordon_and_drain("w-2", quick(200), &|_| {}),
    )
    .await
    .expect("drain ends");
    match result {
        Err(DrainError::Timeout { node, pods, .. }) => {
            assert_eq!(node, "w-2");
            assert!(pods.contains("default/web-"), "{pods}");
        }
        other => panic!("the drain did not time out: {other:?}"),
    }
}
