//! `taloscope capi status` and the in-place refusal against the sim's `capi` scenario: the
//! tree's counts are the ones kubectl reads from the management cluster, and `upgrade-k8s` /
//! `upgrade --in-place` of the workload cluster are refused by the `capi_owned` guard naming
//! the CAPI way (without `--in-place` they take it: tests/capi_upgrade.rs).
mod upgrade_common;

use std::time::Duration;

use serde_json::Value;
use upgrade_common::*;

const MGMT: &str = "admin@capi-mgmt";

fn kubectl(fx: &Fixture, args: &[&str]) -> Value {
    let out = std::process::Command::new("kubectl")
        .args(["--context", MGMT])
        .args(args)
        .args(["-o", "json"])
        .env("KUBECONFIG", fx.sim.kubeconfig_path())
        .env("HOME", fx.dir.path())
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .expect("kubectl runs (scripts/test installs it)");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("kubectl prints JSON")
}

fn count(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// The TalosControlPlane and the MachineDeployment as kubectl reads them, once every replica
/// is ready (the controller has settled).
async fn settled(fx: &Fixture) -> (Value, Value) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let tcp = kubectl(fx, &["get", "taloscontrolplanes", "-A"])["items"][0].clone();
        let md = kubectl(
            fx,
            &["get", "machinedeployments.v1beta2.cluster.x-k8s.io", "-A"],
        )["items"][0]
            .clone();
        let ready = |o: &Value| {
            count(&o["spec"]["replicas"]) > 0
                && count(&o["status"]["readyReplicas"]) == count(&o["spec"]["replicas"])
        };
        if ready(&tcp) && ready(&md) {
            return (tcp, md);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the capi scenario settles: {tcp}\n{md}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capi_status_shows_the_counts_kubectl_reads() {
    let fx = start(builtin("capi")).await;
    let (tcp, md) = settled(&fx).await;
    let mut cmd = fx.taloscope(MGMT, "capi");
    cmd.args(["status", "--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let status: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(status["apiVersion"], "cluster.x-k8s.io/v1beta2", "{stdout}");
    let cluster = &status["clusters"][0];
    assert_eq!(
        cluster["cluster"],
        tcp["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"]
    );
    assert_eq!(cluster["pairedWith"], "capi-work", "{stdout}");
    let cp = &cluster["controlPlane"];
    assert_eq!(cp["name"], tcp["metadata"]["name"]);
    assert_eq!(count(&cp["replicas"]), count(&tcp["spec"]["replicas"]));
    assert_eq!(count(&cp["current"]), count(&tcp["status"]["replicas"]));
    assert_eq!(count(&cp["ready"]), count(&tcp["status"]["readyReplicas"]));
    assert_eq!(
        count(&cp["upToDate"]),
        count(&tcp["spec"]["replicas"]),
        "settled: all up to date"
    );
    assert_eq!(cp["version"], tcp["spec"]["version"]);
    let deployment = &cluster["machineDeployments"][0];
    assert_eq!(deployment["name"], md["metadata"]["name"]);
    for (ours, theirs) in [
        ("replicas", &md["spec"]["replicas"]),
        ("current", &md["status"]["replicas"]),
        ("ready", &md["status"]["readyReplicas"]),
        ("upToDate", &md["status"]["upToDateReplicas"]),
        ("available", &md["status"]["availableReplicas"]),
    ] {
        assert_eq!(
            count(&deployment[ours]),
            count(theirs),
            "machineDeployments[0].{ours}: {stdout}"
        );
    }
    let machines = kubectl(&fx, &["get", "machines.v1beta2.cluster.x-k8s.io", "-A"]);
    let listed = machines["items"].as_array().map_or(0, Vec::len);
    assert_eq!(cluster["machines"].as_array().map_or(0, Vec::len), listed);
    // Every Machine has its node.
    for m in cluster["machines"].as_array().unwrap() {
        assert!(!m["node"].as_str().unwrap_or_default().is_empty(), "{m}");
    }

    let mut cmd = fx.taloscope(MGMT, "capi");
    cmd.arg("status");
    let (code, table, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(table.contains("TalosControlPlane/"), "{table}");
    assert!(table.contains("context capi-work"), "{table}");

    // The workload cluster is no management cluster: a usage error naming the one that owns it.
    let mut cmd = fx.taloscope("capi-work", "capi");
    cmd.arg("status");
    let (code, _, stderr) = output(cmd).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("not a Cluster API management cluster")
            && stderr.contains(&format!("of management cluster {MGMT}"))
            && stderr.contains(&format!("--context {MGMT} capi status")),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_place_upgrades_of_a_capi_owned_cluster_are_refused_naming_the_capi_way() {
    let fx = start(builtin("capi")).await;
    let (tcp, _) = settled(&fx).await;
    let version = tcp["spec"]["version"]
        .as_str()
        .unwrap()
        .trim_start_matches('v');
    let (minor, patch) = version.rsplit_once('.').unwrap();
    let next = format!("{minor}.{}", patch.parse::<u32>().unwrap() + 1);
    let mut cmd = fx.taloscope("capi-work", "upgrade-k8s");
    cmd.args(["--to", &next, "--in-place", "--plan", "--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    let plan: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let guard = plan_guard(&plan, "capi_owned");
    assert_eq!(guard["verdict"], "fail");
    let reason = guard["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("owned by Cluster API (admin@capi-mgmt/default/capi-work)"),
        "{reason}"
    );
    assert!(
        reason.contains("TalosControlPlane.spec.version"),
        "{reason}"
    );

    // --yes is refused too, before anything changes.
    let mut cmd = fx.taloscope("capi-work", "upgrade-k8s");
    cmd.args([
        "--to",
        &next,
        "--in-place",
        "--yes",
        "--confirm",
        "capi-work",
    ]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("owned by Cluster API"),
        "{stdout}\n{stderr}"
    );
    assert!(
        fx.sim.state().mutating_calls().is_empty(),
        "nothing changed: {:?}",
        fx.sim.state().mutating_calls()
    );
}
