//! What a simulated machine has and runs: its CPUs, memory, disks and partitions, network
//! links, the processes of its Talos services and the pods' containers, each with the share of
//! a CPU it keeps busy. Fixed per node (its role, place and faults); node_life moves the
//! counters along with simulated time.
use std::net::Ipv4Addr;

use super::scenario::NodeRole;
use super::state::SimNode;

const GIB: u64 = 1024 * 1024 * 1024;
const MIB: u64 = 1024 * 1024;

/// The CPUs, memory and system disk of one machine.
#[derive(Clone, Debug, PartialEq)]
pub struct Hardware {
    pub cpus: u32,
    pub cpu_model: &'static str,
    pub cpu_mhz: f64,
    pub memory_total: u64,
    /// The share of memory in use with nothing abnormal running, 0..1.
    pub memory_used_share: f64,
    pub disks: Vec<DiskInfo>,
}

/// One block device as `Disks.block.talos.dev` describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct DiskInfo {
    /// The kernel name (`sda`), the resource's id.
    pub id: &'static str,
    pub size: u64,
    pub model: &'static str,
    pub serial: String,
    pub transport: &'static str,
    pub rotational: bool,
    /// Talos was installed on it.
    pub system: bool,
}

/// One partition volume of the system disk (`VolumeStatuses.block.talos.dev`).
#[derive(Clone, Debug, PartialEq)]
pub struct VolumeInfo {
    pub id: &'static str,
    pub location: &'static str,
    pub partition_index: u32,
    pub size: u64,
    /// `xfs`, `vfat`; `None` for a raw partition (META).
    pub filesystem: Option<&'static str>,
    /// Where its filesystem is mounted, when it is.
    pub mount: Option<&'static str>,
}

/// A process of the machine: a Talos service, a control-plane component, a pod's container.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessInfo {
    pub pid: i32,
    pub ppid: i32,
    pub command: String,
    pub executable: String,
    pub args: String,
    pub threads: i32,
    pub resident: u64,
    pub virtual_size: u64,
    /// Share of one CPU it keeps busy, 0..1.
    pub cpu_share: f64,
}

/// A CRI container of a pod in the `k8s.io` namespace.
#[derive(Clone, Debug, PartialEq)]
pub struct PodContainer {
    pub namespace: &'static str,
    pub pod: String,
    pub name: String,
    pub image: String,
    /// The pid of its main process.
    pub pid: u32,
}

/// A listening socket of a Talos service or component.
#[derive(Clone, Debug, PartialEq)]
pub struct Listener {
    pub port: u32,
    pub process: &'static str,
    pub pid: u32,
}

/// The system disk's partitions as Talos lays them out on install (siderolabs/talos
/// internal/pkg/partition and the volume configs of
/// internal/app/machined/pkg/controllers/block/internal/volumes: EFI, BIOS, BOOT, META, STATE,
/// EPHEMERAL; the EPHEMERAL partition takes the rest of the disk).
pub fn volumes(hardware: &Hardware) -> Vec<VolumeInfo> {
    let disk = hardware.disks.iter().find(|d| d.system);
    let disk_size = disk.map(|d| d.size).unwrap_or(0);
    let fixed = 100 * MIB + MIB + 1000 * MIB + MIB + 100 * MIB;
    vec![
        VolumeInfo {
            id: "META",
            location: "/dev/sda4",
            partition_index: 4,
            size: MIB,
            filesystem: None,
            mount: None,
        },
        VolumeInfo {
            id: "STATE",
            location: "/dev/sda5",
            partition_index: 5,
            size: 100 * MIB,
            filesystem: Some("xfs"),
            mount: Some("/system/state"),
        },
        VolumeInfo {
            id: "EPHEMERAL",
            location: "/dev/sda6",
            partition_index: 6,
            size: disk_size.saturating_sub(fixed),
            filesystem: Some("xfs"),
            mount: Some("/var"),
        },
    ]
}

/// The machine's hardware: control planes 4 CPUs and 8 GiB on a 64 GiB disk, workers 8 CPUs
/// and 16 GiB on 128 GiB plus a data disk; memory in use differs a little per node.
pub fn hardware(node: &SimNode) -> Hardware {
    let index = node.node_index as u64;
    let serial = |disk: u64| format!("SIM{:04}{:02}{disk}", node.cluster_index, index);
    let system_disk = |size: u64| DiskInfo {
        id: "sda",
        size,
        model: "QEMU HARDDISK",
        serial: serial(0),
        transport: "virtio",
        rotational: false,
        system: true,
    };
    match node.role() {
        NodeRole::ControlPlane => Hardware {
            cpus: 4,
            cpu_model: "AMD EPYC 7763 64-Core Processor",
            cpu_mhz: 2445.406,
            memory_total: 8 * GIB,
            memory_used_share: 0.46 + 0.03 * index as f64,
            disks: vec![system_disk(64 * GIB)],
        },
        NodeRole::Worker => Hardware {
            cpus: 8,
            cpu_model: "AMD EPYC 7763 64-Core Processor",
            cpu_mhz: 2445.406,
            memory_total: 16 * GIB,
            memory_used_share: 0.31 + 0.04 * (index % 5) as f64,
            disks: vec![
                system_disk(128 * GIB),
                DiskInfo {
                    id: "sdb",
                    size: 256 * GIB,
                    model: "QEMU HARDDISK",
                    serial: serial(1),
                    transport: "virtio",
                    rotational: true,
                    system: false,
                },
            ],
        },
    }
}

/// The share of EPHEMERAL in use: images, logs and etcd's data; 96% with `ephemeral_full`.
pub fn ephemeral_used_share(node: &SimNode) -> f64 {
    if node.spec.faults.ephemeral_full {
        0.96
    } else {
        0.22 + 0.02 * (node.node_index % 5) as f64
    }
}

/// The component images a node's pods run, from its Kubernetes version.
fn image(component: &str, version: &str) -> String {
    format!("registry.k8s.io/{component}:{version}")
}

/// The pods' containers in the CRI namespace: a control plane's static pods, kube-proxy
/// unless the cluster disabled it, and the spinning workload with `cpu_spin`.
pub fn pod_containers(node: &SimNode, kube_proxy: bool) -> Vec<PodContainer> {
    let status = node.status();
    let name = node.name().to_string();
    let mut out: Vec<PodContainer> = status
        .kubernetes
        .static_pods
        .iter()
        .enumerate()
        .map(|(i, c)| PodContainer {
            namespace: "kube-system",
            pod: format!("{}-{name}", c.name),
            name: c.name.clone(),
            image: image(&c.name, &c.version),
            pid: 2100 + i as u32,
        })
        .collect();
    if kube_proxy {
        out.push(PodContainer {
            namespace: "kube-system",
            pod: format!("kube-proxy-{:05x}", node.etcd_member_id & 0xfffff),
            name: "kube-proxy".into(),
            image: image("kube-proxy", &status.kubernetes.proxy_version),
            pid: 2200,
        });
    }
    if node.spec.faults.cpu_spin {
        out.push(PodContainer {
            namespace: "default",
            pod: "spinner-7f9c6d5b8-x2k4q".into(),
            name: "spinner".into(),
            image: "docker.io/alexeiled/stress-ng:0.12.05".into(),
            pid: 4242,
        });
    }
    out
}

/// The processes the node runs: machined as init, the Talos services, etcd and the static
/// pods on a control plane, the kubelet, and the pods' containers' main processes.
pub fn processes(node: &SimNode, kube_proxy: bool) -> Vec<ProcessInfo> {
    let cp = node.role() == NodeRole::ControlPlane;
    let tweak = 0.002 * (node.node_index % 5) as f64;
    let service = |pid: i32, command: &str, executable: &str, args: &str| ProcessInfo {
        pid,
        ppid: 1,
        command: command.to_string(),
        executable: executable.to_string(),
        args: args.to_string(),
        threads: 12,
        resident: 40 * MIB,
        virtual_size: 1200 * MIB,
        cpu_share: 0.004,
    };
    let mut out = vec![
        ProcessInfo {
            pid: 1,
            ppid: 0,
            threads: 24,
            resident: 90 * MIB,
            cpu_share: 0.02 + tweak,
            ..service(1, "machined", "/sbin/init", "/sbin/init")
        },
        service(
            612,
            "udevd",
            "/sbin/udevd",
            "/sbin/udevd --resolve-names=never",
        ),
        ProcessInfo {
            cpu_share: 0.01,
            ..service(700, "apid", "/sbin/apid", "/sbin/apid")
        },
        service(701, "trustd", "/sbin/trustd", "/sbin/trustd"),
        ProcessInfo {
            resident: 80 * MIB,
            cpu_share: 0.015,
            ..service(
                702,
                "containerd",
                "/bin/containerd",
                "/bin/containerd --address /system/run/containerd/containerd.sock",
            )
        },
        ProcessInfo {
            resident: 120 * MIB,
            cpu_share: 0.04 + tweak,
            ..service(
                900,
                "kubelet",
                "/usr/local/bin/kubelet",
                "/usr/local/bin/kubelet --config=/etc/kubernetes/kubelet.yaml",
            )
        },
    ];
    if cp {
        out.push(ProcessInfo {
            resident: 300 * MIB,
            cpu_share: 0.06 + tweak,
            ..service(
                800,
                "etcd",
                "/usr/local/bin/etcd",
                "/usr/local/bin/etcd --data-dir=/var/lib/etcd",
            )
        });
    }
    for c in pod_containers(node, kube_proxy) {
        let (resident, cpu_share) = match c.name.as_str() {
            "kube-apiserver" => (700 * MIB, 0.09 + tweak),
            "kube-controller-manager" => (110 * MIB, 0.02),
            "kube-scheduler" => (60 * MIB, 0.01),
            "spinner" => (12 * MIB, 1.0),
            _ => (45 * MIB, 0.005),
        };
        let (command, args) = match c.name.as_str() {
            "spinner" => ("stress-ng".to_string(), "stress-ng --cpu 1".to_string()),
            "kube-proxy" => (
                c.name.clone(),
                "/usr/local/bin/kube-proxy --config=/var/lib/kube-proxy/config.conf".to_string(),
            ),
            name => (name.to_string(), format!("/usr/local/bin/{name}")),
        };
        out.push(ProcessInfo {
            pid: c.pid as i32,
            // containerd-shim of the pod's sandbox.
            ppid: 2000,
            executable: if command == "stress-ng" {
                "/usr/bin/stress-ng".to_string()
            } else {
                format!("/usr/local/bin/{command}")
            },
            command,
            args,
            threads: 10,
            resident,
            virtual_size: 1500 * MIB,
            cpu_share,
        });
    }
    out
}

/// The sockets the node's services listen on (apid 50000, trustd 50001, the kubelet 10250,
/// etcd 2379/2380 and the API server 6443 on a control plane).
pub fn listeners(node: &SimNode) -> Vec<Listener> {
    let mut out = vec![
        Listener {
            port: 50000,
            process: "apid",
            pid: 700,
        },
        Listener {
            port: 50001,
            process: "trustd",
            pid: 701,
        },
        Listener {
            port: 10250,
            process: "kubelet",
            pid: 900,
        },
    ];
    if node.role() == NodeRole::ControlPlane {
        out.extend([
            Listener {
                port: 2379,
                process: "etcd",
                pid: 800,
            },
            Listener {
                port: 2380,
                process: "etcd",
                pid: 800,
            },
            Listener {
                port: 6443,
                process: "kube-apiserver",
                pid: 2100,
            },
        ]);
    }
    out
}

/// The gateway of the node's network: `.254` of its /24.
pub fn gateway(address: Ipv4Addr) -> Ipv4Addr {
    let [a, b, c, _] = address.octets();
    Ipv4Addr::new(a, b, c, 254)
}
