//! The MachineService reads of what runs inside a node, answered from node_life's counters:
//! `SystemStat`, `CPUInfo`, `Memory`, `LoadAvg`, `Processes`, `Containers`, `Netstat`,
//! `DiskUsage` and `Mounts`, each as siderolabs/talos answers it (v1.10.0 to v1.14.0-rc.1
//! serve them alike): internal/app/machined/internal/server/v1alpha1/v1alpha1_monitoring.go
//! (`SystemStat`, `CPUInfo`, `LoadAvg`) and v1alpha1_server.go (the others).
use tonic::Status;

use super::apid::Target;
use crate::model::core::Core;
use crate::model::machine_inventory::{self, Hardware};
use crate::model::scenario::NodeRole;
use crate::node_life::machine_load::{MachineLoad, machine_load};
use taloscope_proto::common::ContainerDriver;
use taloscope_proto::machine::*;

/// The CRI's containerd namespace and Talos's own (pkg/machinery/constants:
/// `K8sContainerdNamespace`, `SystemContainerdNamespace`).
const K8S_NAMESPACE: &str = "k8s.io";
const SYSTEM_NAMESPACE: &str = "system";

fn load(core: &Core, t: &Target) -> MachineLoad {
    machine_load(core, &t.node, !t.cluster.kube_proxy_disabled)
}

fn cpu_stat(user: f64, system: f64, idle: f64) -> CpuStat {
    CpuStat {
        user,
        system,
        idle,
        ..CpuStat::default()
    }
}

/// /proc/stat through procfs: `btime`, the `cpu` total and one line per CPU.
pub(super) fn system_stat(core: &Core, t: &Target) -> SystemStat {
    let l = load(core, t);
    let cpu: Vec<CpuStat> = l
        .cpus
        .iter()
        .map(|c| cpu_stat(c.user, c.system, c.idle))
        .collect();
    let total = l.cpus.iter().fold(CpuStat::default(), |sum, c| {
        cpu_stat(sum.user + c.user, sum.system + c.system, sum.idle + c.idle)
    });
    let running = l
        .processes
        .iter()
        .filter(|(p, _)| p.cpu_share >= 1.0)
        .count() as u64
        + 1;
    SystemStat {
        metadata: None,
        boot_time: l.boot_time,
        cpu_total: Some(total),
        cpu,
        context_switches: (l.uptime * 2400.0) as u64,
        process_created: 300 + (l.uptime / 20.0) as u64,
        process_running: running,
        ..SystemStat::default()
    }
}

/// /proc/cpuinfo, one entry per logical CPU.
pub(super) fn cpu_info(t: &Target) -> CpUsInfo {
    let hw: Hardware = machine_inventory::hardware(&t.node);
    let cpu_info = (0..hw.cpus)
        .map(|i| CpuInfo {
            processor: i,
            vendor_id: "AuthenticAMD".into(),
            cpu_family: "25".into(),
            model: "1".into(),
            model_name: hw.cpu_model.into(),
            cpu_mhz: hw.cpu_mhz,
            cache_size: "512 KB".into(),
            physical_id: "0".into(),
            siblings: hw.cpus,
            core_id: i.to_string(),
            cpu_cores: hw.cpus,
            fpu: "yes".into(),
            flags: vec!["fpu".into(), "sse4_2".into(), "avx2".into()],
            address_sizes: "48 bits physical, 48 bits virtual".into(),
            ..CpuInfo::default()
        })
        .collect();
    CpUsInfo {
        metadata: None,
        cpu_info,
    }
}

/// /proc/meminfo through procfs: the values in KiB, as the kernel writes them.
pub(super) fn memory(core: &Core, t: &Target) -> Memory {
    let m = load(core, t).memory;
    Memory {
        metadata: None,
        meminfo: Some(MemInfo {
            memtotal: m.total_kib,
            memfree: m.free_kib,
            memavailable: m.available_kib,
            buffers: m.buffers_kib,
            cached: m.cached_kib,
            ..MemInfo::default()
        }),
    }
}

/// /proc/loadavg.
pub(super) fn load_avg(core: &Core, t: &Target) -> LoadAvg {
    let [load1, load5, load15] = load(core, t).load;
    LoadAvg {
        metadata: None,
        load1,
        load5,
        load15,
    }
}

/// Every process, as internal/pkg/miniprocfs reads /proc/<pid>: `cpu_time` is utime + stime
/// in seconds.
pub(super) fn processes(core: &Core, t: &Target) -> Process {
    let processes = load(core, t)
        .processes
        .into_iter()
        .map(|(p, cpu_time)| ProcessInfo {
            pid: p.pid,
            ppid: p.ppid,
            state: if p.cpu_share >= 1.0 { "R" } else { "S" }.into(),
            threads: p.threads,
            cpu_time,
            virtual_memory: p.virtual_size,
            resident_memory: p.resident,
            command: p.command,
            executable: p.executable,
            args: p.args,
            label: String::new(),
        })
        .collect();
    Process {
        metadata: None,
        processes,
    }
}

/// `getContainerInspector` and `Containers`: the namespace is required, the CRI driver reads
/// only `k8s.io` (a pod's sandbox, then its containers, internal/pkg/containers/cri/cri.go),
/// the containerd driver any namespace (`system`: Talos's own service containers,
/// internal/pkg/containers/containerd/containerd.go, status upper-cased).
pub(super) fn containers(t: &Target, req: &ContainersRequest) -> Result<Container, Status> {
    if req.namespace.is_empty() {
        return Err(Status::invalid_argument("namespace can't be empty"));
    }
    let cri = req.driver == ContainerDriver::Cri as i32;
    if cri && req.namespace != K8S_NAMESPACE {
        return Err(Status::unknown(
            "CRI inspector is supported only for K8s namespace",
        ));
    }
    let containers = match req.namespace.as_str() {
        K8S_NAMESPACE => pod_containers(t, &req.namespace, cri),
        SYSTEM_NAMESPACE => system_containers(t),
        _ => Vec::new(),
    };
    Ok(Container {
        metadata: None,
        containers,
    })
}

/// A container's id as the CRI shows it (12 hex digits), stable per main process.
pub(super) fn container_id(pid: u32) -> String {
    format!("{:012x}", (u64::from(pid) * 0x9e37_79b9) & 0xffff_ffff_ffff)
}

fn pod_containers(t: &Target, namespace: &str, cri: bool) -> Vec<ContainerInfo> {
    let mut out = Vec::new();
    for c in machine_inventory::pod_containers(&t.node, !t.cluster.kube_proxy_disabled) {
        let pod = format!("{}/{}", c.namespace, c.pod);
        let id = container_id(c.pid);
        if cri {
            out.push(ContainerInfo {
                namespace: namespace.into(),
                id: pod.clone(),
                internal_id: format!("sandbox{id}"),
                pod_id: pod.clone(),
                name: pod.clone(),
                status: "SANDBOX_READY".into(),
                ..ContainerInfo::default()
            });
        }
        out.push(ContainerInfo {
            namespace: namespace.into(),
            id: format!("{pod}:{}:{id}", c.name),
            internal_id: id,
            pod_id: pod,
            name: c.name,
            image: c.image,
            pid: c.pid,
            status: if cri { "CONTAINER_RUNNING" } else { "RUNNING" }.into(),
            ..ContainerInfo::default()
        });
    }
    out
}

fn system_containers(t: &Target) -> Vec<ContainerInfo> {
    let mut ids = vec![("apid", 700), ("trustd", 701), ("kubelet", 900)];
    if t.node.role() == NodeRole::ControlPlane {
        ids.push(("etcd", 800));
    }
    ids.into_iter()
        .map(|(id, pid)| ContainerInfo {
            namespace: SYSTEM_NAMESPACE.into(),
            id: id.into(),
            internal_id: id.into(),
            pod_id: id.into(),
            name: id.into(),
            image: format!("ghcr.io/siderolabs/{id}"),
            pid,
            status: "RUNNING".into(),
            ..ContainerInfo::default()
        })
        .collect()
}

fn connect_record(
    local: (&str, u32),
    remote: (&str, u32),
    state: connect_record::State,
    process: Option<(u32, &str)>,
) -> ConnectRecord {
    ConnectRecord {
        l4proto: "tcp".into(),
        localip: local.0.into(),
        localport: local.1,
        remoteip: remote.0.into(),
        remoteport: remote.1,
        state: state as i32,
        process: Some(
            process
                .map(|(pid, name)| connect_record::Process {
                    pid,
                    name: name.into(),
                })
                .unwrap_or_default(),
        ),
        ..ConnectRecord::default()
    }
}

/// `Netstat`: the host network's TCP sockets when the request asks for TCP in it, filtered as
/// upstream filters (LISTENING: no remote endpoint; CONNECTED: one), the process only with
/// the `pid` feature. The node's listeners, its kubelet's connections to every control
/// plane's API server, and a control plane's etcd peer connections.
pub(super) fn netstat(t: &Target, req: &NetstatRequest) -> Result<Netstat, Status> {
    use connect_record::State;
    let filter = netstat_request::Filter::try_from(req.filter)
        .map_err(|_| Status::invalid_argument(format!("invalid filter: {}", req.filter)))?;
    let tcp = req.l4proto.as_ref().is_some_and(|p| p.tcp);
    let host = req.netns.as_ref().is_some_and(|n| n.hostnetwork);
    let pid = req.feature.as_ref().is_some_and(|f| f.pid);
    let mut records = Vec::new();
    if tcp && host {
        let me = t.node.address().to_string();
        for l in machine_inventory::listeners(&t.node) {
            let process = pid.then_some((l.pid, l.process));
            records.push(connect_record(
                ("0.0.0.0", l.port),
                ("0.0.0.0", 0),
                State::Listen,
                process,
            ));
        }
        let peers = t.cluster.nodes();
        for (i, peer) in peers.iter().enumerate() {
            if peer.role() != NodeRole::ControlPlane || peer.name() == t.node.name() {
                continue;
            }
            let address = peer.address().to_string();
            records.push(connect_record(
                (&me, 41000 + i as u32),
                (&address, 6443),
                State::Established,
                pid.then_some((900, "kubelet")),
            ));
            if t.node.role() == NodeRole::ControlPlane {
                records.push(connect_record(
                    (&me, 45000 + i as u32),
                    (&address, 2380),
                    State::Established,
                    pid.then_some((800, "etcd")),
                ));
            }
        }
    }
    records.retain(|r| {
        let listening = r.remoteport == 0;
        match filter {
            netstat_request::Filter::All => true,
            netstat_request::Filter::Listening => listening,
            netstat_request::Filter::Connected => !listening,
        }
    });
    Ok(Netstat {
        metadata: None,
        connectrecord: records,
    })
}

const MIB: u64 = 1024 * 1024;

/// `Mounts`: /proc/mounts with each mount point's statfs size and space available.
pub(super) fn mounts(core: &Core, t: &Target) -> Mounts {
    let l = load(core, t);
    let mut stats = vec![
        MountStat {
            filesystem: "/dev/loop0".into(),
            size: 68 * MIB,
            available: 0,
            mounted_on: "/".into(),
        },
        MountStat {
            filesystem: "tmpfs".into(),
            size: l.hardware.memory_total / 2,
            available: l.hardware.memory_total / 2 - 2 * MIB,
            mounted_on: "/run".into(),
        },
    ];
    for v in machine_inventory::volumes(&l.hardware) {
        let Some(mount) = v.mount else { continue };
        // The filesystem's own metadata takes about 1% of the partition.
        let size = v.size - v.size / 100;
        let used = if v.id == "EPHEMERAL" {
            l.ephemeral_used
        } else {
            size / 20
        };
        stats.push(MountStat {
            filesystem: v.location.into(),
            size,
            available: size.saturating_sub(used),
            mounted_on: mount.into(),
        });
    }
    Mounts {
        metadata: None,
        stats,
    }
}

/// `DiskUsage`: each path walked, directories sent after their contents with their total
/// size, entries at depth ≥ `recursion_depth` left out (when > 0), files only with `all`, the
/// threshold applied. The sim's filesystem holds EPHEMERAL's tree under `/var`; any other
/// path answers as a missing one does (the walker's lstat error in the record).
pub(super) fn disk_usage(core: &Core, t: &Target, req: &DiskUsageRequest) -> Vec<DiskUsageInfo> {
    let used = load(core, t).ephemeral_used as i64;
    let cp = t.node.role() == NodeRole::ControlPlane;
    let share = |percent: i64| used / 100 * percent;
    let etcd = if cp { share(12) } else { 0 };
    let log = share(8);
    let kubelet = share(7);
    let containerd = used - etcd - log - kubelet;
    let lib = containerd + etcd + kubelet;
    // Post-order, as the walk flushes a directory once past its contents.
    let mut tree: Vec<(&str, i64)> = vec![("lib/containerd", containerd)];
    if cp {
        tree.push(("lib/etcd", etcd));
    }
    tree.extend([
        ("lib/kubelet", kubelet),
        ("lib", lib),
        ("log", log),
        (".", used),
    ]);
    let mut out = Vec::new();
    for path in &req.paths {
        let mut path = if path.starts_with('/') {
            path.clone()
        } else {
            format!("/{path}")
        };
        while path.len() > 1 && path.ends_with('/') {
            path.pop();
        }
        if path != "/var" {
            out.push(DiskUsageInfo {
                metadata: None,
                name: path.clone(),
                size: 0,
                error: format!("lstat {path}: no such file or directory"),
                relative_name: path.clone(),
            });
            continue;
        }
        for (relative, size) in &tree {
            let depth = if *relative == "." {
                0
            } else {
                relative.matches('/').count() as i32 + 1
            };
            let skip = (req.recursion_depth > 0 && depth >= req.recursion_depth)
                || (req.threshold > 0 && *size < req.threshold)
                || (req.threshold < 0 && *size > -req.threshold);
            if skip {
                continue;
            }
            let name = if *relative == "." {
                path.clone()
            } else {
                format!("{path}/{relative}")
            };
            out.push(DiskUsageInfo {
                metadata: None,
                name,
                size: *size,
                error: String::new(),
                relative_name: relative.to_string(),
            });
        }
    }
    out
}
