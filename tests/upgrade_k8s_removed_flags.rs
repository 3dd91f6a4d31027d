//! The removed-flags guard of `taloscope upgrade-k8s`, against the sim: a cluster whose
//! kube-apiserver runs with `--cloud-config` and the `AppArmor` feature gate (both removed in
//! Kubernetes 1.33) is refused a 1.32 -> 1.33 upgrade, by name, in `--plan` and in a run,
//! while a patch upgrade of it and the same upgrade of a cluster without them pass.
mod upgrade_common;

use taloscope_sim::Scenario;
use upgrade_common::*;

/// Two clusters on Talos 1.10 and Kubernetes 1.32: `flags` with the removed flags in its
/// machine configs, `clean` without.
fn scenario(dir: &std::path::Path) -> Scenario {
    let nodes = "    nodes:\n      - name: cp-1\n        role: controlplane\n      - name: cp-2\n        role: controlplane\n      - name: cp-3\n        role: controlplane\n      - name: w-1\n        role: worker\n";
    let common = "    talos_version: v1.10.7\n    kubernetes_version: v1.32.3\n";
    let text = format!(
        "clusters:\n  - name: flags\n{common}    extra_args:\n      kube-apiserver:\n        cloud-config: /etc/kubernetes/cloud.conf\n        feature-gates: AppArmor=true,Other=false\n{nodes}  - name: clean\n{common}{nodes}"
    );
    let file = dir.join("removed-flags.yaml");
    std::fs::write(&file, text).expect("write scenario");
    Scenario::from_file(&file).expect("scenario")
}

use upgrade_common::plan_guard as guard;

async fn plan_json(fx: &Fixture, context: &str, target: &str) -> (Option<i32>, serde_json::Value) {
    let mut cmd = fx.taloscope(context, "upgrade-k8s");
    cmd.args(["--to", target, "--plan", "--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    let plan = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    (code, plan)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_the_target_removes_fail_the_plan_by_name() {
    let dir = tempfile::tempdir().expect("dir");
    let fx = start(scenario(dir.path())).await;

    let (code, plan) = plan_json(&fx, "flags", "1.33.0").await;
    assert_eq!(code, Some(1), "{plan}");
    let g = guard(&plan, "removed_flags");
    assert_eq!(g["verdict"], "fail", "{g}");
    let reason = g["reason"].as_str().expect("reason");
    for named in [
        "cp-1 kube-apiserver flag --cloud-config",
        "cp-3 kube-apiserver feature gate AppArmor",
    ] {
        assert!(reason.contains(named), "{named} in {reason}");
    }
    assert!(!reason.contains("Other"), "{reason}");
    assert_eq!(plan["blocked"], true);

    // A run is refused before any node is touched.
    let mut cmd = fx.taloscope("flags", "upgrade-k8s");
    cmd.args(["--to", "1.33.0", "--yes", "--confirm", "flags"]);
    let (code, _, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        fx.sim.state().mutating_calls().is_empty(),
        "no node was called"
    );

    // Within the minor nothing is removed; without the flags the minor upgrade passes.
    let (code, plan) = plan_json(&fx, "flags", "1.32.4").await;
    assert_eq!(guard(&plan, "removed_flags")["verdict"], "pass", "{plan}");
    assert_eq!(code, Some(0), "{plan}");
    let (code, plan) = plan_json(&fx, "clean", "1.33.0").await;
    assert_eq!(guard(&plan, "removed_flags")["verdict"], "pass", "{plan}");
    assert_eq!(code, Some(0), "{plan}");
}
