//! Real Talos at each supported minor (the sim's `talos-1.10` … `talos-1.13` scenarios: the
//! healthy shape of that release, a legacy Upgrade that pulls before it answers, the machine
//! config as a mapping up to 1.11, bootstrap manifests never updated, static pods with
//! `talos.dev/config-version`): `taloscope upgrade --to <next minor> --yes` completes with the
//! control planes one at a time, `upgrade-k8s --to <next patch> --yes` leaves every component,
//! kube-proxy and every kubelet on the target, and `status` agrees. On the legacy-Upgrade
//! minors the first node's installer pull takes longer in real time than the 5 s call timeout
//! the Upgrade call once ran under.
mod upgrade_common;

use std::time::{Duration, Instant};

use taloscope::talos::{ImageNamespace, TalosClient};
use upgrade_common::*;

/// Real time the first node's installer pull takes: longer than the 5 s call timeout the legacy
/// Upgrade ran under (talosctl sets no deadline there; v1alpha1_server.go pulls before the ack).
const SLOW_PULL: Duration = Duration::from_secs(6);
const OLD_CALL_TIMEOUT: Duration = Duration::from_secs(5);

fn cluster<'a>(status: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    status["clusters"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("{name} in {status}"))
}

/// `v1.34.1` → `1.34.2`.
fn next_patch(version: &str) -> String {
    let v = version.trim_start_matches('v');
    let mut parts: Vec<u64> = v
        .split(['.', '-'])
        .take(3)
        .map(|p| p.parse().expect("numeric version"))
        .collect();
    parts[2] += 1;
    format!("{}.{}.{}", parts[0], parts[1], parts[2])
}

/// The Talos upgrade to `talos_target` (when given), then the Kubernetes upgrade to the next
/// patch, each checked against `status`.
async fn upgrades_complete(scenario: &str, talos_target: Option<&str>) {
    let fx = start(builtin(scenario)).await;
    if let Some(target) = talos_target {
        let (code, stdout, stderr, took) =
            upgrade_with_a_slow_first_pull(&fx, scenario, target).await;
        assert_eq!(code, Some(0), "{stdout}\n{stderr}");
        assert!(
            took > OLD_CALL_TIMEOUT,
            "the first node's pull alone takes {SLOW_PULL:?}, the run took {took:?}"
        );
        assert_control_planes_one_at_a_time(&fx, scenario);
        let status = status_json(&fx, scenario).await;
        for n in cluster(&status, scenario)["nodes"]
            .as_array()
            .expect("nodes")
        {
            assert_eq!(n["talos_version"], target, "{n}");
        }
    }

    let status = status_json(&fx, scenario).await;
    let running = cluster(&status, scenario)["kubernetes"]["server_version"]
        .as_str()
        .expect("server version")
        .to_string();
    let k8s_target = next_patch(&running);
    let mut cmd = fx.taloscope(scenario, "upgrade-k8s");
    cmd.args(confirmed(&k8s_target, scenario));
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");

    let status = status_json(&fx, scenario).await;
    let c = cluster(&status, scenario);
    let want = format!("v{k8s_target}");
    let kube = &c["kubernetes"];
    assert_eq!(kube["server_version"], want.as_str(), "{kube}");
    assert_eq!(kube["kube_proxy_version"], want.as_str(), "{kube}");
    for component in kube["components"].as_array().expect("components") {
        assert_eq!(component["version"], want.as_str(), "{component}");
        assert_eq!(component["ready"], true, "{component}");
    }
    for n in c["nodes"].as_array().expect("nodes") {
        assert_eq!(n["kubelet_version"], want.as_str(), "{n}");
    }
}

/// `taloscope upgrade --to target --yes` with the installer not yet on the plan's first node
/// and a pull there of [`SLOW_PULL`] real time; every other node has it already (pulled with
/// `MachineService/ImagePull` into the system namespace, as `talosctl image pull --namespace
/// system`), so only that pull is slow. The exit code, output and the run's real time.
async fn upgrade_with_a_slow_first_pull(
    fx: &Fixture,
    scenario: &str,
    target: &str,
) -> (Option<i32>, String, String, Duration) {
    let mut cmd = fx.taloscope(scenario, "upgrade");
    cmd.args(["--to", target, "--plan", "--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let plan: serde_json::Value = serde_json::from_str(&stdout).expect("plan json");
    let addresses: Vec<String> = plan["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["address"].as_str().expect("address").to_string())
        .collect();
    let installer = format!("ghcr.io/siderolabs/installer:{target}");
    let cluster = fx.cluster(scenario);
    let talos = TalosClient::new(cluster.talos.as_ref().expect("talos"), fast()).expect("client");
    for address in &addresses[1..] {
        talos
            .machine_image_pull(address, &installer, ImageNamespace::System, LIMIT)
            .await
            .unwrap_or_else(|e| panic!("pre-pull on {address}: {e}"));
    }

    let state = fx.sim.state();
    let sim_cluster = state.cluster(scenario).expect("sim cluster");
    let usual = sim_cluster.image_pull_ms();
    let slow_ms = SLOW_PULL.as_secs_f64() * TIME_SCALE * 1000.0;
    sim_cluster.set_image_pull_ms(slow_ms as u64);
    let started = Instant::now();
    let mut cmd = fx.taloscope(scenario, "upgrade");
    cmd.args(confirmed(target, scenario));
    let (code, stdout, stderr) = output(cmd).await;
    let took = started.elapsed();
    sim_cluster.set_image_pull_ms(usual);
    (code, stdout, stderr, took)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_1_10_upgrades_to_1_11_and_kubernetes_to_the_next_patch() {
    upgrades_complete("talos-1.10", Some("v1.11.0")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_1_11_upgrades_to_1_12_and_kubernetes_to_the_next_patch() {
    upgrades_complete("talos-1.11", Some("v1.12.0")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_1_12_upgrades_to_1_13_and_kubernetes_to_the_next_patch() {
    upgrades_complete("talos-1.12", Some("v1.13.0")).await;
}

/// 1.13 is the newest minor: no next one to upgrade to; the Kubernetes upgrade still runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_1_13_upgrades_kubernetes_to_the_next_patch() {
    upgrades_complete("talos-1.13", None).await;
}

#[test]
fn next_patch_of_a_version() {
    assert_eq!(next_patch("v1.34.1"), "1.34.2");
    assert_eq!(next_patch("1.35.0"), "1.35.1");
}
