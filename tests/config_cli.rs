//! `taloscope config show` and `config drift` as processes against the sim's `config-drift`
//! scenario: no secret is printed without --reveal (every kind the nodes hold, in YAML and
//! JSON), --reveal is written to the audit log, a reader context is refused naming context
//! and node, and drift names w-2's extra registry mirror and w-2.
mod upgrade_common;

use serde_json::Value;
use upgrade_common::*;

const CLUSTER: &str = "config-drift";

/// Where the sim's control planes hold their secrets (v1alpha1 document).
const SECRET_PATHS: &[&[&str]] = &[
    &["machine", "token"],
    &["machine", "ca", "key"],
    &["cluster", "token"],
    &["cluster", "secret"],
    &["cluster", "secretboxEncryptionSecret"],
    &["cluster", "ca", "key"],
    &["cluster", "aggregatorCA", "key"],
    &["cluster", "serviceAccount", "key"],
    &["cluster", "etcd", "ca", "key"],
];

fn at<'a>(doc: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(doc, |v, key| &v[*key])
}

fn show(fx: &Fixture, context: &str, extra: &[&str]) -> tokio::process::Command {
    let mut cmd = fx.taloscope(context, "config");
    cmd.args(["show", "--node", "cp-2"]).args(extra);
    cmd
}

fn audit_log(fx: &Fixture) -> String {
    std::fs::read_to_string(fx.state_dir().join("audit.log")).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_never_prints_a_secret_without_reveal() {
    let fx = start(builtin(CLUSTER)).await;

    let (code, plain_yaml, stderr) = output(show(&fx, CLUSTER, &[])).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(plain_yaml.contains("hostname: cp-2"), "{plain_yaml}");
    assert!(stderr.contains("secrets redacted"), "{stderr}");
    let (code, plain_json, _) = output(show(&fx, CLUSTER, &["--output", "json"])).await;
    assert_eq!(code, Some(0));
    assert_eq!(audit_log(&fx), "", "nothing revealed, nothing audited");

    let (code, revealed_json, stderr) =
        output(show(&fx, CLUSTER, &["--reveal", "--output", "json"])).await;
    assert_eq!(code, Some(0), "{stderr}");
    let revealed: Value = serde_json::from_str(&revealed_json).expect("json");
    assert_eq!(revealed["revealed"], true);
    let plain: Value = serde_json::from_str(&plain_json).expect("json");
    assert_eq!(plain["cluster"], CLUSTER);
    assert_eq!(plain["node"], "cp-2");
    assert_eq!(plain["revealed"], false);
    assert_eq!(plain["redacted"], SECRET_PATHS.len());
    assert_eq!(plain["documents"][0]["kind"], "v1alpha1");
    let revealed_doc = &revealed["documents"][0]["config"];
    let plain_doc = &plain["documents"][0]["config"];
    for path in SECRET_PATHS {
        let secret = at(revealed_doc, path)
            .as_str()
            .unwrap_or_else(|| panic!("{path:?} revealed in {revealed_doc}"));
        assert!(secret.len() >= 8, "{path:?}: {secret}");
        assert!(!plain_yaml.contains(secret), "{path:?} printed in YAML");
        assert!(!plain_json.contains(secret), "{path:?} printed in JSON");
        let shown = at(plain_doc, path).as_str().expect("redacted text");
        assert!(shown.starts_with("<redacted sha256:"), "{path:?}: {shown}");
    }
    // What is not secret stays readable.
    assert_eq!(
        at(plain_doc, &["machine", "ca", "crt"]),
        at(revealed_doc, &["machine", "ca", "crt"])
    );

    let audit = audit_log(&fx);
    assert_eq!(audit.lines().count(), 1, "{audit}");
    assert!(
        audit.contains(&format!("cluster=\"{CLUSTER}\""))
            && audit.contains("config show --reveal: node cp-2"),
        "{audit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_context_is_refused_naming_context_and_node() {
    let fx = start(builtin(CLUSTER)).await;
    let reader = format!("{CLUSTER}-reader");
    let (code, stdout, stderr) = output(show(&fx, &reader, &[])).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains(&format!("context \"{reader}\""))
            && stderr.contains("node cp-2")
            && stderr.contains("needs os:admin"),
        "{stderr}"
    );
    let mut drift = fx.taloscope(&reader, "config");
    drift.arg("drift");
    let (code, _, stderr) = output(drift).await;
    assert_eq!(code, Some(1));
    assert!(stderr.contains("needs os:admin"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_names_the_extra_mirror_and_the_worker() {
    let fx = start(builtin(CLUSTER)).await;
    let mut cmd = fx.taloscope(CLUSTER, "config");
    cmd.args(["drift", "--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "drift found: {stdout}\n{stderr}");
    let report: Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(report["cluster"], CLUSTER);
    assert_eq!(report["unread"], serde_json::json!([]));
    let role = |name: &str| {
        report["roles"]
            .as_array()
            .and_then(|roles| roles.iter().find(|r| r["role"] == name))
            .unwrap_or_else(|| panic!("role {name} in {report}"))
    };
    let control_planes = role("controlplane");
    assert_eq!(
        control_planes["nodes"],
        serde_json::json!(["cp-1", "cp-2", "cp-3"])
    );
    assert_eq!(control_planes["drift"], serde_json::json!([]), "{report}");
    let workers = role("worker");
    let drift = workers["drift"].as_array().expect("drift");
    assert_eq!(drift.len(), 1, "{report}");
    assert_eq!(drift[0]["section"], "machine.registries");
    assert_eq!(
        drift[0]["path"],
        "machine.registries.mirrors.\"ghcr.io\".endpoints"
    );
    let holders = |nodes: Value| {
        drift[0]["values"]
            .as_array()
            .and_then(|vs| vs.iter().find(|v| v["nodes"] == nodes))
            .unwrap_or_else(|| panic!("{nodes} in {}", drift[0]))
            .clone()
    };
    assert_eq!(
        holders(serde_json::json!(["w-2"]))["value"],
        "[\"https://127.0.0.1:5443\"]"
    );
    assert_eq!(holders(serde_json::json!(["w-1"]))["value"], Value::Null);

    let mut table = fx.taloscope(CLUSTER, "config");
    table.arg("drift");
    let (code, text, _) = output(table).await;
    assert_eq!(code, Some(1));
    assert!(text.contains("worker (w-1, w-2): 1 path differs"), "{text}");
    assert!(
        text.contains("controlplane (cp-1, cp-2, cp-3): no drift"),
        "{text}"
    );
    assert!(
        text.contains("    w-2: [\"https://127.0.0.1:5443\"]"),
        "{text}"
    );
}
