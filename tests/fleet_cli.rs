//! The `fleet` scenario (20 clusters of 250 nodes, each reached by an admin and a reader
//! talosconfig context and one kube context) through the headless commands: contexts that
//! reach the same cluster are one cluster, so `contexts --output json` lists 20 clusters, each
//! with its reader context as the alternate, and `status` reports the same 20.
mod talos_common;

use talos_common::{Sim, scenario, start, within};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

async fn taloscope(sim: &Sim, args: &[&str]) -> Run {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_taloscope"))
        .args(args)
        .env("HOME", sim.dir.path())
        .env(
            "TALOSCOPE_STATE_DIR",
            sim.dir.path().join("taloscope-state"),
        )
        .env("TALOSCONFIG", sim.fleet.talosconfig_path())
        .env("KUBECONFIG", sim.fleet.kubeconfig_path())
        .env_remove("TALOSCOPE_CONFIG")
        .kill_on_drop(true)
        .output();
    let out = within(300, "taloscope", out).await.expect("taloscope runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn json(run: &Run) -> serde_json::Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("JSON ({e}): {}{}", run.stdout, run.stderr))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fleet_is_twenty_clusters_with_their_reader_contexts_and_status_agrees() {
    let sim = start(scenario("fleet")).await;
    let run = taloscope(&sim, &["contexts", "--output", "json"]).await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let contexts = json(&run);
    let clusters = contexts["clusters"].as_array().expect("clusters");
    let names: Vec<&str> = clusters.iter().filter_map(|c| c["name"].as_str()).collect();
    let expected: Vec<String> = (1..=20).map(|i| format!("fleet-{i:02}")).collect();
    assert_eq!(names, expected, "{}", run.stdout);
    for c in clusters {
        let name = c["name"].as_str().unwrap_or_default();
        assert_eq!(c["talos_context"], name, "the admin context is used");
        assert_eq!(c["kube_context"], format!("admin@{name}"));
        assert_eq!(
            c["alternate_contexts"],
            serde_json::json!([format!("{name}-reader")])
        );
    }

    let run = taloscope(&sim, &["status", "--output", "json", "--timeout", "240"]).await;
    let status = json(&run);
    let polled = status["clusters"].as_array().expect("clusters");
    let status_names: Vec<&str> = polled.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(status_names, names, "status lists the same clusters");
    for c in polled {
        let nodes = c["nodes"].as_array().map_or(0, Vec::len);
        assert_eq!(nodes, 250, "{}: {nodes} nodes", c["name"]);
        assert_eq!(
            c["role"], "os:admin",
            "{}: the admin context is asked",
            c["name"]
        );
    }
    sim.fleet.shutdown().await;
}
