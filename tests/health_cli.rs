//! `taloscope health` as a process against the sim's ClusterService/HealthCheck: on `healthy`
//! every upstream check passes, in order, and exit 0 (a reader context suffices); on
//! `cp2-down` the etcd check fails naming cp-2, and exit 1.
mod upgrade_common;

use upgrade_common::*;

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
    assert!(
        stderr.contains("is not healthy: etcd to be healthy") && stderr.contains("(cp-2)"),
        "{stderr}"
    );

    let mut cmd = fx.taloscope("cp2-down", "health");
    cmd.args(["--timeout", "2", "--output", "json"]);
    let (code, stdout, _) = output(cmd).await;
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(v["healthy"], false);
    assert_eq!(v["checks"][0]["state"], "fail");
    assert!(
        v["checks"][0]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("(cp-2)"),
        "{v}"
    );
}
