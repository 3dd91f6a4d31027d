//! The reads of what runs inside a node, through the Talos client against the sim: the CPU
//! counters grow with simulated time, `Containers` per containerd namespace, `Netstat`'s
//! listeners and connections, `DiskUsage` by depth and for a path the node does not have, the
//! disks and volumes in `runtime`, no KubeSpan peers where KubeSpan is off, and the logs of
//! every listed pod container (kube-proxy on a worker, the spinning workload) by the id
//! `Containers` gives it.
mod talos_common;

use futures::StreamExt;
use talos_common::{scenario, start, within};
use taloscope::talos::machine_reads::KUBERNETES_NAMESPACE;
use taloscope::talos::{LogOptions, LogSource, TalosError};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cpu_time_grows_with_simulated_time() {
    let sim = start(scenario("healthy")).await;
    let client = sim.client("healthy");
    let cp1 = sim.address("healthy", 0);
    within(20, "two samples", async {
        let first = client.system_stat(&cp1).await.expect("SystemStat");
        assert_eq!(first.cpus.len(), 4);
        loop {
            let next = client.system_stat(&cp1).await.expect("SystemStat");
            if next.total.total() > first.total.total() {
                assert!(next.total.busy() > first.total.busy());
                // The boot happened once: its time does not move.
                assert!(next.boot_time.abs_diff(first.boot_time) <= 1);
                break;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn containers_per_namespace_and_sockets() {
    let sim = start(scenario("healthy")).await;
    let client = sim.client("healthy");
    let cp1 = sim.address("healthy", 0);
    let w1 = sim.address("healthy", 3);
    within(20, "reads", async {
        let system = client.containers(&cp1, "system").await.expect("system");
        let ids: Vec<&str> = system.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["apid", "trustd", "kubelet", "etcd"]);
        assert!(system.iter().all(|c| c.status == "RUNNING"));
        let worker = client.containers(&w1, "system").await.expect("system");
        assert!(worker.iter().all(|c| c.id != "etcd"), "{worker:?}");

        let pods = client
            .containers(&cp1, KUBERNETES_NAMESPACE)
            .await
            .expect("k8s.io");
        let apiserver = "kube-system/kube-apiserver-cp-1";
        let sandbox = pods.iter().find(|c| c.id == apiserver).expect("sandbox");
        assert_eq!(sandbox.status, "SANDBOX_READY");
        let container = pods
            .iter()
            .find(|c| c.pod == apiserver && c.id != c.pod)
            .expect("container");
        assert_eq!(container.status, "CONTAINER_RUNNING");
        assert!(
            container
                .image
                .starts_with("registry.k8s.io/kube-apiserver:")
        );

        let sockets = client.netstat(&cp1).await.expect("netstat");
        let listening: Vec<u32> = sockets
            .iter()
            .filter(|s| s.state == "LISTEN")
            .map(|s| s.local_port)
            .collect();
        for port in [50000, 50001, 10250, 2379, 2380, 6443] {
            assert!(listening.contains(&port), "{port} in {listening:?}");
        }
        let peers = sockets
            .iter()
            .filter(|s| s.state == "ESTABLISHED" && s.remote_port == 2380)
            .count();
        assert_eq!(peers, 2, "etcd peers of cp-1: {sockets:?}");
        assert!(
            sockets
                .iter()
                .all(|s| s.pid.is_some() && !s.process.is_empty())
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disk_usage_by_depth_and_for_a_missing_path() {
    let sim = start(scenario("healthy")).await;
    let client = sim.client("healthy");
    let w1 = sim.address("healthy", 3);
    within(20, "reads", async {
        let root = client.disk_usage(&w1, "/var", 1).await.expect("depth 1");
        assert_eq!(root.len(), 1, "{root:?}");
        assert_eq!(root[0].path, "/var");
        let two = client.disk_usage(&w1, "/var", 2).await.expect("depth 2");
        let paths: Vec<&str> = two.iter().map(|u| u.path.as_str()).collect();
        // Directories after their contents, as the walk flushes them.
        assert_eq!(paths, ["/var/lib", "/var/log", "/var"]);
        assert_eq!(two[0].size + two[1].size, two[2].size);
        let missing = client.disk_usage(&w1, "/nope", 0).await.expect("answered");
        assert_eq!(missing.len(), 1);
        assert!(
            missing[0]
                .error
                .as_deref()
                .is_some_and(|e| e.contains("no such file or directory")),
            "{missing:?}"
        );

        let mounts = client.mounts(&w1).await.expect("mounts");
        let var = mounts
            .iter()
            .find(|m| m.mounted_on == "/var")
            .expect("/var");
        assert!(var.available < var.size);
        assert_eq!(var.filesystem, "/dev/sda6");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disks_volumes_and_no_kubespan_where_it_is_off() {
    let sim = start(scenario("talos-1.14")).await;
    let client = sim.client("talos-1.14");
    let w2 = sim.address("talos-1.14", 4);
    within(20, "reads", async {
        let disks = client.disks(&w2).await.expect("disks");
        let ids: Vec<&str> = disks.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["sda", "sdb"]);
        assert_eq!(
            client
                .system_disk(&w2)
                .await
                .expect("system disk")
                .as_deref(),
            Some("sda")
        );
        let volumes = client.volume_statuses(&w2).await.expect("volumes");
        let ephemeral = volumes
            .iter()
            .find(|v| v.id == "EPHEMERAL")
            .expect("EPHEMERAL");
        assert_eq!(ephemeral.spec.mount_spec.target_path, "/var");
        assert_eq!(ephemeral.spec.filesystem, "xfs");
        assert!(client.kubespan_peers(&w2).await.expect("peers").is_empty());
        let links = client.link_statuses(&w2).await.expect("links");
        assert!(links.iter().all(|l| l.id != "kubespan"), "{links:?}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_listed_pod_container_has_its_log() {
    let sim = start(scenario("cpu-spin")).await;
    let client = sim.client("cpu-spin");
    let w1 = sim.address("cpu-spin", 3);
    let tail = |n| LogOptions {
        tail: Some(n),
        follow: false,
    };
    within(30, "the pod containers' logs", async {
        let listed = client
            .containers(&w1, KUBERNETES_NAMESPACE)
            .await
            .expect("k8s.io");
        let containers: Vec<_> = listed.iter().filter(|c| c.id != c.pod).collect();
        let names: Vec<&str> = containers.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["kube-proxy", "spinner"], "{listed:?}");
        for c in containers {
            // As the resources screen asks (the listed id), and as `talosctl logs -k` does.
            let display = format!("{}:{}", c.pod, c.name);
            for id in [c.id.clone(), display] {
                let source = LogSource::Container(id.clone());
                let lines: Vec<_> = client
                    .logs(&w1, &source, tail(4))
                    .await
                    .unwrap_or_else(|e| panic!("{id}: {e}"))
                    .collect()
                    .await;
                let lines: Vec<String> =
                    lines.into_iter().map(|l| l.expect("a line").text).collect();
                assert_eq!(lines.len(), 4, "{id}: {lines:?}");
                let stream = if c.name == "spinner" {
                    "stdout"
                } else {
                    "stderr"
                };
                assert!(
                    lines.iter().all(|l| l.contains(&format!("Z {stream} F "))),
                    "{id}: {lines:?}"
                );
            }
        }
        let proxy = listed
            .iter()
            .find(|c| c.name == "kube-proxy")
            .expect("kube-proxy");
        let lines: Vec<_> = client
            .logs(&w1, &LogSource::Container(proxy.id.clone()), tail(20))
            .await
            .expect("kube-proxy's log")
            .collect()
            .await;
        assert!(
            lines
                .iter()
                .flatten()
                .any(|l| l.text.contains("proxier.go")),
            "{lines:?}"
        );

        // A container id that is not the container's, or a pod sandbox: not found, as the CRI
        // inspector answers.
        for id in [
            format!("{}:kube-proxy:ffffffffffff", proxy.pod),
            proxy.pod.clone(),
        ] {
            let source = LogSource::Container(id.clone());
            let read = match client.logs(&w1, &source, tail(1)).await {
                Ok(stream) => stream
                    .collect::<Vec<_>>()
                    .await
                    .into_iter()
                    .find_map(Result::err),
                Err(e) => Some(e),
            };
            match read {
                Some(TalosError::Rpc { message, .. }) => {
                    assert!(message.contains("not found"), "{id}: {message}")
                }
                other => panic!("{id}: {other:?}"),
            }
        }
    })
    .await;
}
