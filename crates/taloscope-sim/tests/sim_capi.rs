//! The `capi` scenarios: kubectl (a real client) lists, patches and scales the CAPI objects of
//! the management cluster in v1beta1 and v1beta2, the controller scales and rolls machines
//! with etcd healthy at every poll, and each stuck fault shows and clears with its fix.
mod capi_stuck;
mod sim_common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;
use sim_common::{Sim, TalosConfig, machine, start_builtin, wait_for, with_meta};
use taloscope_proto::machine::{
    EtcdMemberListRequest, EtcdRemoveMemberByIdRequest, RebootRequest, ServiceRestartRequest,
};

const MGMT: &str = "admin@capi-mgmt";
const LIMIT: Duration = Duration::from_secs(60);
const TIME_SCALE: f64 = 25.0;

/// kubectl `args` against `context` of the sim, as it ended.
fn kubectl_at(sim: &Sim, home: &Path, context: &str, args: &[&str]) -> std::process::Output {
    Command::new("kubectl")
        .args(["--context", context])
        .args(args)
        .env("KUBECONFIG", sim.fleet.kubeconfig_path())
        .env("HOME", home)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .expect("kubectl runs (scripts/test installs it)")
}

fn kubectl(sim: &Sim, home: &Path, args: &[&str]) -> String {
    let out = kubectl_at(sim, home, MGMT, args);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "kubectl {args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn capi(sim: &Sim) -> &taloscope_sim::capi::CapiSim {
    sim.fleet
        .capi()
        .expect("the capi scenario has a management cluster")
}

/// The Machines of the control plane (`true`) or of the MachineDeployment (`false`).
fn role_machines(sim: &Sim, control_plane: bool) -> Vec<Value> {
    capi(sim)
        .list("machines")
        .into_iter()
        .filter(|m| {
            m["metadata"]["labels"]
                .get("cluster.x-k8s.io/control-plane")
                .is_some()
                == control_plane
        })
        .collect()
}

fn control_planes(sim: &Sim) -> Vec<Value> {
    role_machines(sim, true)
}

fn workers(sim: &Sim) -> Vec<Value> {
    role_machines(sim, false)
}

fn ready(m: &Value) -> bool {
    m["status"]["phase"] == "Running"
        && m["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// etcd of the workload cluster has a healthy quorum.
fn etcd_healthy(sim: &Sim) -> bool {
    let state = sim.fleet.state();
    let cluster = state.cluster("capi-work").expect("workload");
    let etcd = cluster.etcd();
    let up = etcd
        .members
        .iter()
        .filter(|&&m| cluster.member_healthy(m))
        .count();
    up > etcd.members.len() / 2
}

fn tcp_condition(sim: &Sim, kind: &str) -> Option<Value> {
    let tcp = capi(sim).get("taloscontrolplanes", "capi-work-cp")?;
    tcp["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
        .cloned()
}

/// Waits for the TalosControlPlane's etcd condition to have `status`; returns its message.
async fn etcd_condition(sim: &Sim, status: &str) -> String {
    wait_for(
        &format!("EtcdClusterHealthyCondition {status}"),
        LIMIT,
        || {
            let c = tcp_condition(sim, "EtcdClusterHealthyCondition");
            async move {
                c.filter(|c| c["status"] == status)
                    .map(|c| c["message"].as_str().unwrap_or_default().to_string())
            }
        },
    )
    .await
}

/// Waits until `n` control planes run `version`, all Ready, checking etcd at every poll.
async fn wait_control_planes(sim: &Sim, n: usize, version: &str, max_seen: &mut usize) {
    wait_rolled(sim, true, n, version, None, max_seen).await;
}

/// Waits until `n` Machines of a role run Kubernetes `version` (and Talos `os`, when given), all
/// Ready and counted so by their owner's status, checking etcd's quorum at every poll and
/// keeping the most Machines seen at once.
async fn wait_rolled(
    sim: &Sim,
    control_plane: bool,
    n: usize,
    version: &str,
    os: Option<&str>,
    max_seen: &mut usize,
) {
    let owner = if control_plane {
        ("taloscontrolplanes", "capi-work-cp")
    } else {
        ("machinedeployments", "capi-work-md-0")
    };
    let os_image = os.map(|v| format!("Talos ({v})"));
    wait_for(
        &format!("{n} ready {} on {version}", owner.1),
        LIMIT,
        || {
            assert!(etcd_healthy(sim), "etcd lost quorum");
            let machines = role_machines(sim, control_plane);
            *max_seen = (*max_seen).max(machines.len());
            let done = machines.len() == n
                && machines.iter().all(|m| {
                    ready(m)
                        && m["spec"]["version"] == version
                        && os_image
                            .as_ref()
                            .is_none_or(|os| m["status"]["nodeInfo"]["osImage"] == os.as_str())
                })
                && capi(sim)
                    .get(owner.0, owner.1)
                    .is_some_and(|t| t["status"]["readyReplicas"] == n);
            async move { done.then_some(()) }
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_gets_patches_and_scales_the_capi_objects_in_both_versions() {
    let sim = start_builtin("capi", TIME_SCALE).await;
    let home = tempfile::tempdir().expect("home");
    let h = home.path();
    wait_for("machines running", LIMIT, || {
        let all = capi(&sim).list("machines");
        async move { (all.len() == 5 && all.iter().all(ready)).then_some(()) }
    })
    .await;
    let text = kubectl(
        &sim,
        h,
        &[
            "get",
            "taloscontrolplanes,machinedeployments,machines",
            "-A",
        ],
    );
    assert!(text.contains("capi-work-cp"), "{text}");
    assert!(text.contains("capi-work-md-0"), "{text}");
    assert_eq!(text.matches("Running").count(), 5, "{text}");
    let crd = kubectl(
        &sim,
        h,
        &[
            "get",
            "crd",
            "taloscontrolplanes.controlplane.cluster.x-k8s.io",
            "-o",
            "json",
        ],
    );
    let crd: Value = serde_json::from_str(&crd).expect("crd json");
    assert_eq!(crd["spec"]["names"]["shortNames"][0], "tcp");
    let old = kubectl(
        &sim,
        h,
        &[
            "get",
            "machines.v1beta1.cluster.x-k8s.io",
            "-A",
            "-o",
            "json",
        ],
    );
    let old: Value = serde_json::from_str(&old).expect("v1beta1 json");
    assert_eq!(old["items"][0]["apiVersion"], "cluster.x-k8s.io/v1beta1");
    assert_eq!(old["items"][0]["status"]["nodeRef"]["kind"], "Node");
    assert_eq!(
        old["items"][0]["status"]["v1beta2"]["conditions"]
            .as_array()
            .map(|c| !c.is_empty()),
        Some(true)
    );
    let new = kubectl(
        &sim,
        h,
        &[
            "get",
            "md.v1beta2.cluster.x-k8s.io",
            "capi-work-md-0",
            "-o",
            "json",
        ],
    );
    let new: Value = serde_json::from_str(&new).expect("v1beta2 json");
    assert_eq!(new["status"]["upToDateReplicas"], 2);
    // A JSON patch through the v1beta1 URL lands in the stored v1beta2 object.
    kubectl(
        &sim,
        h,
        &[
            "patch",
            "machinedeployments.v1beta1.cluster.x-k8s.io",
            "capi-work-md-0",
            "--type",
            "json",
            "-p",
            r#"[{"op":"add","path":"/metadata/annotations","value":{"owner":"ops"}}]"#,
        ],
    );
    assert_eq!(
        capi(&sim)
            .get("machinedeployments", "capi-work-md-0")
            .expect("md")["metadata"]["annotations"]["owner"],
        "ops"
    );
    kubectl(
        &sim,
        h,
        &[
            "scale",
            "machinedeployment",
            "capi-work-md-0",
            "--replicas=3",
        ],
    );
    wait_for("3 ready workers", LIMIT, || {
        let w = workers(&sim);
        let kube_ready = sim.fleet.state().cluster("capi-work").is_some_and(|c| {
            c.nodes()
                .iter()
                .filter(|n| n.status().ready && n.role() == taloscope_sim::NodeRole::Worker)
                .count()
                == 3
        });
        async move { (w.len() == 3 && w.iter().all(ready) && kube_ready).then_some(()) }
    })
    .await;
    wait_for("the talosconfig Secret names 3 endpoints", LIMIT, || {
        let config = capi(&sim)
            .get("secrets", "capi-work-talosconfig")
            .and_then(|s| s["data"]["talosconfig"].as_str().map(String::from))
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
            .and_then(|t| serde_saphyr::from_str::<TalosConfig>(&String::from_utf8_lossy(&t)).ok());
        let three = config.is_some_and(|c| c.contexts["capi-work"].endpoints.len() == 3);
        async move { three.then_some(()) }
    })
    .await;
    let secret = kubectl(
        &sim,
        h,
        &[
            "get",
            "secret",
            "capi-work-kubeconfig",
            "-o",
            "jsonpath={.data.value}",
        ],
    );
    assert!(!secret.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_planes_scale_3_5_3_and_roll_a_version_one_at_a_time_with_etcd_healthy() {
    let sim = start_builtin("capi", TIME_SCALE).await;
    let home = tempfile::tempdir().expect("home");
    let h = home.path();
    let mut seen = 0;
    wait_control_planes(&sim, 3, "v1.34.1", &mut seen).await;
    kubectl(&sim, h, &["scale", "tcp", "capi-work-cp", "--replicas=5"]);
    wait_control_planes(&sim, 5, "v1.34.1", &mut seen).await;
    assert_eq!(
        sim.fleet
            .state()
            .cluster("capi-work")
            .expect("work")
            .etcd()
            .members
            .len(),
        5
    );
    kubectl(
        &sim,
        h,
        &[
            "patch",
            "taloscontrolplane",
            "capi-work-cp",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"replicas":3}}"#,
        ],
    );
    wait_control_planes(&sim, 3, "v1.34.1", &mut seen).await;
    assert_eq!(
        sim.fleet
            .state()
            .cluster("capi-work")
            .expect("work")
            .etcd()
            .members
            .len(),
        3
    );
    seen = 0;
    kubectl(
        &sim,
        h,
        &[
            "patch",
            "taloscontrolplane",
            "capi-work-cp",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"version":"v1.34.2"}}"#,
        ],
    );
    wait_for("rollout starts", LIMIT, || {
        let c = tcp_condition(&sim, "MachinesSpecUpToDate");
        async move {
            c.filter(|c| c["status"] == "False" && c["reason"] == "RollingUpdateInProgress")
                .map(|_| ())
        }
    })
    .await;
    wait_control_planes(&sim, 3, "v1.34.2", &mut seen).await;
    assert_eq!(seen, 4, "maxSurge 1: never more than 4 control planes");
    // The bootstrap provider's talosconfig Secret names the new control planes: etcd's
    // members, listed through it, are the Machines' nodes.
    let secret = kubectl(
        &sim,
        h,
        &[
            "get",
            "secret",
            "capi-work-talosconfig",
            "-o",
            "jsonpath={.data.talosconfig}",
        ],
    );
    let text = base64::engine::general_purpose::STANDARD
        .decode(secret.trim())
        .expect("base64");
    let config: TalosConfig =
        serde_saphyr::from_str(&String::from_utf8_lossy(&text)).expect("talosconfig");
    let ctx = config.contexts["capi-work"].clone();
    assert_eq!(ctx.endpoints.len(), 3, "{:?}", ctx.endpoints);
    let members = machine(&ctx, &ctx.endpoints[0])
        .await
        .etcd_member_list(EtcdMemberListRequest { query_local: false })
        .await
        .expect("member list")
        .into_inner();
    let mut hostnames: Vec<String> = members.messages[0]
        .members
        .iter()
        .map(|m| m.hostname.clone())
        .collect();
    let mut nodes: Vec<String> = control_planes(&sim)
        .iter()
        .filter_map(|m| m["status"]["nodeRef"]["name"].as_str().map(String::from))
        .collect();
    hostnames.sort();
    nodes.sort();
    assert_eq!(hostnames, nodes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copied_template_rolls_talos_and_a_worker_version_rolls_the_machine_deployment() {
    let sim = start_builtin("capi", TIME_SCALE).await;
    let home = tempfile::tempdir().expect("home");
    let h = home.path();
    let mut seen = 0;
    wait_control_planes(&sim, 3, "v1.34.1", &mut seen).await;
    let copy = home.path().join("template.json");
    std::fs::write(
        &copy,
        r#"{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "ONEMachineTemplate",
            "metadata": {"name": "capi-work-cp-v1-12-0", "namespace": "default"},
            "spec": {"template": {"spec": {"templateName": "talos-capi-work-controlplane-v1.12.0"}}}}"#,
    )
    .expect("write template");
    // The sim serves no OpenAPI documents, so kubectl validates nothing client-side.
    kubectl(
        &sim,
        h,
        &["create", "--validate=false", "-f", &copy.to_string_lossy()],
    );
    kubectl(
        &sim,
        h,
        &[
            "patch",
            "tcp",
            "capi-work-cp",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"infrastructureTemplate":{"name":"capi-work-cp-v1-12-0"}}}"#,
        ],
    );
    seen = 0;
    wait_rolled(&sim, true, 3, "v1.34.1", Some("v1.12.0"), &mut seen).await;
    assert_eq!(seen, 4, "maxSurge 1: never more than 4 control planes");
    seen = 0;
    kubectl(
        &sim,
        h,
        &[
            "patch",
            "machinedeployments.v1beta1.cluster.x-k8s.io",
            "capi-work-md-0",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"template":{"spec":{"version":"v1.34.2"}}}}"#,
        ],
    );
    wait_rolled(&sim, false, 2, "v1.34.2", None, &mut seen).await;
    assert_eq!(
        seen, 3,
        "maxSurge 1, maxUnavailable 0: never more than 3 workers"
    );
    let md = capi(&sim)
        .get("machinedeployments", "capi-work-md-0")
        .expect("md");
    assert_eq!(md["status"]["upToDateReplicas"], 2);
    let up_to_date = |m: &Value| {
        m["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "UpToDate" && c["status"] == "True")
        })
    };
    assert!(capi(&sim).list("machines").iter().all(up_to_date));
    wait_for("the old MachineSet deleted", LIMIT, || {
        let sets = capi(&sim).list("machinesets").len();
        async move { (sets == 1).then_some(()) }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_scaled_down_while_booting_never_join_the_workload_cluster() {
    let sim = start_builtin("capi", TIME_SCALE).await;
    let home = tempfile::tempdir().expect("home");
    let h = home.path();
    let mut seen = 0;
    wait_rolled(&sim, false, 2, "v1.34.1", None, &mut seen).await;
    kubectl(&sim, h, &["scale", "md", "capi-work-md-0", "--replicas=4"]);
    wait_for("4 worker Machines", LIMIT, || {
        let n = workers(&sim).len();
        async move { (n == 4).then_some(()) }
    })
    .await;
    kubectl(&sim, h, &["scale", "md", "capi-work-md-0", "--replicas=2"]);
    wait_for("the booting VMs terminated", LIMIT, || {
        let pending = capi(&sim).pending_releases();
        let machines = workers(&sim);
        let done = pending == 0 && machines.len() == 2 && machines.iter().all(ready);
        async move { done.then_some(()) }
    })
    .await;
    let nodes = Command::new("kubectl")
        .args(["--context", "admin@capi-work", "get", "nodes", "-o", "name"])
        .env("KUBECONFIG", sim.fleet.kubeconfig_path())
        .env("HOME", h)
        .output()
        .expect("kubectl runs");
    let names = String::from_utf8_lossy(&nodes.stdout).to_string();
    assert_eq!(names.lines().count(), 5, "{names}");
}

/// A Machine's deletion as cluster-api's machine controller runs it (machine_controller.go
/// `reconcileDelete`): a DELETE leaves the Machine with its `deletionTimestamp` and the
/// `machine.cluster.x-k8s.io` finalizer; its Node is cordoned and drained, and while a
/// PodDisruptionBudget refuses the evictions it stays, `Deleting` with reason `DrainingNode`
/// naming the pods; once the budget allows, the Machine, its VM and its node go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_machine_drains_its_node_and_waits_on_a_disruption_budget() {
    let sim = start_builtin("capi", TIME_SCALE).await;
    let home = tempfile::tempdir().expect("home");
    let h = home.path();
    let mut seen = 0;
    wait_rolled(&sim, false, 2, "v1.34.1", None, &mut seen).await;
    let workload = sim.fleet.kube_api(1).expect("the workload's API");
    // Two pods per worker, none of which may go.
    workload.set_disruption_budget(Some(4));
    let victim = workers(&sim)[0]["metadata"]["name"]
        .as_str()
        .expect("a name")
        .to_string();
    let held = capi(&sim).get("machines", &victim).expect("the Machine");
    assert_eq!(
        held["metadata"]["finalizers"],
        serde_json::json!(["machine.cluster.x-k8s.io"]),
        "{held}"
    );
    kubectl(&sim, h, &["delete", "machine", &victim, "--wait=false"]);
    let deleting = wait_for("the Machine draining", LIMIT, || {
        let m = capi(&sim).get("machines", &victim);
        async move {
            let m = m?;
            let conditions = m["status"]["conditions"].as_array()?;
            let draining = conditions.iter().any(|c| {
                c["type"] == "Deleting" && c["status"] == "True" && c["reason"] == "DrainingNode"
            });
            draining.then_some(m)
        }
    })
    .await;
    assert!(
        !deleting["metadata"]["deletionTimestamp"].is_null(),
        "{deleting}"
    );
    assert_eq!(deleting["status"]["phase"], "Deleting");
    assert!(deleting["status"]["deletion"]["nodeDrainStartTime"].is_string());
    let message = deleting["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Deleting"))
        .and_then(|c| c["message"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(
        message.starts_with("Drain not completed yet")
            && message.contains("* Pod default/web-")
            && message.contains("disruption budget"),
        "{message}"
    );
    assert!(
        workload.actions().iter().any(
            |a| a.node == victim && a.kind == taloscope_sim::kube_api::KubeActionKind::Cordoned
        ),
        "the node is cordoned first"
    );
    assert!(
        sim.fleet
            .state()
            .cluster("capi-work")
            .is_some_and(|c| c.node(&victim).is_some()),
        "the node stays while the drain waits"
    );
    workload.set_disruption_budget(None);
    wait_for("the Machine and its node gone", LIMIT, || {
        let machine = capi(&sim).get("machines", &victim);
        // The VM terminated and its node powered off for good.
        let node_off = sim
            .fleet
            .state()
            .cluster("capi-work")
            .and_then(|c| c.node(&victim).map(|n| !n.status().up))
            .unwrap_or(true);
        let released = capi(&sim).pending_releases() == 0;
        async move { (machine.is_none() && node_off && released).then_some(()) }
    })
    .await;
    assert!(
        workload.actions().iter().any(|a| a.node == victim
            && matches!(
                a.kind,
                taloscope_sim::kube_api::KubeActionKind::Evicted { .. }
            )),
        "its pods were evicted"
    );
}
