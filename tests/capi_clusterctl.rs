//! The sim's `capi-clusterctl` scenario: the management cluster `clusterctl init` leaves, with
//! kubeadm's bootstrap and control-plane providers and a second infrastructure provider (AWS)
//! installed beside Talos's and OpenNebula's, so `controlplane.*`, `bootstrap.*` and
//! `infrastructure.*` prefer v1beta2 while the Talos and OpenNebula kinds are served in
//! v1alpha3 and v1beta1 only. `capi status` still lists the TalosControlPlane with its
//! replicas and each Machine's template, the CAPI-way Talos upgrade replaces every Machine
//! without one request refused by an admission webhook, and an in-place edit of a
//! TalosConfigTemplate is refused as the bootstrap provider's webhook refuses it.
mod capi_checks;
mod upgrade_common;

use serde_json::Value;
use upgrade_common::*;

const MGMT: &str = "admin@capi-mgmt";
const WORKLOAD: &str = "capi-work";

fn kubectl(fx: &Fixture, args: &[&str]) -> std::process::Output {
    std::process::Command::new("kubectl")
        .args(["--context", MGMT])
        .args(args)
        .env("KUBECONFIG", fx.sim.kubeconfig_path())
        .env("HOME", fx.dir.path())
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .expect("kubectl runs (scripts/test installs it)")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_lists_the_talos_control_plane_beside_the_kubeadm_providers() {
    let fx = start(builtin("capi-clusterctl")).await;
    settled_machines(&fx).await;
    let out = kubectl(
        &fx,
        &["get", "--raw", "/apis/controlplane.cluster.x-k8s.io"],
    );
    let group: Value = serde_json::from_slice(&out.stdout).expect("APIGroup");
    assert_eq!(group["preferredVersion"]["version"], "v1beta2", "{group}");

    let mut cmd = fx.taloscope(MGMT, "capi");
    cmd.args(["status", "--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let status: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let cluster = &status["clusters"][0];
    let cp = &cluster["controlPlane"];
    assert_eq!(cp["name"], "capi-work-cp", "{stdout}");
    assert_eq!(cp["replicas"], 3, "{stdout}");
    assert_eq!(cp["upToDate"], 3, "{stdout}");
    let machines = cluster["machines"].as_array().expect("machines");
    assert_eq!(machines.len(), 5, "{stdout}");
    // The ONEMachines are found in v1beta1 although the group prefers v1beta2: each Machine
    // names the template its ONEMachine was cloned from.
    for m in machines {
        assert!(
            !m["infrastructureTemplate"]
                .as_str()
                .unwrap_or_default()
                .is_empty(),
            "{m}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_capi_way_talos_upgrade_replaces_every_machine_unrefused() {
    let fx = start(builtin("capi-clusterctl")).await;
    let before = settled_machines(&fx).await;
    let config = fx.sim.opennebula().expect("OpenNebula sim").config_file();

    let mut cmd = fx.taloscope(WORKLOAD, "upgrade");
    cmd.args(["--to", "v1.12.0", "--plan", "--output", "json"])
        .arg("--config")
        .arg(&config);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let plan: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    for phase in plan["phases"].as_array().expect("phases") {
        // Only a new machine template and the reference to it: no talosVersion, no
        // TalosConfigTemplate edited.
        assert_eq!(
            phase["created"].as_array().map(Vec::len),
            Some(1),
            "{phase}"
        );
        assert_eq!(
            phase["repointed"].as_array().map(Vec::len),
            Some(1),
            "{phase}"
        );
        assert!(
            !phase["patch"].to_string().contains("talosVersion"),
            "{phase}"
        );
    }

    let mut cmd = fx.taloscope(WORKLOAD, "upgrade");
    cmd.args(confirmed("v1.12.0", WORKLOAD))
        .arg("--config")
        .arg(&config);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let capi = fx.sim.capi().expect("capi");
    capi_checks::assert_talos_templates_rolled(capi, "v1.12.0");
    let after = capi.list("machines");
    assert_eq!(after.len(), 5);
    assert!(
        object_names(&after).is_disjoint(&object_names(&before)),
        "{after:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_place_edit_of_a_talos_config_template_is_refused_and_logged() {
    let fx = start(builtin("capi-clusterctl")).await;
    let out = kubectl(
        &fx,
        &[
            "patch",
            "talosconfigtemplates.bootstrap.cluster.x-k8s.io",
            "capi-work-md-0",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"template":{"spec":{"talosVersion":"v1.12"}}}}"#,
        ],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "admission webhook \"vtalosconfigtemplate.cluster.x-k8s.io\" denied the request: TalosConfigTemplate.Spec is immutable"
        ),
        "{stderr}"
    );
    let capi = fx.sim.capi().expect("capi");
    let refused = capi.admission_refusals();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(
        (refused[0].kind.as_str(), refused[0].name.as_str()),
        ("TalosConfigTemplate", "capi-work-md-0")
    );
    let template = capi
        .get("talosconfigtemplates", "capi-work-md-0")
        .expect("template");
    assert_eq!(
        template["spec"]["template"]["spec"]["talosVersion"],
        "v1.11"
    );
    // A label is no spec change: admitted.
    let out = kubectl(
        &fx,
        &[
            "label",
            "talosconfigtemplates.bootstrap.cluster.x-k8s.io",
            "capi-work-md-0",
            "team=ops",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(capi.admission_refusals().len(), 1);
}
