//! Reading a node's resources through the Talos client: two `SystemStat` and `Processes`
//! samples a span apart for the usage figures, every other read once in between, folded
//! into the document; and the lighter usage read of each node `top` ranks.
use std::collections::HashMap;
use std::time::Duration;

use super::document::*;
use super::rolling::{disk_percent, judged, memory_percent, unread};
use super::usage::{
    Level, cpu_percent, elapsed_seconds, memory_level, memory_used, percent_of,
    process_cpu_percent, tenth, volume_level,
};
use crate::kube::KubeClient;
use crate::kube::node_runtime::ContainerRestarts;
use crate::printable::line;
use crate::talos::TalosClient;
use crate::talos::TalosError;
use crate::talos::machine_reads::{
    KUBERNETES_NAMESPACE, MountUsage, ProcessSample, SystemStatSample,
};

/// Why a node's resources could not be read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NodeResourcesError {
    /// A read failed; the Talos error names the node and the call.
    #[error(transparent)]
    Talos(#[from] TalosError),
    /// The node's CPU counters went back between the two samples.
    #[error("node {node} rebooted while it was being read; read it again")]
    Rebooted { node: String },
}

/// The node as the caller knows it (from the cluster's status).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeIdentity {
    pub name: String,
    /// Where the Talos API reaches it.
    pub address: String,
    /// `controlplane` or `worker`.
    pub machine_type: String,
}

/// How `top` orders what it lists (`top --sort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SortKey {
    #[default]
    Cpu,
    #[value(name = "mem")]
    Memory,
}

/// How far apart the two samples are taken by default: long enough for a CPU share to show,
/// short enough for a command.
pub const DEFAULT_SAMPLE_SPAN: Duration = Duration::from_secs(1);

struct Sample {
    stat: SystemStatSample,
    processes: Vec<ProcessSample>,
}

async fn sample(talos: &TalosClient, address: &str) -> Result<Sample, TalosError> {
    let (stat, processes) = tokio::try_join!(talos.system_stat(address), talos.processes(address))?;
    Ok(Sample { stat, processes })
}

/// The processes' CPU use between two samples, sorted by `key` (busiest first).
fn process_usage(first: &Sample, second: &Sample, key: SortKey) -> Vec<ProcessUsage> {
    let cpus = second.stat.cpus.len().max(1);
    let elapsed = elapsed_seconds(&first.stat.total, &second.stat.total, cpus).unwrap_or(0.0);
    let before: HashMap<i32, &ProcessSample> = first.processes.iter().map(|p| (p.pid, p)).collect();
    let mut out: Vec<ProcessUsage> = second
        .processes
        .iter()
        .map(|p| ProcessUsage {
            pid: p.pid,
            ppid: p.ppid,
            state: line(&p.state),
            threads: p.threads,
            cpu_percent: tenth(process_cpu_percent(before.get(&p.pid).copied(), p, elapsed)),
            rss_bytes: p.resident,
            command: line(&p.command),
            args: line(&p.args),
        })
        .collect();
    sort_processes(&mut out, key);
    out
}

/// Busiest first by `key`, the pid breaking ties.
pub fn sort_processes(list: &mut [ProcessUsage], key: SortKey) {
    list.sort_by(|a, b| {
        let order = match key {
            SortKey::Cpu => b.cpu_percent.total_cmp(&a.cpu_percent),
            SortKey::Memory => b.rss_bytes.cmp(&a.rss_bytes),
        };
        order.then(a.pid.cmp(&b.pid))
    });
}

/// The processes shown for `filter`: those whose command line holds it
/// ([`ProcessUsage::matches`]) in `key` order, as a list (each at depth 0) or, with `tree`, as
/// [`process_tree`] lays them out.
pub fn shown_processes(
    list: &[ProcessUsage],
    key: SortKey,
    tree: bool,
    filter: &str,
) -> Vec<(usize, ProcessUsage)> {
    let keep = |p: &ProcessUsage| p.matches(filter);
    if tree {
        return process_tree(list, key, keep);
    }
    let mut shown: Vec<ProcessUsage> = list.iter().filter(|p| keep(p)).cloned().collect();
    sort_processes(&mut shown, key);
    shown.into_iter().map(|p| (0, p)).collect()
}

/// The processes as a tree, each after its parent with its depth (0 for a process whose
/// parent is not listed: pid 1, kernel threads' kthreadd), siblings in `key` order; only
/// those `keep` accepts and the ancestors that lead to them.
pub fn process_tree(
    list: &[ProcessUsage],
    key: SortKey,
    keep: impl Fn(&ProcessUsage) -> bool,
) -> Vec<(usize, ProcessUsage)> {
    let mut sorted = list.to_vec();
    sort_processes(&mut sorted, key);
    let by_pid: HashMap<i32, &ProcessUsage> = sorted.iter().map(|p| (p.pid, p)).collect();
    // Kept: those asked for and every ancestor of one.
    let mut kept = std::collections::HashSet::new();
    for p in sorted.iter().filter(|p| keep(p)) {
        let mut at = Some(p);
        while let Some(p) = at.filter(|p| kept.insert(p.pid)) {
            at = by_pid
                .get(&p.ppid)
                .copied()
                .filter(|parent| parent.pid != p.pid);
        }
    }
    let mut children: HashMap<i32, Vec<&ProcessUsage>> = HashMap::new();
    let mut roots = Vec::new();
    for p in sorted.iter().filter(|p| kept.contains(&p.pid)) {
        match by_pid.contains_key(&p.ppid) && p.ppid != p.pid {
            true => children.entry(p.ppid).or_default().push(p),
            false => roots.push(p),
        }
    }
    let mut out = Vec::new();
    let mut stack: Vec<(usize, &ProcessUsage)> = roots.into_iter().rev().map(|p| (0, p)).collect();
    while let Some((depth, p)) = stack.pop() {
        out.push((depth, p.clone()));
        if let Some(kids) = children.get(&p.pid) {
            stack.extend(kids.iter().rev().map(|k| (depth + 1, *k)));
        }
    }
    out
}

fn node_cpu(
    first: &Sample,
    second: &Sample,
    node: &str,
) -> Result<Option<f64>, NodeResourcesError> {
    if second.stat.total.total() < first.stat.total.total() {
        return Err(NodeResourcesError::Rebooted {
            node: node.to_string(),
        });
    }
    Ok(cpu_percent(&first.stat.total, &second.stat.total).map(tenth))
}

/// The mount a volume's filesystem is mounted at.
fn mount_of<'a>(mounts: &'a [MountUsage], target: &str) -> Option<&'a MountUsage> {
    (!target.is_empty())
        .then(|| mounts.iter().find(|m| m.mounted_on == target))
        .flatten()
}

/// What Kubernetes adds: the kernel and the containers' restarts. Read beside the Talos
/// reads; a Kubernetes API that does not answer leaves them unknown, the rest stands.
async fn kubernetes_side(
    kube: Option<&KubeClient>,
    node: &str,
) -> (Option<String>, Vec<ContainerRestarts>) {
    let Some(kube) = kube else {
        return (None, Vec::new());
    };
    let (kernel, restarts) = tokio::join!(
        kube.node_kernel_version(node),
        kube.container_restarts(node)
    );
    (kernel.ok().flatten(), restarts.unwrap_or_default())
}

/// Reads everything `node info` reports; the usage figures over `span`. `kube`: the
/// cluster's Kubernetes API, for the kernel and the containers' restarts.
pub async fn read_node(
    talos: &TalosClient,
    kube: Option<&KubeClient>,
    id: &NodeIdentity,
    span: Duration,
) -> Result<NodeResources, NodeResourcesError> {
    let a = id.address.as_str();
    let first = sample(talos, a).await?;
    let wait = tokio::time::sleep(span);
    let reads = async {
        tokio::try_join!(
            talos.version(a),
            talos.cpu_info(a),
            talos.memory(a),
            talos.load_avg(a),
            talos.disks(a),
            talos.system_disk(a),
            talos.volume_statuses(a),
            talos.mounts(a),
            talos.disk_usage(a, "/var", 3),
            talos.link_statuses(a),
            talos.address_statuses(a),
            talos.route_statuses(a),
            talos.kubespan_peers(a),
            talos.netstat(a),
            talos.containers(a, KUBERNETES_NAMESPACE),
        )
    };
    let (read, (kernel_version, restarts), ()) =
        tokio::join!(reads, kubernetes_side(kube, &id.name), wait);
    let (
        version,
        cpu,
        memory,
        load,
        disks,
        system_disk,
        volumes,
        mounts,
        var_usage,
        links,
        addresses,
        routes,
        peers,
        sockets,
        containers,
    ) = read?;
    let second = sample(talos, a).await?;
    let usage_percent = node_cpu(&first, &second, &id.name)?;

    let used = memory_used(&memory);
    let memory_percent = memory_percent(&memory);
    let memory = MemoryUsage {
        total_bytes: memory.total,
        used_bytes: used,
        available_bytes: memory.available,
        used_percent: memory_percent,
        pressure: memory_percent.map(memory_level).unwrap_or(Level::Ok),
    };

    let volumes: Vec<Volume> = volumes
        .into_iter()
        .map(|r| {
            let target = r.spec.mount_spec.target_path;
            let mount = mount_of(&mounts, &target);
            let used = mount.map(|m| m.size.saturating_sub(m.available));
            let used_percent = mount
                .and_then(|m| percent_of(m.size - m.available.min(m.size), m.size))
                .map(tenth);
            Volume {
                id: line(&r.id),
                phase: line(&r.spec.phase),
                kind: line(&r.spec.kind),
                location: line(&r.spec.location),
                size_bytes: r.spec.size,
                filesystem: line(&r.spec.filesystem),
                mount_point: line(&target),
                used_bytes: used,
                free_bytes: mount.map(|m| m.available),
                used_percent,
                level: used_percent.map(volume_level).unwrap_or(Level::Ok),
            }
        })
        .collect();

    let mut problems = Vec::new();
    if memory.pressure > Level::Ok {
        problems.push(format!(
            "memory {:.1}% used ({})",
            memory_percent.unwrap_or(0.0),
            memory.pressure.as_str()
        ));
    }
    for v in &volumes {
        if v.level > Level::Ok {
            problems.push(format!(
                "{} is {:.1}% full ({})",
                v.id,
                v.used_percent.unwrap_or(0.0),
                v.level.as_str()
            ));
        }
    }
    let level = volumes
        .iter()
        .map(|v| v.level)
        .chain([memory.pressure])
        .max()
        .unwrap_or(Level::Ok);

    let mut ephemeral_directories: Vec<DirectorySize> = var_usage
        .into_iter()
        .filter(|u| u.error.is_none())
        .map(|u| DirectorySize {
            path: line(&u.path),
            size_bytes: u.size,
        })
        .collect();
    ephemeral_directories.sort_by(|a, b| b.size_bytes.cmp(&a.size_bytes).then(a.path.cmp(&b.path)));

    let route_list: Vec<Route> = routes
        .into_iter()
        .map(|r| Route {
            destination: line(&r.spec.destination),
            gateway: line(&r.spec.gateway),
            link: line(&r.spec.out_link_name),
            table: line(&r.spec.table),
            priority: r.spec.priority,
        })
        .collect();
    let default_gateways = route_list
        .iter()
        .filter(|r| r.destination.is_empty() && !r.gateway.is_empty())
        .map(|r| r.gateway.clone())
        .collect();

    let now = crate::clock::unix_now();
    let boot = std::time::UNIX_EPOCH + Duration::from_secs(first.stat.boot_time);
    Ok(NodeResources {
        node: line(&id.name),
        address: line(&id.address),
        machine_type: line(&id.machine_type),
        talos_version: line(&version.tag),
        kernel_version: kernel_version.map(|k| line(&k)),
        level,
        problems,
        cpu: CpuUsage {
            count: cpu.count,
            model: line(&cpu.model),
            mhz: cpu.mhz,
            usage_percent,
        },
        memory,
        load: LoadAverage {
            load1: tenth_hundredth(load.load1),
            load5: tenth_hundredth(load.load5),
            load15: tenth_hundredth(load.load15),
        },
        boot_time: crate::clock::utc_timestamp(boot),
        uptime_seconds: now.saturating_sub(first.stat.boot_time),
        disks: disks
            .into_iter()
            .map(|r| Disk {
                system_disk: system_disk.as_deref() == Some(r.id.as_str()),
                id: line(&r.id),
                dev_path: line(&r.spec.dev_path),
                size_bytes: r.spec.size,
                model: line(&r.spec.model),
                firmware_version: (!r.spec.firmware_version.is_empty())
                    .then(|| line(&r.spec.firmware_version)),
                serial: line(&r.spec.serial),
                transport: line(&r.spec.transport),
                rotational: r.spec.rotational,
                readonly: r.spec.readonly,
            })
            .collect(),
        volumes,
        ephemeral_directories,
        links: links
            .into_iter()
            .map(|r| Link {
                name: line(&r.id),
                kind: line(&r.spec.kind),
                up: matches!(r.spec.operational_state.as_str(), "up" | "unknown"),
                carrier: r.spec.link_state,
                operational_state: line(&r.spec.operational_state),
                mtu: r.spec.mtu,
                speed_mbps: (r.spec.speed_mbit > 0).then_some(r.spec.speed_mbit),
                hardware_address: line(&r.spec.hardware_addr),
            })
            .collect(),
        addresses: addresses
            .into_iter()
            .map(|r| Address {
                address: line(&r.spec.address),
                link: line(&r.spec.link_name),
                family: line(&r.spec.family),
                scope: line(&r.spec.scope),
            })
            .collect(),
        routes: RoutesSummary {
            count: route_list.len(),
            default_gateways,
            routes: route_list,
        },
        kubespan_peers: peers
            .into_iter()
            .map(|r| KubeSpanPeer {
                id: line(&r.id),
                label: line(&r.spec.label),
                endpoint: line(&r.spec.endpoint),
                state: line(&r.spec.state),
                received_bytes: r.spec.receive_bytes,
                transmitted_bytes: r.spec.transmit_bytes,
                last_handshake: line(&r.spec.last_handshake_time),
            })
            .collect(),
        connections: sockets
            .into_iter()
            .map(|c| Connection {
                protocol: line(&c.protocol),
                local_address: line(&c.local_ip),
                local_port: c.local_port,
                remote_address: line(&c.remote_ip),
                remote_port: c.remote_port,
                state: line(&c.state),
                pid: c.pid,
                process: line(&c.process),
            })
            .collect(),
        processes: process_usage(&first, &second, SortKey::Cpu),
        containers: containers
            .into_iter()
            // The pods' sandboxes carry the pod's name as their id; the containers do not.
            .filter(|c| c.id != c.pod)
            .map(|c| {
                let (namespace, pod) = c.pod.split_once('/').unwrap_or(("", &c.pod));
                ContainerState {
                    namespace: line(namespace),
                    pod: line(pod),
                    name: line(&c.name),
                    id: line(&c.id),
                    image: line(&c.image),
                    state: line(&container_state(&c.status)),
                    restarts: restarts
                        .iter()
                        .find(|r| r.namespace == namespace && r.pod == pod && r.container == c.name)
                        .map(|r| r.restarts),
                    pid: c.pid,
                }
            })
            .collect(),
    })
}

/// Load averages keep two decimals, as /proc/loadavg writes them.
fn tenth_hundredth(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// The CRI's `CONTAINER_RUNNING` (containerd's `RUNNING`) as `running`.
fn container_state(status: &str) -> String {
    status
        .strip_prefix("CONTAINER_")
        .unwrap_or(status)
        .to_ascii_lowercase()
}

/// One node's processes over `span`, busiest by `key` first.
pub async fn read_processes(
    talos: &TalosClient,
    id: &NodeIdentity,
    span: Duration,
    key: SortKey,
) -> Result<Vec<ProcessUsage>, NodeResourcesError> {
    let first = sample(talos, &id.address).await?;
    tokio::time::sleep(span).await;
    let second = sample(talos, &id.address).await?;
    node_cpu(&first, &second, &id.name)?;
    Ok(process_usage(&first, &second, key))
}

/// A node's CPU, memory and fullest volume over `span`: two `SystemStat`, one `Memory` and
/// one `Mounts` call.
pub async fn read_usage(talos: &TalosClient, id: &NodeIdentity, span: Duration) -> NodeUsage {
    let a = id.address.as_str();
    let read = async {
        let first = talos.system_stat(a).await?;
        let ((), memory, mounts) = tokio::try_join!(
            async {
                tokio::time::sleep(span).await;
                Ok::<(), TalosError>(())
            },
            talos.memory(a),
            talos.mounts(a),
        )?;
        let second = talos.system_stat(a).await?;
        Ok::<_, TalosError>((first, second, memory, mounts))
    };
    match read.await {
        Ok((first, second, memory, mounts)) => {
            let cpu = cpu_percent(&first.total, &second.total).map(tenth);
            judged(id, cpu, memory_percent(&memory), disk_percent(&mounts))
        }
        Err(e) => unread(id, &e),
    }
}

/// Nodes by usage: the worst level first, then by `key` (busiest first), then by name.
pub fn sort_nodes(list: &mut [NodeUsage], key: SortKey) {
    let figure = |n: &NodeUsage| match key {
        SortKey::Cpu => n.cpu_percent.unwrap_or(-1.0),
        SortKey::Memory => n.memory_percent.unwrap_or(-1.0),
    };
    list.sort_by(|a, b| {
        b.level
            .cmp(&a.level)
            .then(figure(b).total_cmp(&figure(a)))
            .then_with(|| crate::natural::natural_cmp(&a.node, &b.node))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(node: &str, cpu: f64, mem: f64, level: Level) -> NodeUsage {
        NodeUsage {
            node: node.into(),
            address: String::new(),
            cpu_percent: Some(cpu),
            memory_percent: Some(mem),
            disk_percent: None,
            level,
            error: None,
        }
    }

    #[test]
    fn nodes_rank_by_level_then_by_the_chosen_figure() {
        let mut list = vec![
            usage("w-1", 10.0, 70.0, Level::Ok),
            usage("w-2", 50.0, 20.0, Level::Ok),
            usage("cp-1", 5.0, 10.0, Level::Failing),
        ];
        sort_nodes(&mut list, SortKey::Cpu);
        let names: Vec<&str> = list.iter().map(|n| n.node.as_str()).collect();
        assert_eq!(names, ["cp-1", "w-2", "w-1"]);
        sort_nodes(&mut list, SortKey::Memory);
        let names: Vec<&str> = list.iter().map(|n| n.node.as_str()).collect();
        assert_eq!(names, ["cp-1", "w-1", "w-2"]);
    }

    #[test]
    fn processes_sort_by_cpu_or_memory() {
        let p = |pid: i32, cpu: f64, rss: u64| ProcessUsage {
            pid,
            ppid: 1,
            state: "S".into(),
            threads: 1,
            cpu_percent: cpu,
            rss_bytes: rss,
            command: String::new(),
            args: String::new(),
        };
        let mut list = vec![p(1, 2.0, 500), p(2, 99.0, 10), p(3, 2.0, 900)];
        sort_processes(&mut list, SortKey::Cpu);
        assert_eq!(list.iter().map(|p| p.pid).collect::<Vec<_>>(), [2, 1, 3]);
        sort_processes(&mut list, SortKey::Memory);
        assert_eq!(list.iter().map(|p| p.pid).collect::<Vec<_>>(), [3, 1, 2]);
    }

    #[test]
    fn the_tree_puts_children_under_their_parent_busiest_first_and_keeps_ancestors() {
        let p = |pid: i32, ppid: i32, cpu: f64, command: &str| ProcessUsage {
            pid,
            ppid,
            state: "S".into(),
            threads: 1,
            cpu_percent: cpu,
            rss_bytes: 0,
            command: command.into(),
            args: String::new(),
        };
        let list = vec![
            p(1, 0, 0.1, "init"),
            p(2, 0, 0.0, "kthreadd"),
            p(10, 1, 1.0, "containerd"),
            p(11, 1, 5.0, "kubelet"),
            p(20, 10, 99.0, "stress-ng"),
            p(30, 2, 0.0, "kworker"),
        ];
        let tree = process_tree(&list, SortKey::Cpu, |_| true);
        let shown: Vec<(usize, &str)> =
            tree.iter().map(|(d, p)| (*d, p.command.as_str())).collect();
        assert_eq!(
            shown,
            [
                (0, "init"),
                (1, "kubelet"),
                (1, "containerd"),
                (2, "stress-ng"),
                (0, "kthreadd"),
                (1, "kworker"),
            ]
        );
        let only = process_tree(&list, SortKey::Cpu, |p| p.command == "stress-ng");
        let shown: Vec<&str> = only.iter().map(|(_, p)| p.command.as_str()).collect();
        assert_eq!(shown, ["init", "containerd", "stress-ng"]);
        let shown = |tree, filter| -> Vec<(usize, String)> {
            let shown = shown_processes(&list, SortKey::Cpu, tree, filter);
            (shown.into_iter()).map(|(d, p)| (d, p.command)).collect()
        };
        let listed = [(0, "stress-ng".to_string())];
        assert_eq!(shown(false, "STRESS"), listed, "any case, no parents");
        assert_eq!(shown(true, "stress")[2], (2, "stress-ng".to_string()));
        assert_eq!(shown(false, "").len(), list.len());
    }

    #[test]
    fn container_states_read_as_words() {
        assert_eq!(container_state("CONTAINER_RUNNING"), "running");
        assert_eq!(container_state("CONTAINER_EXITED"), "exited");
        assert_eq!(container_state("RUNNING"), "running");
    }
}
