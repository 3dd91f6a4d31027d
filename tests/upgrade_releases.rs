//! Talos releases learned at run time, against the sim's OCI registry on loopback: the offered
//! targets listed without `--to`, a patch and the next minors the built-in table does not know
//! planned and run one minor at a time, the token flow and pagination followed, a mirror from
//! the cluster's machine config asked first; with the registry unreachable the built-in table
//! is used and the plan says so, and an unlisted version plans only with its acknowledgement.
mod upgrade_common;

use serde_json::Value;
use taloscope_sim::registry::{RegistrySim, RegistrySpec};
use upgrade_common::*;

const SCENARIO: &str = "talos-1.12";
const ENV: &str = "TALOSCOPE_RELEASES_REGISTRY";

/// Every stable installer tag of 1.12 to 1.12.15 and 1.13 to 1.13.9, then v1.14.0, a 1.15
/// pre-release and tags that are no versions.
fn installer_tags() -> Vec<String> {
    let mut tags: Vec<String> = (0..=15).map(|p| format!("v1.12.{p}")).collect();
    tags.extend((0..=9).map(|p| format!("v1.13.{p}")));
    tags.extend(["v1.14.0", "v1.15.0-alpha.0", "latest", "v1.13.0-rc.0"].map(String::from));
    tags
}

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("json: {e}\n{stdout}"))
}

fn offered(v: &Value) -> Vec<(String, String)> {
    v["offered"]
        .as_array()
        .expect("offered")
        .iter()
        .map(|o| {
            (
                o["version"].as_str().expect("version").to_string(),
                o["source"].as_str().expect("source").to_string(),
            )
        })
        .collect()
}

async fn upgrade(fx: &Fixture, registry: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let mut cmd = fx.taloscope(SCENARIO, "upgrade");
    cmd.env(ENV, registry).args(args);
    output(cmd).await
}

/// A loopback address nothing listens on.
fn closed_endpoint() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_releases_are_offered_planned_and_run_one_minor_at_a_time() {
    let fx = start(builtin(SCENARIO)).await;
    let tags = installer_tags();
    let tag_refs: Vec<&str> = tags.iter().map(String::as_str).collect();
    let registry = RegistrySim::start(RegistrySpec::installer(&tag_refs))
        .await
        .expect("registry");
    let endpoint = registry.endpoint();

    let (code, stdout, stderr) = upgrade(&fx, &endpoint, &["--plan", "--output", "json"]).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let listing = json(&stdout);
    assert_eq!(listing["running"], serde_json::json!(["v1.12.0"]));
    assert_eq!(listing["releases"]["source"], "registry");
    assert_eq!(listing["releases"]["registry"], endpoint.as_str());
    let offers = offered(&listing);
    assert_eq!(
        offers[0],
        ("v1.12.15".into(), "registry".into()),
        "{offers:?}"
    );
    assert_eq!(offers[1].0, "v1.12.14");
    assert_eq!(
        offers.last().cloned(),
        Some(("v1.13.9".into(), "registry".into())),
        "then the next minor's newest: {offers:?}"
    );
    assert!(
        offers
            .iter()
            .all(|(v, _)| !v.starts_with("v1.14") && !v.contains('-')),
        "one minor at a time, stable only: {offers:?}"
    );

    // The token flow: a 401, the realm, then every page with the token; pages of two tags.
    let requests = registry.requests();
    assert_eq!(requests[0].status, 401, "{requests:?}");
    assert!(requests[1].target.starts_with("/token?"), "{requests:?}");
    let pages: Vec<_> = requests
        .iter()
        .filter(|r| r.target.contains("/tags/list"))
        .collect();
    assert!(pages.len() > 10, "paginated by Link: {pages:?}");
    assert!(
        pages[1..].iter().all(|r| r.with_token && r.status == 200),
        "{pages:?}"
    );
    assert!(pages[2].target.contains("last="), "{pages:?}");

    let (code, stdout, stderr) = upgrade(
        &fx,
        &endpoint,
        &["--to", "v1.12.15", "--plan", "--output", "json"],
    )
    .await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let plan = json(&stdout);
    assert_eq!(plan["blocked"], false, "{plan}");
    assert_eq!(plan["releases"]["source"], "registry");
    assert_eq!(offered(&plan)[0].0, "v1.12.15");
    let listed = plan_guard(&plan, "listed_release");
    assert_eq!(listed["verdict"], "pass", "{listed}");
    assert!(
        listed["reason"]
            .as_str()
            .unwrap_or_default()
            .contains(&endpoint),
        "{listed}"
    );

    for target in ["v1.12.15", "v1.13.9", "v1.14.0"] {
        let (code, stdout, stderr) = upgrade(&fx, &endpoint, &confirmed(target, SCENARIO)).await;
        assert_eq!(code, Some(0), "to {target}: {stdout}\n{stderr}");
        let (code, stdout, _) = upgrade(&fx, &endpoint, &["--to", target, "--plan"]).await;
        assert_eq!(code, Some(0), "{stdout}");
        assert!(
            stdout.contains("already runs"),
            "every node on {target}: {stdout}"
        );
    }

    let (code, stdout, _) = upgrade(&fx, &endpoint, &["--plan", "--output", "json"]).await;
    assert_eq!(code, Some(0), "{stdout}");
    assert!(offered(&json(&stdout)).is_empty(), "{stdout}");
    let (code, stdout, _) = upgrade(
        &fx,
        &endpoint,
        &["--plan", "--pre-release", "--output", "json"],
    )
    .await;
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(
        offered(&json(&stdout)),
        [("v1.15.0-alpha.0".to_string(), "registry".to_string())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_registry_means_the_built_in_table_and_unlisted_needs_the_ack() {
    let fx = start(builtin(SCENARIO)).await;
    let closed = closed_endpoint();

    let (code, stdout, stderr) = upgrade(
        &fx,
        &closed,
        &["--to", "v1.12.11", "--plan", "--output", "json"],
    )
    .await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let plan = json(&stdout);
    assert_eq!(plan["releases"]["source"], "built-in", "{plan}");
    let reason = plan["releases"]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(closed.trim_start_matches("http://")),
        "{reason}"
    );
    let offers = offered(&plan);
    assert_eq!(offers[0], ("v1.12.11".into(), "built-in".into()));
    assert!(offers.iter().all(|(_, s)| s == "built-in"), "{offers:?}");

    let (code, stdout, _) = upgrade(&fx, &closed, &["--to", "v1.12.11", "--plan"]).await;
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains("releases from the built-in table"),
        "{stdout}"
    );

    let unlisted = ["--to", "v1.12.15", "--plan", "--output", "json"];
    let (code, stdout, _) = upgrade(&fx, &closed, &unlisted).await;
    assert_eq!(code, Some(1), "{stdout}");
    let plan = json(&stdout);
    let listed = plan_guard(&plan, "listed_release");
    assert_eq!(listed["verdict"], "warn", "{listed}");
    assert_eq!(listed["needs_ack"], "an unlisted Talos release");
    assert_eq!(listed["blocks"], true);
    assert!(
        listed["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("ghcr.io/siderolabs/installer:v1.12.15"),
        "names the image: {listed}"
    );

    let acked = [&unlisted[..], &["--ack", "an unlisted Talos release"]].concat();
    let (code, stdout, _) = upgrade(&fx, &closed, &acked).await;
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(json(&stdout)["blocked"], false);
    assert!(fx.sim.state().mutating_calls().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_machine_configs_mirror_is_asked_before_the_registry() {
    let fx = start(builtin(SCENARIO)).await;
    let mirror = RegistrySim::start(RegistrySpec::installer(&["v1.12.0", "v1.12.16"]).as_mirror())
        .await
        .expect("mirror");
    let machine_config = fx.dir.path().join("controlplane.yaml");
    std::fs::write(
        &machine_config,
        format!(
            "version: v1alpha1\nmachine:\n  type: controlplane\n---\napiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: ghcr.io\nendpoints:\n  - url: {}\n",
            mirror.endpoint()
        ),
    )
    .expect("machine config");
    let config = fx.dir.path().join("taloscope.yaml");
    std::fs::write(
        &config,
        format!(
            "clusters:\n  {SCENARIO}:\n    machine_configs:\n      controlplane: {}\n",
            machine_config.display()
        ),
    )
    .expect("config");
    let mut cmd = fx.taloscope(SCENARIO, "upgrade");
    cmd.env(ENV, closed_endpoint())
        .args(["--plan", "--output", "json", "--config"])
        .arg(&config);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let listing = json(&stdout);
    assert_eq!(listing["releases"]["registry"], mirror.endpoint().as_str());
    assert_eq!(offered(&listing)[0], ("v1.12.16".into(), "registry".into()));
    let requests = mirror.requests();
    assert!(
        requests
            .iter()
            .all(|r| r.target.contains("ns=ghcr.io") && r.status == 200),
        "{requests:?}"
    );
}

/// The `talos-1.14` scenario upgrades from 1.14 to a patch only the registry lists, and
/// `status` reads it as every other minor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_1_14_upgrades_to_a_patch_the_registry_lists() {
    const V114: &str = "talos-1.14";
    let fx = start(builtin(V114)).await;
    let registry = RegistrySim::start(RegistrySpec::installer(&["v1.14.0", "v1.14.1"]))
        .await
        .expect("registry");
    let endpoint = registry.endpoint();
    let mut cmd = fx.taloscope(V114, "upgrade");
    cmd.env(ENV, &endpoint).args(["--plan", "--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let listing = json(&stdout);
    assert_eq!(listing["running"], serde_json::json!(["v1.14.0"]));
    assert_eq!(
        offered(&listing),
        [("v1.14.1".to_string(), "registry".to_string())]
    );
    let mut cmd = fx.taloscope(V114, "upgrade");
    cmd.env(ENV, &endpoint).args(confirmed("v1.14.1", V114));
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let mut cmd = fx.taloscope(V114, "status");
    cmd.args(["--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let status = json(&stdout);
    let nodes = status["clusters"][0]["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 5);
    for n in nodes {
        assert_eq!(n["talos_version"], "v1.14.1", "{n}");
    }
}

/// Kubernetes releases learned at run time: a patch the built-in table does not know
/// (1.34.5; the table stops at 1.34.3) plans when the registry lists the API server image
/// `registry.k8s.io/kube-apiserver:v1.34.5`, and is refused with where the releases came from
/// when no registry answers or the registry does not list it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kubernetes_patch_the_registry_lists_plans() {
    const CLUSTER: &str = "healthy-112";
    let fx = start(builtin(CLUSTER)).await;
    let mut spec = RegistrySpec::installer(&["v1.12.0"]);
    spec.repositories.insert(
        "kube-apiserver".into(),
        [
            "v1.34.1",
            "v1.34.4",
            "v1.34.5",
            "v1.35.0-rc.0",
            "v1.34.6-alpha.0",
        ]
        .map(String::from)
        .to_vec(),
    );
    let registry = RegistrySim::start(spec).await.expect("registry");
    let plan = |to: &str, registry: &str| {
        let mut cmd = fx.taloscope(CLUSTER, "upgrade-k8s");
        cmd.env(ENV, registry)
            .args(["--to", to, "--plan", "--output", "json"]);
        output(cmd)
    };
    let path_guard = |stdout: &str| {
        let plan = json(stdout);
        plan_guard(&plan, "kubernetes_path").clone()
    };

    let (code, stdout, stderr) = plan("1.34.5", &registry.endpoint()).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let listed = json(&stdout);
    assert_eq!(listed["blocked"], false, "{listed}");
    assert_eq!(listed["releases"]["source"], "registry");
    assert_eq!(listed["releases"]["repository"], "kube-apiserver");
    let guard = path_guard(&stdout);
    assert_eq!(guard["verdict"], "pass", "{guard}");
    assert!(
        guard["reason"]
            .as_str()
            .is_some_and(|m| m.contains("releases listed by registry")),
        "{guard}"
    );

    for (to, from) in [
        ("1.34.5", "off".to_string()),
        ("1.34.6", registry.endpoint()),
    ] {
        let (code, stdout, _) = plan(to, &from).await;
        assert_eq!(code, Some(1), "{to} via {from}: {stdout}");
        let guard = path_guard(&stdout);
        assert_eq!(guard["verdict"], "fail", "{guard}");
        let message = guard["reason"].as_str().unwrap_or_default();
        assert!(
            message.contains("is not a known release")
                && message.contains(if from == "off" {
                    "releases from the built-in table"
                } else {
                    "releases listed by registry"
                }),
            "{to} via {from}: {message}"
        );
    }
    assert!(fx.sim.state().mutating_calls().is_empty());
}
