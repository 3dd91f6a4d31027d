//! The CAPI-way upgrade against the `capi` sim when the providers would not roll by themselves:
//! a TalosControlPlane with `rolloutStrategy.type: OnDelete` (the plan says so and the run
//! deletes the outdated Machines one at a time, each replaced before the next) and a paused
//! Cluster (the plan is refused naming what pauses it; nothing is patched, nothing waits).
mod upgrade_common;

use serde_json::Value;
use upgrade_common::*;

const MGMT: &str = "admin@capi-mgmt";
const WORKLOAD: &str = "capi-work";

fn kubectl_patch(fx: &Fixture, resource: &str, name: &str, patch: &str) {
    let out = std::process::Command::new("kubectl")
        .args([
            "--context",
            MGMT,
            "patch",
            resource,
            name,
            "--type",
            "merge",
            "-p",
            patch,
        ])
        .env("KUBECONFIG", fx.sim.kubeconfig_path())
        .env("HOME", fx.dir.path())
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .expect("kubectl runs (scripts/test installs it)");
    assert!(
        out.status.success(),
        "kubectl patch {resource} {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn upgrade_k8s(fx: &Fixture, args: &[&str]) -> tokio::process::Command {
    let mut cmd = fx.taloscope(WORKLOAD, "upgrade-k8s");
    cmd.arg("--to").arg("1.34.2").args(args);
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_on_delete_control_plane_is_rolled_by_deleting_its_machines_one_at_a_time() {
    let fx = start(builtin("capi")).await;
    let before = settled_machines(&fx).await;
    kubectl_patch(
        &fx,
        "taloscontrolplanes",
        "capi-work-cp",
        r#"{"spec":{"rolloutStrategy":{"type":"OnDelete","rollingUpdate":null}}}"#,
    );

    let (code, stdout, stderr) = output(upgrade_k8s(&fx, &["--plan", "--output", "json"])).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let plan: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(plan["phases"][0]["onDelete"], true, "{stdout}");
    assert_eq!(plan["phases"][1]["onDelete"], false, "{stdout}");
    let (code, table, stderr) = output(upgrade_k8s(&fx, &["--plan"])).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        table.contains(
            "rolloutStrategy OnDelete: the provider replaces a Machine only once it is deleted"
        ),
        "{table}"
    );

    let (code, stdout, stderr) = output(upgrade_k8s(&fx, &["--yes", "--confirm", WORKLOAD])).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let deleted: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("deleted (OnDelete)"))
        .collect();
    assert_eq!(deleted.len(), 3, "{stdout}");
    let capi = fx.sim.capi().expect("capi");
    let after = capi.list("machines");
    assert_eq!(after.len(), 5, "{after:?}");
    assert!(
        object_names(&after).is_disjoint(&object_names(&before)),
        "{after:?}"
    );
    for m in &after {
        assert_eq!(m["spec"]["version"], "v1.34.2", "{m}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_cluster_is_refused_naming_what_pauses_it() {
    let fx = start(builtin("capi")).await;
    let before = settled_machines(&fx).await;
    kubectl_patch(
        &fx,
        "clusters.v1beta2.cluster.x-k8s.io",
        WORKLOAD,
        r#"{"spec":{"paused":true}}"#,
    );
    let tcp_before = fx
        .sim
        .capi()
        .expect("capi")
        .get("taloscontrolplanes", "capi-work-cp")
        .expect("tcp");

    let (code, stdout, stderr) = output(upgrade_k8s(&fx, &["--plan"])).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    let said = format!("{stdout}{stderr}");
    assert!(
        said.contains("Cluster default/capi-work has spec.paused: true"),
        "{said}"
    );
    let (code, stdout, stderr) = output(upgrade_k8s(&fx, &["--yes", "--confirm", WORKLOAD])).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    let capi = fx.sim.capi().expect("capi");
    assert_eq!(
        capi.get("taloscontrolplanes", "capi-work-cp").expect("tcp")["spec"],
        tcp_before["spec"],
        "nothing patched"
    );
    assert_eq!(object_names(&capi.list("machines")), object_names(&before));
}
