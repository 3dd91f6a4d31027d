//! `taloscope certs` as a process against the sim's generated talosconfig and kubeconfig: the
//! `healthy` cluster's `healthy-expiring` context (admin certificate ending in 10 days) warns
//! and exits 0 as `upgrade --plan` does for warnings; an expired context fails with exit 1.
mod upgrade_common;

use upgrade_common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_expiring_context_warns_and_the_others_are_ok() {
    let fx = start(builtin("healthy")).await;
    let (code, stdout, stderr) = output(fx.taloscope("healthy", "certs")).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let row = |context: &str, certificate: &str| {
        stdout
            .lines()
            .find(|l| {
                l.split_whitespace().nth(2) == Some(context)
                    && l.contains(&format!(" {certificate} "))
            })
            .unwrap_or_else(|| panic!("a {certificate} row of {context}: {stdout}"))
            .to_string()
    };
    let expiring = row("healthy-expiring", "talos client");
    assert!(
        expiring.starts_with("WARN") && expiring.contains("(in 9 days)"),
        "{expiring}"
    );
    assert!(row("healthy", "talos client").starts_with("OK"));
    assert!(row("healthy", "talos CA").starts_with("OK"));
    assert!(
        row("admin@healthy", "kubernetes client").starts_with("OK"),
        "{stdout}"
    );

    let mut cmd = fx.taloscope("healthy-expiring", "certs");
    cmd.args(["--output", "json"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(0));
    let certs: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let warned: Vec<&serde_json::Value> = certs
        .as_array()
        .expect("array")
        .iter()
        .filter(|c| c["verdict"] == "warn")
        .collect();
    assert_eq!(warned.len(), 1, "{stdout}");
    assert_eq!(warned[0]["context"], "healthy-expiring");
    assert_eq!(warned[0]["certificate"], "talos client");
    assert_eq!(warned[0]["days_left"], 9);
    // Soonest end first, as the console's certificates screen lists them.
    let ends: Vec<i64> = (certs.as_array().expect("array").iter())
        .filter_map(|c| c["not_after"].as_i64())
        .collect();
    assert!(ends.len() > 1 && ends.is_sorted(), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_context_fails() {
    let mut scenario = builtin("cp2-down");
    scenario.clusters[0].expired_client_context = true;
    let fx = start(scenario).await;
    let (code, stdout, stderr) = output(fx.taloscope("cp2-down", "certs")).await;
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.lines().any(|l| l.starts_with("FAIL")
            && l.contains("cp2-down-expired")
            && l.contains("expired")),
        "{stdout}"
    );
}
