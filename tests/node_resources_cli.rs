//! `taloscope node info` and `taloscope top` as processes against the sim, their JSON read
//! with a JSON parser: every `talos-1.1x` scenario reports CPU, memory, load, uptime, disks,
//! volumes with their fill, links, addresses, routes, connections, processes and containers,
//! as a reader too; a node whose EPHEMERAL is 96% full is failing and first in `top`; a
//! spinning process is first in `top --sort cpu` of its node, and its node first among the
//! cluster's; a node that does not answer is named in `top` with its error, ranked last; the
//! table opens with what fails.
mod upgrade_common;

use serde_json::Value;
use upgrade_common::*;

/// Simulated time between the two samples (200 ms at the fixture's time scale: 40 s).
const SAMPLE_MS: &str = "200";

async fn json_of(fx: &Fixture, context: &str, subcommand: &str, args: &[&str]) -> Value {
    let mut cmd = fx.taloscope(context, subcommand);
    cmd.args(args)
        .args(["--output", "json", "--sample-ms", SAMPLE_MS]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{subcommand} {args:?}: {stdout}\n{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("JSON ({e}): {stdout}"))
}

async fn node_info(fx: &Fixture, context: &str, node: &str) -> Value {
    json_of(fx, context, "node", &["info", "--node", node]).await
}

fn named<'a>(list: &'a Value, key: &str, value: &str) -> &'a Value {
    list.as_array()
        .and_then(|items| items.iter().find(|i| i[key] == value))
        .unwrap_or_else(|| panic!("{key} = {value} in {list}"))
}

fn number(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

/// What every node's document carries, whatever its role.
fn assert_complete(doc: &Value, node: &str, cpus: u64) {
    assert_eq!(doc["node"], node, "{doc}");
    // From the node's kubelet, through the cluster's Kubernetes API.
    assert_eq!(doc["kernel_version"], "6.12.57-talos", "{doc}");
    assert_eq!(doc["cpu"]["count"], cpus, "{doc}");
    assert!(doc["cpu"]["model"].as_str().is_some_and(|m| !m.is_empty()));
    let cpu = number(&doc["cpu"]["usage_percent"]);
    assert!(cpu > 0.0 && cpu < 100.0, "{doc}");
    let memory = &doc["memory"];
    assert!(number(&memory["total_bytes"]) > number(&memory["used_bytes"]));
    assert!(number(&memory["available_bytes"]) > 0.0);
    assert_eq!(memory["pressure"], "ok", "{memory}");
    assert!(number(&doc["load"]["load1"]) >= 0.0);
    assert!(number(&doc["uptime_seconds"]) >= 0.0);
    assert!(doc["boot_time"].as_str().is_some_and(|t| t.ends_with('Z')));
    let system_disk = named(&doc["disks"], "id", "sda");
    assert_eq!(system_disk["system_disk"], true, "{system_disk}");
    assert!(number(&system_disk["size_bytes"]) > 0.0);
    let ephemeral = named(&doc["volumes"], "id", "EPHEMERAL");
    assert_eq!(ephemeral["mount_point"], "/var", "{ephemeral}");
    assert_eq!(ephemeral["phase"], "ready", "{ephemeral}");
    let used = number(&ephemeral["used_percent"]);
    assert!(used > 0.0 && used < 85.0, "{ephemeral}");
    assert_eq!(ephemeral["level"], "ok");
    assert!(doc["ephemeral_directories"][0]["path"] == "/var");
    let eth0 = named(&doc["links"], "name", "eth0");
    assert_eq!(eth0["up"], true, "{eth0}");
    assert_eq!(eth0["carrier"], true, "{eth0}");
    // The loopback reports no carrier and an `unknown` state, as the kernel has it: up.
    let lo = named(&doc["links"], "name", "lo");
    assert_eq!(
        (&lo["up"], &lo["carrier"]),
        (&Value::Bool(true), &Value::Bool(false)),
        "{lo}"
    );
    assert_eq!(eth0["mtu"], 1500);
    assert_eq!(named(&doc["addresses"], "link", "eth0")["family"], "inet4");
    assert!(number(&doc["routes"]["count"]) >= 1.0);
    assert_eq!(
        doc["routes"]["default_gateways"].as_array().map(Vec::len),
        Some(1)
    );
    // No scenario turns KubeSpan on: no peers, as upstream lists none.
    assert_eq!(doc["kubespan_peers"], serde_json::json!([]));
    assert!(
        doc["connections"].as_array().is_some_and(|c| c
            .iter()
            .any(|c| c["state"] == "LISTEN" && c["local_port"] == 50000 && c["process"] == "apid")),
        "{}",
        doc["connections"]
    );
    assert!(
        doc["connections"].as_array().is_some_and(|c| c
            .iter()
            .any(|c| c["state"] == "ESTABLISHED" && c["remote_port"] == 6443)),
        "{}",
        doc["connections"]
    );
    let kubelet = named(&doc["processes"], "command", "kubelet");
    assert!(number(&kubelet["cpu_percent"]) > 0.0, "{kubelet}");
    assert!(number(&kubelet["rss_bytes"]) > 0.0);
    let proxy = named(&doc["containers"], "name", "kube-proxy");
    assert_eq!(proxy["state"], "running", "{proxy}");
    assert_eq!(proxy["namespace"], "kube-system");
    assert!(
        proxy["image"]
            .as_str()
            .is_some_and(|i| i.contains("kube-proxy"))
    );
    assert_eq!(doc["level"], "ok", "{doc}");
    assert_eq!(doc["problems"], serde_json::json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_info_reports_everything_on_every_talos_minor() {
    for (scenario, tag) in [
        ("talos-1.10", "v1.10.7"),
        ("talos-1.11", "v1.11.3"),
        ("talos-1.12", "v1.12.0"),
        ("talos-1.13", "v1.13.0"),
        ("talos-1.14", "v1.14.0"),
    ] {
        let fx = start(builtin(scenario)).await;
        let cp = node_info(&fx, scenario, "cp-1").await;
        assert_complete(&cp, "cp-1", 4);
        assert_eq!(cp["talos_version"], tag);
        assert_eq!(cp["machine_type"], "controlplane");
        // Disks say their firmware from Talos v1.14 (pkg/machinery/resources/block/disk.go).
        let firmware = &named(&cp["disks"], "id", "sda")["firmware_version"];
        assert_eq!(
            firmware.is_string(),
            scenario == "talos-1.14",
            "{scenario}: {firmware}"
        );
        let etcd = named(&cp["processes"], "command", "etcd");
        assert!(number(&etcd["cpu_percent"]) > 0.0, "{etcd}");
        let apiserver = named(&cp["containers"], "name", "kube-apiserver");
        assert_eq!(apiserver["state"], "running");
        // Its restarts, from the static pod's status in Kubernetes.
        assert_eq!(apiserver["restarts"], 0, "{apiserver}");
        let worker = node_info(&fx, scenario, "w-1").await;
        assert_complete(&worker, "w-1", 8);
        assert_eq!(worker["machine_type"], "worker");
        assert_eq!(
            worker["disks"].as_array().map(Vec::len),
            Some(2),
            "{}",
            worker["disks"]
        );
        assert_eq!(named(&worker["disks"], "id", "sdb")["system_disk"], false);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_may_read_a_node() {
    let fx = start(builtin("talos-1.13")).await;
    let doc = node_info(&fx, "talos-1.13-reader", "w-2").await;
    assert_complete(&doc, "w-2", 8);
    let top = json_of(&fx, "talos-1.13-reader", "top", &[]).await;
    assert_eq!(top["nodes"].as_array().map(Vec::len), Some(5), "{top}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_ephemeral_fails_the_node_and_leads_top() {
    let fx = start(builtin("ephemeral-full")).await;
    let doc = node_info(&fx, "ephemeral-full", "w-1").await;
    let ephemeral = named(&doc["volumes"], "id", "EPHEMERAL");
    assert!(number(&ephemeral["used_percent"]) >= 95.0, "{ephemeral}");
    assert_eq!(ephemeral["level"], "failing");
    assert_eq!(doc["level"], "failing");
    assert!(
        doc["problems"].as_array().is_some_and(|p| p
            .iter()
            .any(|p| p.as_str().is_some_and(|p| p.starts_with("EPHEMERAL is 9")))),
        "{}",
        doc["problems"]
    );
    // What fills it, largest first: containerd's images.
    assert_eq!(doc["ephemeral_directories"][1]["path"], "/var/lib");
    assert_eq!(
        doc["ephemeral_directories"][2]["path"],
        "/var/lib/containerd"
    );

    let top = json_of(&fx, "ephemeral-full", "top", &[]).await;
    let first = &top["nodes"][0];
    assert_eq!(first["node"], "w-1", "{top}");
    assert_eq!(first["level"], "failing");
    assert!(number(&first["disk_percent"]) >= 95.0, "{first}");
    assert!(
        top["nodes"]
            .as_array()
            .is_some_and(|n| n[1..].iter().all(|n| n["level"] == "ok")),
        "{top}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spinning_process_is_first_in_top() {
    let fx = start(builtin("cpu-spin")).await;
    let by_cpu = json_of(&fx, "cpu-spin", "top", &["--node", "w-1", "--sort", "cpu"]).await;
    assert_eq!(by_cpu["sort"], "cpu");
    let first = &by_cpu["processes"][0];
    assert_eq!(first["command"], "stress-ng", "{by_cpu}");
    let cpu = number(&first["cpu_percent"]);
    assert!((85.0..=115.0).contains(&cpu), "{first}");
    let second = number(&by_cpu["processes"][1]["cpu_percent"]);
    assert!(second < 20.0, "{by_cpu}");

    let by_memory = json_of(&fx, "cpu-spin", "top", &["--node", "w-1", "--sort", "mem"]).await;
    let rss: Vec<f64> = by_memory["processes"]
        .as_array()
        .expect("processes")
        .iter()
        .map(|p| number(&p["rss_bytes"]))
        .collect();
    assert!(rss.windows(2).all(|w| w[0] >= w[1]), "{rss:?}");
    assert_ne!(by_memory["processes"][0]["command"], "stress-ng");

    let nodes = json_of(&fx, "cpu-spin", "top", &["--sort", "cpu"]).await;
    assert_eq!(nodes["nodes"][0]["node"], "w-1", "{nodes}");
    let doc = node_info(&fx, "cpu-spin", "w-1").await;
    assert_eq!(doc["processes"][0]["command"], "stress-ng");
    assert_eq!(
        named(&doc["containers"], "name", "spinner")["state"],
        "running"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubespan_peers_show_where_kubespan_is_on() {
    let fx = start(builtin("kubespan")).await;
    let doc = node_info(&fx, "kubespan", "cp-2").await;
    let peers = doc["kubespan_peers"].as_array().expect("peers");
    let mut labels: Vec<&str> = peers.iter().filter_map(|p| p["label"].as_str()).collect();
    labels.sort_unstable();
    assert_eq!(labels, ["cp-1", "cp-3", "w-1", "w-2"], "{peers:?}");
    let w1 = named(&doc["kubespan_peers"], "label", "w-1");
    assert_eq!(w1["state"], "up");
    assert!(
        w1["endpoint"]
            .as_str()
            .is_some_and(|e| e.ends_with(":51820")),
        "{w1}"
    );
    assert!(number(&w1["received_bytes"]) > 0.0);
    let link = named(&doc["links"], "name", "kubespan");
    assert_eq!(link["mtu"], 1420, "{link}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_node_is_a_usage_error_naming_the_nodes() {
    let fx = start(builtin("talos-1.11")).await;
    let mut cmd = fx.taloscope("talos-1.11", "node");
    cmd.args(["info", "--node", "w-9"]);
    let (code, _, stderr) = output(cmd).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("no node named \"w-9\"") && stderr.contains("cp-1"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_names_a_node_that_does_not_answer_and_lists_the_rest() {
    let fx = start(builtin("cp2-down")).await;
    let top = json_of(&fx, "cp2-down", "top", &["--sort", "mem"]).await;
    assert_eq!(top["sort"], "mem");
    let nodes = top["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 5, "{top}");
    let down = named(&top["nodes"], "node", "cp-2");
    assert!(
        down["error"]
            .as_str()
            .is_some_and(|e| e.contains("127.10.0.2")),
        "{down}"
    );
    assert_eq!(down["cpu_percent"], Value::Null);
    // Ranked last: it has no figures.
    assert_eq!(nodes[4]["node"], "cp-2", "{top}");
    let memory: Vec<f64> = nodes[..4]
        .iter()
        .map(|n| number(&n["memory_percent"]))
        .collect();
    assert!(memory.windows(2).all(|w| w[0] >= w[1]), "{memory:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_table_says_what_fails_first() {
    let fx = start(builtin("ephemeral-full")).await;
    let mut cmd = fx.taloscope("ephemeral-full", "node");
    cmd.args(["info", "--node", "w-1", "--sample-ms", SAMPLE_MS]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stderr}");
    let mut lines = stdout.lines();
    let head = lines.next().unwrap_or_default();
    assert!(
        head.starts_with("NODE w-1 ") && head.ends_with("FAILING"),
        "{stdout}"
    );
    assert!(
        lines.next().is_some_and(|l| l.contains("! EPHEMERAL is 9")),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("EPHEMERAL") && l.contains("/var") && l.ends_with("failing")),
        "{stdout}"
    );
}
