//! The rollout Lease over the Kubernetes API sim's HTTPS socket: take, renew
//! and release; a second console refused; an expired lease taken over; a
//! second run of the same user@host refused and a gone run's lease taken over;
//! another host's run waited for until its lease expires; concurrent writers detected; the apiserver's Status
//! answers; and the real kubectl listing, creating and deleting leases.
mod kube_common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, DeleteParams, PostParams, Preconditions};
use kube_common::lease_fixture::start;
use taloscope::fleet::collect_kubernetes;
use taloscope::fleet::{LeaseError, RolloutLease};
use taloscope::kube::KubeClient;
use taloscope::rollout::RolloutKind;
use taloscope::rollout::claim::claim_run;
use taloscope::rollout::journal::RolloutJournal;
use taloscope::rollout::{LeaseProgress, ROLLOUT_LEASE_NAME};
use taloscope::run_holder::RunHolder;
use taloscope_sim::kube_api::kubeconfig;

const MINUTE: Duration = Duration::from_secs(60);

fn progress(node_index: usize, node: &str, phase: &str) -> LeaseProgress {
    LeaseProgress {
        node_index,
        current_node: Some(node.into()),
        phase: phase.into(),
    }
}

/// `holder` takes `cluster`'s lease for a Talos upgrade to v1.12.0 of 5 nodes.
async fn take_talos_upgrade(
    client: &KubeClient,
    cluster: &str,
    holder: &str,
) -> Result<RolloutLease, LeaseError> {
    take_displacing(client, cluster, holder, None).await
}

/// [`take_talos_upgrade`], taking it over from `displaces` even while that holder's is live.
async fn take_displacing(
    client: &KubeClient,
    cluster: &str,
    holder: &str,
    displaces: Option<&str>,
) -> Result<RolloutLease, LeaseError> {
    client
        .acquire_rollout_lease(
            cluster,
            holder,
            displaces,
            (RolloutKind::TalosUpgrade, "v1.12.0", 5),
            MINUTE,
        )
        .await
}

fn api_code(e: kube::Error) -> (u16, String) {
    match e {
        kube::Error::Api(status) => (status.code, status.reason.clone()),
        other => panic!("expected an API refusal, got {other}"),
    }
}

#[tokio::test]
async fn take_renew_and_release() {
    let f = start("lease-basic", 1).await;
    let client = f.client().await;
    assert_eq!(client.read_rollout_lease().await.unwrap(), None);
    let mut lease = take_talos_upgrade(&client, "lease-basic", "alice@jump1")
        .await
        .unwrap();
    assert_eq!(lease.holder(), "alice@jump1");
    let info = client.read_rollout_lease().await.unwrap().unwrap();
    assert_eq!(info.holder, "alice@jump1");
    assert_eq!(info.kind, Some(RolloutKind::TalosUpgrade));
    assert_eq!(info.target.as_deref(), Some("v1.12.0"));
    assert_eq!((info.node_index, info.node_count), (1, 5));
    assert!(!info.expired);

    let before = lease.resource_version().map(str::to_string);
    lease
        .renew(&progress(3, "cp-3", "rebooting"))
        .await
        .unwrap();
    assert_ne!(lease.resource_version().map(str::to_string), before);
    let info = client.read_rollout_lease().await.unwrap().unwrap();
    assert_eq!((info.node_index, info.node_count), (3, 5));
    assert_eq!(info.current_node.as_deref(), Some("cp-3"));
    assert_eq!(info.phase.as_deref(), Some("rebooting"));
    let guard_view = info.as_in_progress();
    assert_eq!(guard_view.holder, "alice@jump1");
    assert_eq!((guard_view.node_index, guard_view.node_count), (3, 5));

    // The stored object is a proper Lease with MicroTime stamps.
    let raw = f.raw_leases().await.get(ROLLOUT_LEASE_NAME).await.unwrap();
    let spec = raw.spec.unwrap();
    assert_eq!(spec.lease_duration_seconds, Some(60));
    let renewed = serde_json::to_value(spec.renew_time.unwrap()).unwrap();
    let renewed = renewed.as_str().unwrap();
    assert!(
        renewed.len() == "2025-01-01T00:00:00.000000Z".len() && renewed.ends_with('Z'),
        "{renewed}"
    );
    assert_eq!(
        raw.metadata.annotations.unwrap()["taloscope.dev/rollout-kind"],
        "talos-upgrade"
    );

    lease.release().await.unwrap();
    assert_eq!(client.read_rollout_lease().await.unwrap(), None);
}

#[tokio::test]
async fn a_second_console_is_refused_naming_the_first() {
    let f = start("lease-held", 2).await;
    let alice = f.client().await;
    let bob = f.client().await;
    let mut held = take_talos_upgrade(&alice, "lease-held", "alice@jump1")
        .await
        .unwrap();
    held.renew(&progress(3, "cp-3", "installing"))
        .await
        .unwrap();
    let refused = bob
        .acquire_rollout_lease(
            "lease-held",
            "bob@jump2",
            None,
            (RolloutKind::KubernetesUpgrade, "1.35.0", 3),
            MINUTE,
        )
        .await;
    match refused {
        Err(e @ LeaseError::HeldBy { .. }) => assert_eq!(
            e.to_string(),
            "upgrade in progress on lease-held by alice@jump1, node 3 of 5"
        ),
        Err(other) => panic!("expected HeldBy, got {other}"),
        Ok(_) => panic!("bob must not get alice's lease"),
    }
    // Alice's lease is untouched and still hers.
    held.renew(&progress(4, "w-1", "pulling")).await.unwrap();
    held.release().await.unwrap();
}

#[tokio::test]
async fn an_expired_lease_is_taken_over() {
    let f = start("lease-expired", 3).await;
    f.plant_lease(serde_json::json!({
        "metadata": {"name": ROLLOUT_LEASE_NAME, "namespace": "kube-system",
                     "annotations": {"taloscope.dev/rollout-kind": "talos-upgrade",
                                     "taloscope.dev/node-index": "2",
                                     "taloscope.dev/node-count": "5"}},
        "spec": {"holderIdentity": "carol@gone", "leaseDurationSeconds": 30,
                 "acquireTime": "2020-01-01T00:00:00.000000Z",
                 "renewTime": "2020-01-01T00:00:10.000000Z"},
    }))
    .await;
    let client = f.client().await;
    let info = client.read_rollout_lease().await.unwrap().unwrap();
    assert_eq!(info.holder, "carol@gone");
    assert!(info.expired);
    let lease = take_talos_upgrade(&client, "lease-expired", "alice@jump1")
        .await
        .unwrap();
    let info = client.read_rollout_lease().await.unwrap().unwrap();
    assert_eq!(info.holder, "alice@jump1");
    assert!(!info.expired);
    assert_eq!((info.node_index, info.node_count), (1, 5));
    let raw = f.raw_leases().await.get(ROLLOUT_LEASE_NAME).await.unwrap();
    assert_eq!(raw.spec.unwrap().lease_transitions, Some(1));
    lease.release().await.unwrap();
}

#[tokio::test]
async fn a_second_run_is_refused_and_a_gone_runs_lease_is_taken_over() {
    let f = start("lease-resume", 4).await;
    let client = f.client().await;
    let first = "alice@jump1/4242-1796052057";
    // The first run is killed: its lease is never released.
    let mut killed = take_talos_upgrade(&client, "lease-resume", first)
        .await
        .unwrap();
    // A second run of the same user@host is another holder: refused while the lease lives.
    let second = "alice@jump1/5151-1796052099";
    match take_talos_upgrade(&client, "lease-resume", second).await {
        Err(e @ LeaseError::HeldBy { .. }) => assert_eq!(
            e.to_string(),
            "upgrade in progress on lease-resume by alice@jump1/4242-1796052057 \
             (pid 4242 on jump1, running since 2026-11-30T15:20:57Z), node 1 of 5"
        ),
        other => panic!(
            "expected HeldBy, got {:?}",
            other.map(|l| l.holder().to_string())
        ),
    }
    // Once the first run is known gone, the resuming run takes its lease over.
    let resumed = take_displacing(&client, "lease-resume", second, Some(first))
        .await
        .unwrap();
    assert_ne!(killed.resource_version(), resumed.resource_version());
    assert_eq!(resumed.holder(), second);
    // The killed run's handle can no longer write over the resumed one.
    match killed.renew(&progress(2, "cp-2", "pulling")).await {
        Err(LeaseError::Lost { holder, .. }) => assert_eq!(holder, second),
        other => panic!("expected Lost, got {other:?}"),
    }
    resumed.release().await.unwrap();
}

/// The rollout Lease of `holder`, renewed at `renewed` for 30 s.
fn lease_of(holder: &str, renewed: &str) -> serde_json::Value {
    serde_json::json!({
        "metadata": {"name": ROLLOUT_LEASE_NAME, "namespace": "kube-system",
                     "annotations": {"taloscope.dev/rollout-kind": "talos-upgrade",
                                     "taloscope.dev/node-index": "2",
                                     "taloscope.dev/node-count": "5"}},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 30,
                 "acquireTime": renewed, "renewTime": renewed},
    })
}

#[tokio::test]
async fn another_hosts_run_is_resumed_only_once_its_lease_expired() {
    let f = start("lease-hosts", 9).await;
    let theirs = "bob@jump2/77-1796052057";
    let journal =
        RolloutJournal::begun("lease-hosts", RolloutKind::TalosUpgrade, "v1.12.0", theirs);
    // Its process cannot be checked from here: only an expired Lease may be taken.
    let displaces = claim_run(Some(&journal), None).expect("not refused by the journal");
    assert_eq!(displaces, None);
    let ours = RunHolder::this_process().to_string();
    // Renewed far ahead: live for the whole test, whatever the clock says.
    f.plant_lease(lease_of(theirs, "2999-01-01T00:00:00.000000Z"))
        .await;
    let client = f.client().await;
    match take_displacing(&client, "lease-hosts", &ours, displaces.as_deref()).await {
        Err(e @ LeaseError::HeldBy { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("by bob@jump2/77-1796052057 (pid 77 on jump2, running since 2026-11-30T15:20:57Z)"),
                "{text}"
            );
        }
        other => panic!(
            "expected HeldBy, got {:?}",
            other.map(|l| l.holder().to_string())
        ),
    }
    f.raw_leases()
        .await
        .delete(ROLLOUT_LEASE_NAME, &DeleteParams::default())
        .await
        .unwrap();
    f.plant_lease(lease_of(theirs, "2020-01-01T00:00:10.000000Z"))
        .await;
    let resumed = take_displacing(&client, "lease-hosts", &ours, displaces.as_deref())
        .await
        .expect("an expired lease is taken");
    assert_eq!(resumed.holder(), ours);
    resumed.release().await.unwrap();
}

#[tokio::test]
async fn a_concurrent_writer_is_detected_and_never_overwritten() {
    let f = start("lease-race", 5).await;
    let alice = f.client().await;
    let bob = f.client().await;
    // Two consoles race for a free lease: exactly one wins.
    let (a, b) = tokio::join!(
        take_talos_upgrade(&alice, "lease-race", "alice@jump1"),
        take_talos_upgrade(&bob, "lease-race", "bob@jump2")
    );
    let (mut winner, loser) = match (a, b) {
        (Ok(w), Err(l)) | (Err(l), Ok(w)) => (w, l),
        (Ok(_), Ok(_)) => panic!("both consoles got the lease"),
        (Err(a), Err(b)) => panic!("neither console got the lease: {a}; {b}"),
    };
    match &loser {
        LeaseError::HeldBy { holder, .. } => assert_eq!(holder, winner.holder()),
        other => panic!("expected HeldBy, got {other}"),
    }

    // Someone rewrites the lease behind the winner's back.
    let raw = f.raw_leases().await;
    let mut taken = raw.get(ROLLOUT_LEASE_NAME).await.unwrap();
    if let Some(spec) = taken.spec.as_mut() {
        spec.holder_identity = Some("mallory@elsewhere".into());
    }
    raw.replace(ROLLOUT_LEASE_NAME, &PostParams::default(), &taken)
        .await
        .unwrap();
    match winner.renew(&progress(2, "cp-2", "pulling")).await {
        Err(LeaseError::Lost { cluster, holder }) => {
            assert_eq!(
                (cluster.as_str(), holder.as_str()),
                ("lease-race", "mallory@elsewhere")
            )
        }
        other => panic!("expected Lost, got {other:?}"),
    }
    match winner.release().await {
        Err(LeaseError::Lost { holder, .. }) => assert_eq!(holder, "mallory@elsewhere"),
        other => panic!("expected Lost, got {other:?}"),
    }
    // The release did not delete mallory's lease.
    let info = alice.read_rollout_lease().await.unwrap().unwrap();
    assert_eq!(info.holder, "mallory@elsewhere");
}

#[tokio::test]
async fn the_sim_answers_like_the_apiserver() {
    let f = start("lease-status", 6).await;
    let raw = f.raw_leases().await;
    let lease: Lease = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "probe"},
        "spec": {"holderIdentity": "x@y", "leaseDurationSeconds": 15},
    }))
    .unwrap();
    assert_eq!(
        api_code(raw.get("probe").await.unwrap_err()),
        (404, "NotFound".into())
    );
    let created = raw.create(&PostParams::default(), &lease).await.unwrap();
    assert_eq!(created.metadata.namespace.as_deref(), Some("kube-system"));
    assert!(created.metadata.uid.is_some());
    assert_eq!(
        api_code(
            raw.create(&PostParams::default(), &lease)
                .await
                .unwrap_err()
        ),
        (409, "AlreadyExists".into())
    );
    // An update from a stale read is a Conflict.
    let mut first = created.clone();
    first.spec.as_mut().unwrap().holder_identity = Some("first@a".into());
    let updated = raw
        .replace("probe", &PostParams::default(), &first)
        .await
        .unwrap();
    let mut stale = created.clone();
    stale.spec.as_mut().unwrap().holder_identity = Some("second@b".into());
    assert_eq!(
        api_code(
            raw.replace("probe", &PostParams::default(), &stale)
                .await
                .unwrap_err()
        ),
        (409, "Conflict".into())
    );
    // An update without a resourceVersion is refused, not applied blindly.
    stale.metadata.resource_version = None;
    assert_eq!(
        api_code(
            raw.replace("probe", &PostParams::default(), &stale)
                .await
                .unwrap_err()
        ),
        (422, "Invalid".into())
    );
    let stale_delete = DeleteParams {
        preconditions: Some(Preconditions {
            resource_version: created.metadata.resource_version.clone(),
            uid: None,
        }),
        ..Default::default()
    };
    assert_eq!(
        api_code(raw.delete("probe", &stale_delete).await.unwrap_err()),
        (409, "Conflict".into())
    );
    let kept = raw.get("probe").await.unwrap();
    assert_eq!(
        kept.spec.unwrap().holder_identity.as_deref(),
        Some("first@a")
    );
    let delete = DeleteParams {
        preconditions: Some(Preconditions {
            resource_version: updated.metadata.resource_version.clone(),
            uid: None,
        }),
        ..Default::default()
    };
    raw.delete("probe", &delete).await.unwrap();
    assert_eq!(
        api_code(raw.delete("probe", &delete).await.unwrap_err()),
        (404, "NotFound".into())
    );
    // Other namespaces are stored apart; unknown ones do not exist.
    let other: Api<Lease> = Api::namespaced(raw.clone().into_client(), "default");
    other.create(&PostParams::default(), &lease).await.unwrap();
    assert_eq!(f.client().await.read_rollout_lease().await.unwrap(), None);
    let nowhere: Api<Lease> = Api::namespaced(raw.into_client(), "nowhere");
    assert_eq!(
        api_code(
            nowhere
                .create(&PostParams::default(), &lease)
                .await
                .unwrap_err()
        ),
        (404, "NotFound".into())
    );
}

#[tokio::test]
async fn the_fleet_poll_shows_a_live_lease_and_not_an_expired_one() {
    let f = start("lease-fleet", 8).await;
    let client = f.client().await;
    assert_eq!(collect_kubernetes(&client).await.rollout, None);
    let mut held = take_talos_upgrade(&client, "lease-fleet", "bob@jump2")
        .await
        .unwrap();
    held.renew(&progress(3, "cp-3", "rebooting")).await.unwrap();
    let facts = collect_kubernetes(&client).await;
    assert_eq!(facts.report.error, None);
    let rollout = facts.rollout.expect("bob's rollout");
    assert_eq!(rollout.holder, "bob@jump2");
    assert_eq!(rollout.kind, Some(RolloutKind::TalosUpgrade));
    assert_eq!(rollout.target.as_deref(), Some("v1.12.0"));
    assert_eq!((rollout.node_index, rollout.node_count), (3, 5));
    assert_eq!(rollout.current_node.as_deref(), Some("cp-3"));
    held.release().await.unwrap();
    assert_eq!(collect_kubernetes(&client).await.rollout, None);

    // A lease its holder stopped renewing long ago is not a rollout.
    f.plant_lease(serde_json::json!({
        "metadata": {"name": ROLLOUT_LEASE_NAME, "namespace": "kube-system"},
        "spec": {"holderIdentity": "carol@gone", "leaseDurationSeconds": 30,
                 "renewTime": "2020-01-01T00:00:10.000000Z"},
    }))
    .await;
    assert_eq!(collect_kubernetes(&client).await.rollout, None);
}

fn which(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// kubectl's stdout and stderr, and whether it succeeded.
fn kubectl(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let kubectl = which("kubectl").expect("kubectl is installed (scripts/test installs it)");
    let out = Command::new(kubectl)
        .args(args)
        .arg("--request-timeout=10s")
        .env("KUBECONFIG", dir.join("kubeconfig"))
        .env("HOME", dir)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .current_dir(dir)
        .output()
        .expect("kubectl runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

const LEASE_YAML: &str = "apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: maintenance
  namespace: kube-system
spec:
  holderIdentity: dave@jump3
  leaseDurationSeconds: 120
  renewTime: \"2025-06-01T10:00:00.123456Z\"
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_lists_creates_and_deletes_leases() {
    let f = start("lease-kubectl", 7).await;
    let dir = tempfile::tempdir().unwrap();
    kubeconfig::write(&dir.path().join("kubeconfig"), &f.config).unwrap();
    std::fs::write(dir.path().join("lease.yaml"), LEASE_YAML).unwrap();
    let client = f.client().await;
    let held = take_talos_upgrade(&client, "lease-kubectl", "alice@jump1")
        .await
        .unwrap();
    let path = dir.path().to_path_buf();
    let (created, listed, all, yaml, deleted, after) = tokio::task::spawn_blocking(move || {
        (
            // The sim serves no OpenAPI documents for kubectl's client-side
            // schema check; the sim itself decodes and checks the Lease.
            kubectl(&path, &["create", "--validate=false", "-f", "lease.yaml"]),
            kubectl(&path, &["get", "lease", "-n", "kube-system"]),
            kubectl(&path, &["get", "leases", "--all-namespaces"]),
            kubectl(
                &path,
                &[
                    "get",
                    "lease",
                    "maintenance",
                    "-n",
                    "kube-system",
                    "-o",
                    "yaml",
                ],
            ),
            kubectl(
                &path,
                &["delete", "lease", "maintenance", "-n", "kube-system"],
            ),
            kubectl(&path, &["get", "lease", "maintenance", "-n", "kube-system"]),
        )
    })
    .await
    .unwrap();
    assert!(created.0, "create: {created:?}");
    assert!(
        created
            .1
            .contains("lease.coordination.k8s.io/maintenance created"),
        "{created:?}"
    );
    assert!(listed.0, "get: {listed:?}");
    let header = listed.1.lines().next().unwrap_or("");
    for column in ["NAME", "HOLDER", "AGE"] {
        assert!(header.contains(column), "{column} in {header}");
    }
    for (name, holder) in [
        ("maintenance", "dave@jump3"),
        (ROLLOUT_LEASE_NAME, "alice@jump1"),
    ] {
        let line = listed
            .1
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} in\n{}", listed.1));
        assert!(line.contains(holder), "{holder} in {line}");
    }
    assert!(all.0 && all.1.contains("kube-system"), "{all:?}");
    assert!(yaml.0, "{yaml:?}");
    assert!(
        yaml.1
            .contains("renewTime: \"2025-06-01T10:00:00.123456Z\""),
        "{}",
        yaml.1
    );
    assert!(deleted.0, "delete: {deleted:?}");
    assert!(deleted.1.contains("\"maintenance\" deleted"), "{deleted:?}");
    assert!(!after.0, "the lease is gone: {after:?}");
    assert!(
        after.2.contains("NotFound") || after.2.contains("not found"),
        "{after:?}"
    );
    // kubectl's writes left the rollout lease alone.
    let info = client.read_rollout_lease().await.unwrap().unwrap();
    assert_eq!(info.holder, "alice@jump1");
    held.release().await.unwrap();
}
