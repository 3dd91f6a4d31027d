//! Issue 18's "secrets never appear in logs, the audit log or the screen": after `taloscope
//! create` (logging at trace) and `taloscope delete` of a cluster on the sim, none of its
//! secrets — the CA private keys, the service-account key, the bootstrap and trustd tokens, the
//! secrets-at-rest key, the cluster secret, the admin client key — is in the commands' stdout
//! or stderr, the log files, the audit log or the create journal. The saved bundle is 0600.
mod create_common;
mod provision_common;
mod talos_common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::time::Instant;

use base64::Engine as _;
use create_common::{DELETE_ARGS, create_args};
use provision_common::{Run, audit, state_dir};
use talos_common::{Sim, scenario, start};
use taloscope::cluster_config::SecretsBundle;

/// `taloscope ARGS` with trace logging, so every line a log could carry is written.
async fn run(sim: &Sim, args: &[String]) -> Run {
    let mut args = args.to_vec();
    args.extend(["--log-level".to_string(), "trace".to_string()]);
    create_common::run(sim, &args).await
}

/// A secret and the text forms it would leak in.
struct Secret {
    what: String,
    forms: Vec<String>,
}

fn pem_body(pem: &str) -> String {
    pem.lines()
        .filter(|l| !l.starts_with("-----"))
        .collect::<Vec<_>>()
        .concat()
}

/// A PEM's key material as it would show: a stretch of its base64 body past the prefix every
/// key of its kind shares, and a stretch of the base64 of the whole PEM (as configs carry it).
fn pem_secret(what: &str, pem: &str) -> Secret {
    let body = pem_body(pem);
    let whole = base64::engine::general_purpose::STANDARD.encode(pem);
    Secret {
        what: what.to_string(),
        forms: vec![body[24..56].to_string(), whole[60..120].to_string()],
    }
}

fn plain_secret(what: &str, value: &str) -> Secret {
    assert!(value.len() >= 16, "{what} is long enough to look for");
    Secret {
        what: what.to_string(),
        forms: vec![value.to_string()],
    }
}

/// Every secret of the bundle, and the admin key of the talos context the create wrote.
fn secrets(sim: &Sim, bundle: &SecretsBundle) -> Vec<Secret> {
    let c = &bundle.certs;
    let mut all = vec![
        pem_secret("the etcd CA key", &c.etcd.key_pem),
        pem_secret("the Kubernetes CA key", &c.k8s.key_pem),
        pem_secret("the aggregator CA key", &c.k8s_aggregator.key_pem),
        pem_secret("the Talos OS CA key", &c.os.key_pem),
        pem_secret("the service-account key", &c.k8s_service_account_key),
        pem_secret("the admin client key", &admin_key_pem(sim)),
        plain_secret("the bootstrap token", &bundle.bootstrap_token),
        plain_secret("the trustd token", &bundle.trustd_token),
        plain_secret("the secrets-at-rest key", bundle.encryption_secret()),
        plain_secret("the cluster secret", &bundle.cluster.secret),
    ];
    // The bootstrap token's secret half alone (`<id>.<secret>`).
    if let Some((_, half)) = bundle.bootstrap_token.split_once('.') {
        all.push(plain_secret("the bootstrap token's secret", half));
    }
    all
}

/// The lab context's client key PEM as the talosconfig holds it (its label as Talos writes
/// it, which discovery normalises).
fn admin_key_pem(sim: &Sim) -> String {
    let text = std::fs::read_to_string(sim.fleet.talosconfig_path()).expect("talosconfig");
    let talosconfig: serde_json::Value = serde_saphyr::from_str(&text).expect("talosconfig YAML");
    let b64 = talosconfig["contexts"]["lab"]["key"]
        .as_str()
        .expect("the lab context's key");
    let pem = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .expect("base64 key");
    let pem = String::from_utf8(pem).expect("PEM text");
    assert_eq!(pem_body(&pem), pem_body(&sim.context("lab").key_pem));
    pem
}

/// `(where, text)` of every log file under the state dir.
fn log_files(state: &Path) -> Vec<(String, String)> {
    let dir = state.join("logs");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    entries
        .map(|e| e.expect("log dir entry").path())
        .map(|p| {
            let text = String::from_utf8_lossy(&std::fs::read(&p).expect("log file")).into_owned();
            (p.display().to_string(), text)
        })
        .collect()
}

fn assert_no_secret(secrets: &[Secret], place: &str, text: &str) {
    for s in secrets {
        for form in &s.forms {
            assert!(
                !text.contains(form.as_str()),
                "{} appears in {place}",
                s.what
            );
        }
    }
}

#[tokio::test]
async fn no_secret_of_a_created_and_deleted_cluster_is_in_output_logs_audit_or_journal() {
    let started = Instant::now();
    let sim = start(scenario("healthy")).await;
    let state = state_dir(&sim);
    let more = ["--deliver", "maintenance"];
    let create = run(&sim, &create_args("sim-opennebula", 1, 1, "v1.11.3", &more)).await;
    assert_eq!(create.code, 0, "{}{}", create.stdout, create.stderr);
    let bundle_path = state.join("clusters/lab.secrets.yaml");
    let mode = std::fs::metadata(&bundle_path)
        .expect("bundle")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{}", bundle_path.display());
    let bundle = SecretsBundle::from_yaml(&bundle_path).expect("the saved bundle");
    let secrets = secrets(&sim, &bundle);
    // The forms looked for are those the files that hold the secrets show.
    let holders = std::fs::read_to_string(&bundle_path).expect("bundle")
        + &std::fs::read_to_string(sim.fleet.talosconfig_path()).expect("talosconfig");
    for s in &secrets {
        assert!(
            s.forms.iter().any(|f| holders.contains(f.as_str())),
            "{} as the bundle or talosconfig holds it",
            s.what
        );
    }
    let journal = std::fs::read_to_string(state.join("clusters/lab.json")).expect("journal");
    assert_no_secret(&secrets, "the create journal", &journal);

    let delete_args: Vec<String> = DELETE_ARGS.iter().map(|a| a.to_string()).collect();
    let delete = run(&sim, &delete_args).await;
    assert_eq!(delete.code, 0, "{}{}", delete.stdout, delete.stderr);
    for (name, r) in [("create", &create), ("delete", &delete)] {
        assert_no_secret(&secrets, &format!("{name}'s stdout"), &r.stdout);
        assert_no_secret(&secrets, &format!("{name}'s stderr"), &r.stderr);
    }
    let logs = log_files(&state);
    assert!(
        logs.iter().any(|(_, text)| text.contains("TRACE")),
        "trace lines were logged: {:?}",
        logs.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for (file, text) in &logs {
        assert_no_secret(&secrets, file, text);
    }
    let audit = audit(&sim);
    assert!(
        audit.contains("lab"),
        "the audit log has the create and delete"
    );
    assert_no_secret(&secrets, "the audit log", &audit);
    println!(
        "create, delete and the secrets check: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
