//! Shared by the create tests against the sim: the `taloscope create` and `delete` command
//! lines for a cluster named lab, and lab's status as `taloscope status --context lab` reads it.
#![allow(dead_code)]
use crate::provision_common::{self, config_file};
use crate::talos_common::Sim;
use taloscope::fleet::{ClusterStatus, FleetStatus};

/// The typed acknowledgement a delete needs.
pub const DESTROYS: &str = "this destroys the cluster and its data";

/// The acknowledgement a headless create needs to pin each VM's maintenance fingerprint as
/// first seen.
pub const PIN_FINGERPRINTS: &str = "pin the fingerprints shown";

/// `taloscope create` of lab through `provider` with `controlplanes`+`workers` on `talos`, polling
/// every 20 ms, confirmed, pinning the maintenance fingerprints as first seen; then `more`.
pub fn create_args(
    provider: &str,
    controlplanes: usize,
    workers: usize,
    talos: &str,
    more: &[&str],
) -> Vec<String> {
    let counts = [controlplanes.to_string(), workers.to_string()];
    let mut args: Vec<String> = [
        "create",
        "--name",
        "lab",
        "--provider",
        provider,
        "--controlplanes",
        &counts[0],
        "--workers",
        &counts[1],
        "--talos",
        talos,
        "--poll-ms",
        "20",
        "--yes",
        "--confirm",
        "lab",
        "--ack",
        PIN_FINGERPRINTS,
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    args.extend(more.iter().map(|a| a.to_string()));
    args
}

/// `taloscope delete --context lab`, confirmed and acknowledged.
pub const DELETE_ARGS: [&str; 8] = [
    "delete",
    "--context",
    "lab",
    "--yes",
    "--confirm",
    "lab",
    "--ack",
    DESTROYS,
];

/// `taloscope ARGS` (owned strings) with the sim's own taloscope.yaml.
pub async fn run(sim: &Sim, args: &[String]) -> provision_common::Run {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    provision_common::run(sim, &config_file(sim), &args).await
}

/// lab as `taloscope status --context lab -o json` shows it (the only cluster).
pub async fn lab_status(sim: &Sim) -> (ClusterStatus, String) {
    let args = ["status", "--context", "lab", "-o", "json"];
    let r = provision_common::run(sim, &config_file(sim), &args).await;
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let fleet: FleetStatus =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
    let [lab] = fleet.clusters.as_slice() else {
        panic!("one cluster: {}", r.stdout);
    };
    assert_eq!(lab.name, "lab");
    (lab.clone(), r.stdout)
}
