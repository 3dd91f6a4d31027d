//! `taloscope health` as a process against the sim's ClusterService/HealthCheck: on `healthy`
//! every upstream check passes, in order, and exit 0 (a reader context suffices); on
//! `cp2-down` the etcd check fails naming cp-2, and exit 1; a context whose role may not call
//! HealthCheck (`os:etcd:backup`) gets the client-side checks, with the same lines and exits.
mod upgrade_common;

use base64::Engine;
use upgrade_common::*;

/// Adds `<cluster>-backup` to the sim's talosconfig: `cluster`'s endpoints, nodes and CA with a
/// client certificate that carries only `os:etcd:backup` (the sim writes no such context).
fn add_backup_context(fx: &Fixture, cluster: &str) -> String {
    let path = fx.sim.talosconfig_path();
    let mut text = std::fs::read_to_string(&path).expect("talosconfig");
    let header = format!("  {cluster:?}:");
    let copied: Vec<String> = text
        .lines()
        .skip_while(|l| *l != header)
        .skip(1)
        .take_while(|l| !l.starts_with("    crt:"))
        .map(String::from)
        .collect();
    assert!(copied.iter().any(|l| l.starts_with("    ca:")), "{text}");
    let (crt, key) = fx
        .sim
        .client_cert(&["os:etcd:backup"])
        .expect("client cert");
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let name = format!("{cluster}-backup");
    text.push_str(&format!("  {name:?}:\n"));
    for line in copied {
        text.push_str(&format!("{line}\n"));
    }
    text.push_str(&format!("    crt: {}\n    key: {}\n", b64(&crt), b64(&key)));
    std::fs::write(&path, text).expect("talosconfig written");
    name
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_etcd_backup_role_gets_client_side_checks() {
    let fx = start(builtin("healthy")).await;
    let context = add_backup_context(&fx, "healthy");
    let mut cmd = fx.taloscope(&context, "health");
    cmd.args(["--timeout", "30"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with(
            "client-side checks (talosctl health --server=false): role os:etcd:backup may not \
             call HealthCheck\n"
        ),
        "{stdout}"
    );
    let oks: Vec<&str> = stdout.lines().filter(|l| l.starts_with("OK    ")).collect();
    assert_eq!(oks.len(), 6, "{stdout}");
    assert_eq!(oks[0], "OK    etcd to be healthy");

    let fx = start(builtin("cp2-down")).await;
    let context = add_backup_context(&fx, "cp2-down");
    let mut cmd = fx.taloscope(&context, "health");
    cmd.args(["--timeout", "2", "--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert_etcd_fails_naming_cp2(&stdout);
}

/// The JSON of an unhealthy run whose first check, etcd's, fails naming cp-2.
fn assert_etcd_fails_naming_cp2(stdout: &str) {
    let v: serde_json::Value = serde_json::from_str(stdout).expect("json");
    assert_eq!(v["healthy"], false);
    assert_eq!(v["checks"][0]["name"], "etcd to be healthy");
    assert_eq!(v["checks"][0]["state"], "fail");
    assert!(
        v["checks"][0]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("(cp-2)"),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthy_passes_every_check_and_a_reader_may_ask() {
    let fx = start(builtin("healthy")).await;
    let mut cmd = fx.taloscope("healthy-reader", "health");
    cmd.args(["--timeout", "30"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let oks: Vec<&str> = stdout.lines().filter(|l| l.starts_with("OK    ")).collect();
    assert_eq!(oks.len(), 16, "{stdout}");
    assert_eq!(oks[0], "OK    etcd to be healthy");
    assert_eq!(oks[15], "OK    all k8s nodes to report schedulable");

    let mut cmd = fx.taloscope("healthy", "health");
    cmd.args(["--timeout", "30", "--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(v["healthy"], true);
    assert_eq!(v["nodes"].as_array().map(Vec::len), Some(5), "{v}");
    assert!(
        v["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .all(|c| c["state"] == "ok")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cp2_down_fails_the_etcd_check_naming_cp_2() {
    let fx = start(builtin("cp2-down")).await;
    let mut cmd = fx.taloscope("cp2-down", "health");
    cmd.args(["--timeout", "2"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    let fail = stdout
        .lines()
        .find(|l| l.starts_with("FAIL  etcd to be healthy: "))
        .unwrap_or_else(|| panic!("a failing etcd check: {stdout}"));
    assert!(fail.contains("(cp-2)"), "{fail}");
    // The address dialled is named as the node, then the address and port it was dialled at.
    assert!(
        fail.contains("dial tcp cp-2 (") && fail.contains(":50000): connect"),
        "{fail}"
    );
    // The error is printed once: the verdict names the check and points at it.
    assert!(
        stderr.contains("is not healthy: etcd to be healthy failed (its error above)"),
        "{stderr}"
    );
    assert!(!stderr.contains("(cp-2)"), "{stderr}");
    // The checks after it, which the server never ran, are listed as not run.
    assert!(
        stdout.contains("stops at its first failing check")
            && stdout.contains("-     all k8s nodes to report schedulable"),
        "{stdout}"
    );

    let mut cmd = fx.taloscope("cp2-down", "health");
    cmd.args(["--timeout", "2", "--output", "json"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1));
    assert_etcd_fails_naming_cp2(&stdout);
}
