//! `taloscope contexts` end to end: the real binary on the discovery fixtures,
//! with its environment set on the child only and HOME pointed at an empty
//! temporary directory, so the user's own files are never read.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/discovery")
        .join(name)
}

fn join(files: &[&str]) -> String {
    files
        .iter()
        .map(|f| fixture(f).display().to_string())
        .collect::<Vec<_>>()
        .join(":")
}

/// Runs `taloscope contexts ARGS` with the given KUBECONFIG / TALOSCONFIG lists.
fn contexts(kube: &[&str], talos: &[&str], config: &Path, args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_taloscope"))
        .arg("contexts")
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("TALOSCOPE_STATE_DIR", home.path().join("state"))
        .env("TALOSCOPE_CONFIG", config)
        .env("KUBECONFIG", join(kube))
        .env("TALOSCONFIG", join(talos))
        .output()
        .unwrap();
    drop(home);
    output
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn pairs_by_every_rule_and_reports_the_broken_file() {
    let output = contexts(
        &["a.yaml", "b.yaml"],
        &["c.yaml", "broken.yaml"],
        &fixture("taloscope.yaml"),
        &["--output", "json"],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let json = json_of(&output);

    let clusters = json["clusters"].as_array().unwrap();
    let summary: Vec<(&str, Value, Value)> = clusters
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["talos_context"].clone(),
                c["kube_context"].clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            // admin@<talos context>
            ("alpha", json!("alpha"), json!("admin@alpha")),
            // kube cluster name = talos context name
            ("bravo", json!("bravo"), json!("ops-bravo")),
            // kube server host is one of the talos nodes
            ("charlie", json!("charlie"), json!("lab")),
            // Talos-only
            ("delta", json!("delta"), Value::Null),
            // Kubernetes-only
            ("kube-only", Value::Null, json!("kube-only")),
            // explicit mapping in taloscope.yaml
            ("production", json!("echo"), json!("prod-k8s")),
        ]
    );

    // a.yaml comes first: its admin@alpha and its cluster "bravo" win.
    assert_eq!(
        clusters[0]["kube_server"],
        json!("https://127.0.0.111:6443")
    );
    assert_eq!(clusters[1]["kube_server"], json!("https://127.0.0.21:6443"));
    assert_eq!(clusters[0]["endpoints"], json!(["127.0.0.11"]));
    assert_eq!(clusters[0]["nodes"], json!(["127.0.0.11", "127.0.0.12"]));
    assert_eq!(clusters[2]["endpoints"], json!(["127.0.0.31:50000"]));
    // legacy `target:` folded into endpoints
    assert_eq!(clusters[3]["endpoints"], json!(["127.0.0.41"]));
    assert_eq!(clusters[3]["kube_server"], Value::Null);
    assert_eq!(clusters[4]["endpoints"], json!([]));
    assert_eq!(clusters[4]["nodes"], json!([]));

    let errors = json["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let error = &errors[0];
    assert_eq!(
        error["file"],
        json!(fixture("broken.yaml").display().to_string())
    );
    assert_eq!(error["context"], Value::Null);
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("line 5"), "{message}");

    // The exact key order of the contract, and no credentials anywhere.
    let text = String::from_utf8(output.stdout.clone()).unwrap();
    let keys = [
        "\"name\"",
        "\"talos_context\"",
        "\"kube_context\"",
        "\"endpoints\"",
        "\"nodes\"",
        "\"kube_server\"",
    ];
    let at: Vec<usize> = keys.iter().map(|k| text.find(k).unwrap()).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(text.find("\"clusters\"") < text.find("\"errors\""));
    assert!(!text.contains("PRIVATE KEY") && !text.contains("LS0t"));
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn table_lists_clusters_and_errors() {
    let output = contexts(
        &["a.yaml", "b.yaml"],
        &["c.yaml", "broken.yaml"],
        &fixture("taloscope.yaml"),
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("NAME"), "{text}");
    for word in ["TALOS", "KUBE", "ENDPOINTS", "PAIRED-BY"] {
        assert!(lines[0].contains(word), "{text}");
    }
    let row = |name: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row {name}: {text}"))
    };
    assert!(row("charlie").ends_with("address"));
    assert!(row("production").ends_with("config"));
    assert!(row("delta").ends_with("talos only"));
    assert!(text.contains("ERRORS"));
    assert!(text.contains("broken.yaml: YAML error at line 5"), "{text}");
    assert!(!text.contains("PRIVATE KEY"));
}

#[test]
fn only_errors_and_no_clusters_exits_2() {
    let missing = fixture("no-such-config.yaml");
    let output = contexts(&[], &["broken.yaml"], &missing, &["-o", "json"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let json = json_of(&output);
    assert_eq!(json["clusters"], json!([]));
    let files: Vec<&str> = json["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["file"].as_str().unwrap())
        .collect();
    // The named config file that is missing, and the broken talosconfig.
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files[0].ends_with("no-such-config.yaml"));
    assert!(files[1].ends_with("broken.yaml"));
}

#[test]
fn nothing_configured_is_an_empty_list_and_success() {
    let home = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_taloscope"))
        .args(["contexts", "--output", "json"])
        .env_clear()
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("TALOSCOPE_STATE_DIR", home.path().join("state"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let json = json_of(&output);
    // /var/run/secrets/talos.dev/config is outside HOME; on a machine that
    // has one, clusters may appear, but nothing from HOME can.
    assert!(json["errors"].as_array().unwrap().is_empty(), "{json}");
}

#[test]
fn nothing_found_says_where_it_looked() {
    let home = tempfile::tempdir().unwrap();
    let run = |vars: &[(&str, &str)]| {
        let output = Command::new(env!("CARGO_BIN_EXE_taloscope"))
            .arg("contexts")
            .env_clear()
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("TALOSCOPE_STATE_DIR", home.path().join("state"))
            .envs(vars.iter().copied())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        (output.status.code(), text)
    };
    let (code, text) = run(&[]);
    assert_eq!(code, Some(0), "{text}");
    let home_text = home.path().display().to_string();
    for line in [
        "No clusters found.".to_string(),
        "Looked in:".to_string(),
        format!(
            "kubeconfig: --kubeconfig not given, KUBECONFIG not set; default {home_text}/.kube/config (missing)"
        ),
        format!(
            "talosconfig: --talosconfig not given, TALOSCONFIG not set; default {home_text}/.talos/config (missing)"
        ),
        "taloscope config: ".to_string(),
    ] {
        assert!(text.contains(&line), "{line:?} in:\n{text}");
    }

    // Missing files named by the variables are errors too (exit 2); the places are still said.
    let (_, text) = run(&[
        ("KUBECONFIG", "/nowhere/kube"),
        ("TALOSCONFIG", "/nowhere/talos"),
    ]);
    for line in [
        "kubeconfig: KUBECONFIG=/nowhere/kube: /nowhere/kube (missing)",
        "talosconfig: TALOSCONFIG=/nowhere/talos: /nowhere/talos (missing)",
    ] {
        assert!(text.contains(line), "{line:?} in:\n{text}");
    }
}
