//! The COSI resources of a node's disks, volumes and network, with the YAML keys of
//! siderolabs/talos pkg/machinery/resources: block/disk.go (`Disks`, `firmware_version` from
//! v1.14), block/system_disk.go, block/volume_status.go (in the `runtime` namespace,
//! block.go's `NamespaceName`), network/link_status.go, address_status.go, route_status.go
//! (`network`) and kubespan/peer_status.go (`kubespan`: every other node of the cluster
//! while KubeSpan is on, none while it is off).
use std::fmt::Write as _;

use super::apid::Target;
use super::cosi::resource;
use crate::model::machine_inventory::{self, DiskInfo};
use crate::model::scenario::parse_version;
use taloscope_proto::cosi::resource::Resource;

pub(super) const DISK: &str = "Disks.block.talos.dev";
pub(super) const SYSTEM_DISK: &str = "SystemDisks.block.talos.dev";
pub(super) const VOLUME_STATUS: &str = "VolumeStatuses.block.talos.dev";
pub(super) const LINK_STATUS: &str = "LinkStatuses.net.talos.dev";
pub(super) const ADDRESS_STATUS: &str = "AddressStatuses.net.talos.dev";
pub(super) const ROUTE_STATUS: &str = "RouteStatuses.net.talos.dev";
pub(super) const KUBESPAN_PEER_STATUS: &str = "KubeSpanPeerStatuses.kubespan.talos.dev";

/// The namespace each of these types lives in.
pub(super) fn home(kind: &str) -> Option<&'static str> {
    match kind {
        DISK | SYSTEM_DISK | VOLUME_STATUS => Some("runtime"),
        LINK_STATUS | ADDRESS_STATUS | ROUTE_STATUS => Some("network"),
        KUBESPAN_PEER_STATUS => Some("kubespan"),
        _ => None,
    }
}

/// Every resource of `kind` the node has.
pub(super) fn resources(t: &Target, kind: &str) -> Vec<Resource> {
    match kind {
        DISK => disks(t),
        SYSTEM_DISK => system_disk(t).into_iter().collect(),
        VOLUME_STATUS => volume_statuses(t),
        LINK_STATUS => link_statuses(t),
        ADDRESS_STATUS => address_statuses(t),
        ROUTE_STATUS => route_statuses(t),
        KUBESPAN_PEER_STATUS => kubespan_peers(t),
        _ => Vec::new(),
    }
}

/// go-humanize's `Bytes`, as the block controllers print sizes (SI units).
fn pretty(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    if value < 10.0 && unit > 0 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

fn at_least(t: &Target, minor: u64) -> bool {
    parse_version(&t.node.status.borrow().talos_version)
        .is_some_and(|(major, m, _)| (major, m) >= (1, minor))
}

fn disk_yaml(t: &Target, d: &DiskInfo) -> String {
    let mut yaml = format!(
        "dev_path: /dev/{id}\nsize: {size}\npretty_size: {pretty}\nio_size: 512\nsector_size: 512\nreadonly: false\ncdrom: false\nmodel: {model}\n",
        id = d.id,
        size = d.size,
        pretty = pretty(d.size),
        model = d.model,
    );
    if at_least(t, 14) {
        yaml.push_str("firmware_version: \"2.5+\"\n");
    }
    let _ = write!(
        yaml,
        "serial: {serial}\nbus_path: /pci0000:00/0000:00:0{n}.0/virtio{n}\nsub_system: /sys/class/block\ntransport: {transport}\n",
        serial = d.serial,
        n = if d.system { 5 } else { 6 },
        transport = d.transport,
    );
    if d.rotational {
        yaml.push_str("rotational: true\n");
    }
    yaml
}

fn disks(t: &Target) -> Vec<Resource> {
    machine_inventory::hardware(&t.node)
        .disks
        .iter()
        .map(|d| {
            resource(
                "runtime",
                DISK,
                d.id,
                1,
                "block.DisksController",
                disk_yaml(t, d),
            )
        })
        .collect()
}

fn system_disk(t: &Target) -> Option<Resource> {
    let hw = machine_inventory::hardware(&t.node);
    let d = hw.disks.iter().find(|d| d.system)?;
    Some(resource(
        "runtime",
        SYSTEM_DISK,
        "system-disk",
        1,
        "block.SystemDiskController",
        format!("diskID: {id}\ndevPath: /dev/{id}\n", id = d.id),
    ))
}

fn volume_statuses(t: &Target) -> Vec<Resource> {
    let hw = machine_inventory::hardware(&t.node);
    machine_inventory::volumes(&hw)
        .into_iter()
        .map(|v| {
            let mut yaml = format!(
                "phase: ready\ntype: partition\nlocation: {loc}\nmountLocation: {loc}\npartitionIndex: {index}\nparentLocation: /dev/sda\nsize: {size}\nprettySize: {pretty}\n",
                loc = v.location,
                index = v.partition_index,
                size = v.size,
                pretty = pretty(v.size),
            );
            if let Some(fs) = v.filesystem {
                let _ = writeln!(yaml, "filesystem: {fs}");
            }
            if let Some(target) = v.mount {
                let _ = write!(
                    yaml,
                    "mountSpec:\n    targetPath: {target}\n    selinuxLabel: system_u:object_r:{label}_t:s0\n    projectQuotaSupport: {quota}\n",
                    label = if target == "/var" { "ephemeral" } else { "system_state" },
                    quota = target == "/var",
                );
            }
            resource(
                "runtime",
                VOLUME_STATUS,
                v.id,
                4,
                "block.VolumeManagerController",
                yaml,
            )
        })
        .collect()
}

fn link_statuses(t: &Target) -> Vec<Resource> {
    let mac = format!(
        "52:54:00:{:02x}:{:02x}:{:02x}",
        t.node.cluster_index,
        t.node.node_index,
        t.node.etcd_member_id & 0xff
    );
    let lo = "index: 1\ntype: loopback\nlinkIndex: 0\nflags: UP,LOOPBACK,RUNNING,LOWER_UP\nhardwareAddr: 00:00:00:00:00:00\npermanentAddr: 00:00:00:00:00:00\nbroadcastAddr: 00:00:00:00:00:00\nmtu: 65536\nqueueDisc: noqueue\noperationalState: unknown\nkind: \"\"\nslaveKind: \"\"\nlinkState: false\nport: Other\nduplex: Unknown\n".to_string();
    let eth0 = format!(
        "index: 2\ntype: ether\nlinkIndex: 0\nflags: UP,BROADCAST,RUNNING,MULTICAST,LOWER_UP\nhardwareAddr: {mac}\npermanentAddr: {mac}\nbroadcastAddr: ff:ff:ff:ff:ff:ff\nmtu: 1500\nqueueDisc: fq_codel\noperationalState: up\nkind: \"\"\nslaveKind: \"\"\nbusPath: 0000:00:03.0\ndriver: virtio_net\nlinkState: true\nspeedMbit: 10000\nport: Other\nduplex: Full\n"
    );
    let mut links = vec![
        resource(
            "network",
            LINK_STATUS,
            "lo",
            2,
            "network.LinkStatusController",
            lo,
        ),
        resource(
            "network",
            LINK_STATUS,
            "eth0",
            3,
            "network.LinkStatusController",
            eth0,
        ),
    ];
    if t.cluster.kubespan {
        // The WireGuard link KubeSpan manages (pkg/machinery/constants: `KubeSpanLinkName`,
        // `KubeSpanLinkMTU`).
        let kubespan = "index: 3\ntype: nohw\nlinkIndex: 0\nflags: UP,POINTOPOINT,NOARP,RUNNING,LOWER_UP\nhardwareAddr: \"\"\npermanentAddr: \"\"\nbroadcastAddr: \"\"\nmtu: 1420\nqueueDisc: noqueue\noperationalState: unknown\nkind: wireguard\nslaveKind: \"\"\nlinkState: true\nport: Other\nduplex: Unknown\n".to_string();
        links.push(resource(
            "network",
            LINK_STATUS,
            "kubespan",
            2,
            "network.LinkStatusController",
            kubespan,
        ));
    }
    links
}

/// Every other node of the cluster as a peer, up, on KubeSpan's port (pkg/machinery/constants
/// `KubeSpanDefaultPort`); the id is the peer's WireGuard public key.
fn kubespan_peers(t: &Target) -> Vec<Resource> {
    if !t.cluster.kubespan {
        return Vec::new();
    }
    let handshake = crate::kube_api::objects::rfc3339(crate::model::clock::now_unix());
    t.cluster
        .nodes()
        .iter()
        .filter(|peer| peer.name() != t.node.name())
        .map(|peer| {
            let key = format!("{:016x}{:016x}", peer.etcd_member_id, !peer.etcd_member_id);
            let endpoint = format!("{}:51820", peer.address());
            let yaml = format!(
                "endpoint: {endpoint}\nlabel: {label}\nstate: up\nreceiveBytes: {rx}\ntransmitBytes: {tx}\nlastHandshakeTime: {handshake}\nlastUsedEndpoint: {endpoint}\nlastEndpointChange: {handshake}\n",
                label = peer.name(),
                rx = 1_200_000 + 1000 * peer.node_index,
                tx = 900_000 + 1000 * peer.node_index,
            );
            resource(
                "kubespan",
                KUBESPAN_PEER_STATUS,
                &key,
                1,
                "kubespan.PeerStatusController",
                yaml,
            )
        })
        .collect()
}

fn address_statuses(t: &Target) -> Vec<Resource> {
    let address = t.node.address();
    let status = |link: &str, index: u32, prefix: String, local: String, scope: &str| {
        let id = format!("{link}/{prefix}");
        let yaml = format!(
            "address: {prefix}\nlocal: {local}\nlinkIndex: {index}\nlinkName: {link}\nfamily: inet4\nscope: {scope}\nflags: permanent\npriority: 0\n"
        );
        resource(
            "network",
            ADDRESS_STATUS,
            &id,
            1,
            "network.AddressStatusController",
            yaml,
        )
    };
    vec![
        status("lo", 1, "127.0.0.1/8".into(), "127.0.0.1".into(), "host"),
        status(
            "eth0",
            2,
            format!("{address}/24"),
            address.to_string(),
            "global",
        ),
    ]
}

fn route_statuses(t: &Target) -> Vec<Resource> {
    let address = t.node.address();
    let [a, b, c, _] = address.octets();
    let gateway = machine_inventory::gateway(address);
    let route = |id: String, yaml: String| {
        resource(
            "network",
            ROUTE_STATUS,
            &id,
            1,
            "network.RouteStatusController",
            yaml,
        )
    };
    vec![
        route(
            format!("inet4/{gateway}//1024"),
            format!(
                "family: inet4\ndst: \"\"\nsrc: {address}\ngateway: {gateway}\noutLinkIndex: 2\noutLinkName: eth0\ntable: main\npriority: 1024\nscope: global\ntype: unicast\nflags: \"\"\nprotocol: static\n"
            ),
        ),
        route(
            format!("inet4//{a}.{b}.{c}.0/24/0"),
            format!(
                "family: inet4\ndst: {a}.{b}.{c}.0/24\nsrc: {address}\ngateway: \"\"\noutLinkIndex: 2\noutLinkName: eth0\ntable: main\npriority: 0\nscope: link\ntype: unicast\nflags: \"\"\nprotocol: kernel\n"
            ),
        ),
    ]
}
