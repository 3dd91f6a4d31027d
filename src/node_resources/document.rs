//! What a node runs and holds, as one document: the values `node info` prints and
//! `--output json` carries under these field names (a contract the console's screens
//! share), every text from the node already made printable.
use serde::Serialize;

use super::usage::Level;

/// Everything `taloscope node info` reports about one node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeResources {
    pub node: String,
    pub address: String,
    /// `controlplane` or `worker`.
    pub machine_type: String,
    pub talos_version: String,
    /// The kernel as the node's kubelet reports it; `null` without a Kubernetes context or node.
    pub kernel_version: Option<String>,
    /// The worst of memory pressure and every volume's fill.
    pub level: Level,
    /// Each warning or failure, in words naming what (`EPHEMERAL is 96.0% full`).
    pub problems: Vec<String>,
    pub cpu: CpuUsage,
    pub memory: MemoryUsage,
    pub load: LoadAverage,
    /// UTC, RFC 3339.
    pub boot_time: String,
    pub uptime_seconds: u64,
    pub disks: Vec<Disk>,
    pub volumes: Vec<Volume>,
    /// What fills EPHEMERAL: `/var` and the directories below it, largest first.
    pub ephemeral_directories: Vec<DirectorySize>,
    pub links: Vec<Link>,
    pub addresses: Vec<Address>,
    pub routes: RoutesSummary,
    pub kubespan_peers: Vec<KubeSpanPeer>,
    pub connections: Vec<Connection>,
    /// Busiest first.
    pub processes: Vec<ProcessUsage>,
    /// The Kubernetes pods' containers (CRI namespace `k8s.io`).
    pub containers: Vec<ContainerState>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuUsage {
    pub count: usize,
    pub model: String,
    pub mhz: f64,
    /// Busy share of every CPU over the sample span; `null` when it could not be measured.
    pub usage_percent: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryUsage {
    pub total_bytes: u64,
    /// Total less available.
    pub used_bytes: u64,
    pub available_bytes: u64,
    pub used_percent: Option<f64>,
    /// `ok`, `warning` (≥ 80% used) or `failing` (≥ 90%).
    pub pressure: Level,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadAverage {
    pub load1: f64,
    pub load5: f64,
    pub load15: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Disk {
    pub id: String,
    pub dev_path: String,
    pub size_bytes: u64,
    pub model: String,
    /// `null` where the node does not say (Talos before v1.14).
    pub firmware_version: Option<String>,
    pub serial: String,
    pub transport: String,
    pub rotational: bool,
    pub readonly: bool,
    /// Talos is installed on it.
    pub system_disk: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Volume {
    pub id: String,
    pub phase: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub location: String,
    pub size_bytes: u64,
    pub filesystem: String,
    pub mount_point: String,
    /// From the mount's statfs; `null` for a volume not mounted.
    pub used_bytes: Option<u64>,
    pub free_bytes: Option<u64>,
    pub used_percent: Option<f64>,
    /// `ok`, `warning` (≥ 85% full) or `failing` (≥ 95%).
    pub level: Level,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DirectorySize {
    pub path: String,
    pub size_bytes: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Link {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// Operationally up: `operationalState` `up`, or `unknown` as the kernel says of links
    /// that report no state of their own (the loopback).
    pub up: bool,
    /// A carrier detected (`linkState`; false where the driver reports none).
    pub carrier: bool,
    pub operational_state: String,
    pub mtu: u32,
    /// `null` when the driver reports none.
    pub speed_mbps: Option<i64>,
    pub hardware_address: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Address {
    /// With its prefix length: `10.5.0.2/24`.
    pub address: String,
    pub link: String,
    pub family: String,
    pub scope: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RoutesSummary {
    pub count: usize,
    pub default_gateways: Vec<String>,
    pub routes: Vec<Route>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Route {
    /// Empty for the default route.
    pub destination: String,
    pub gateway: String,
    pub link: String,
    pub table: String,
    pub priority: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KubeSpanPeer {
    pub id: String,
    pub label: String,
    pub endpoint: String,
    /// `up`, `down` or `unknown`.
    pub state: String,
    pub received_bytes: i64,
    pub transmitted_bytes: i64,
    pub last_handshake: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Connection {
    pub protocol: String,
    pub local_address: String,
    pub local_port: u32,
    pub remote_address: String,
    pub remote_port: u32,
    /// `LISTEN`, `ESTABLISHED`, `TIME_WAIT`...
    pub state: String,
    pub pid: Option<u32>,
    pub process: String,
}

impl Connection {
    /// Whether it passes a filter by state (case-insensitive) and by port (local or remote).
    pub fn matches(&self, state: Option<&str>, port: Option<u32>) -> bool {
        state.is_none_or(|s| self.state.eq_ignore_ascii_case(s))
            && port.is_none_or(|p| self.local_port == p || self.remote_port == p)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProcessUsage {
    pub pid: i32,
    pub ppid: i32,
    pub state: String,
    pub threads: i32,
    /// Percent of one CPU over the sample span (200 = two CPUs busy).
    pub cpu_percent: f64,
    pub rss_bytes: u64,
    pub command: String,
    pub args: String,
}

impl ProcessUsage {
    /// Whether its command line (command or arguments) holds `filter`, in any case; an empty
    /// filter lets every process through.
    pub fn matches(&self, filter: &str) -> bool {
        let needle = filter.to_lowercase();
        needle.is_empty()
            || self.command.to_lowercase().contains(&needle)
            || self.args.to_lowercase().contains(&needle)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContainerState {
    /// The pod's Kubernetes namespace.
    pub namespace: String,
    pub pod: String,
    pub name: String,
    pub id: String,
    pub image: String,
    /// `running`, `exited`, `created`, `unknown` (the CRI state, lower case).
    pub state: String,
    /// From the pod's status in Kubernetes; `null` when Kubernetes was not asked or has no such
    /// container.
    pub restarts: Option<u32>,
    pub pid: u32,
}

/// One node of `taloscope top --context C`: its usage over the sample span.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeUsage {
    pub node: String,
    pub address: String,
    pub cpu_percent: Option<f64>,
    pub memory_percent: Option<f64>,
    /// The fullest mounted volume's fill (EPHEMERAL on most nodes).
    pub disk_percent: Option<f64>,
    pub level: Level,
    /// Why the node could not be read; the figures are then `null`.
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_filter_by_state_and_either_port() {
        let c = Connection {
            protocol: "tcp".into(),
            local_address: "10.0.0.2".into(),
            local_port: 41000,
            remote_address: "10.0.0.1".into(),
            remote_port: 6443,
            state: "ESTABLISHED".into(),
            pid: Some(900),
            process: "kubelet".into(),
        };
        assert!(c.matches(None, None));
        assert!(c.matches(Some("established"), Some(6443)));
        assert!(c.matches(None, Some(41000)));
        assert!(!c.matches(Some("LISTEN"), None));
        assert!(!c.matches(None, Some(2379)));
    }
}
