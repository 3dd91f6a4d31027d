//! The reads of what runs inside one node (`machine.MachineService`, reader role):
//! `SystemStat`, `CPUInfo`, `Memory`, `LoadAvg`, `Processes`, `Containers`, `Netstat`,
//! `Mounts` and `DiskUsage`, as siderolabs/talos api/machine/machine.proto defines them
//! (unchanged v1.10.0..v1.14.0-rc.1). Each is bounded by the call timeout and a reply size
//! far below Talos's own 32 MiB, and its lists are cut at a count a node never reaches.
use futures::StreamExt;

use super::calls::to_status;
use super::client::{Retry, TalosClient, metadata_error, node_message};
use super::error::TalosError;
use crate::proto::common;
use crate::proto::machine::{self as pb, machine_service_client::MachineServiceClient};

/// The largest reply of one of these reads: a node with 4000 processes answers ~1 MiB.
const MAX_READ_REPLY: usize = 8 * 1024 * 1024;
/// At most this many items of one list (processes, containers, sockets, mounts, paths).
pub const MAX_ITEMS: usize = 20_000;

fn reads(ch: tonic::transport::Channel) -> MachineServiceClient<tonic::transport::Channel> {
    MachineServiceClient::new(ch).max_decoding_message_size(MAX_READ_REPLY)
}

/// Seconds one CPU (or all of them) spent in each mode since boot (/proc/stat).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    pub user: f64,
    pub nice: f64,
    pub system: f64,
    pub idle: f64,
    pub iowait: f64,
    pub irq: f64,
    pub soft_irq: f64,
    pub steal: f64,
}

impl CpuTimes {
    /// Every mode but idle and iowait, as `top` counts a CPU busy.
    pub fn busy(&self) -> f64 {
        self.user + self.nice + self.system + self.irq + self.soft_irq + self.steal
    }

    pub fn total(&self) -> f64 {
        self.busy() + self.idle + self.iowait
    }
}

impl From<pb::CpuStat> for CpuTimes {
    fn from(s: pb::CpuStat) -> Self {
        CpuTimes {
            user: s.user,
            nice: s.nice,
            system: s.system,
            idle: s.idle,
            iowait: s.iowait,
            irq: s.irq,
            soft_irq: s.soft_irq,
            steal: s.steal,
        }
    }
}

/// One `SystemStat` reading.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SystemStatSample {
    /// Unix seconds of the boot.
    pub boot_time: u64,
    pub total: CpuTimes,
    pub cpus: Vec<CpuTimes>,
}

/// The CPUs `CPUInfo` lists.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuModel {
    pub count: usize,
    /// The first CPU's model name.
    pub model: String,
    pub mhz: f64,
}

/// `Memory`'s main figures, in bytes (the kernel's KiB times 1024).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryFigures {
    pub total: u64,
    pub free: u64,
    pub available: u64,
    pub buffers: u64,
    pub cached: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoadAverages {
    pub load1: f64,
    pub load5: f64,
    pub load15: f64,
}

/// One process of a `Processes` reading.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcessSample {
    pub pid: i32,
    pub ppid: i32,
    pub state: String,
    pub threads: i32,
    /// User + system seconds since it started.
    pub cpu_time: f64,
    pub resident: u64,
    pub command: String,
    pub args: String,
}

/// One entry of `Containers`: a pod's sandbox or one of its containers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerEntry {
    pub namespace: String,
    pub id: String,
    /// `namespace/name` of the pod.
    pub pod: String,
    pub name: String,
    pub image: String,
    pub pid: u32,
    /// As the runtime says it (`CONTAINER_RUNNING`, `SANDBOX_READY`, `RUNNING`...).
    pub status: String,
}

/// One socket of `Netstat`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Connection {
    pub protocol: String,
    pub local_ip: String,
    pub local_port: u32,
    pub remote_ip: String,
    pub remote_port: u32,
    /// `LISTEN`, `ESTABLISHED`, `TIME_WAIT`... as machine.proto names them.
    pub state: String,
    pub pid: Option<u32>,
    pub process: String,
}

/// One mount of `Mounts`, from statfs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MountUsage {
    pub filesystem: String,
    pub mounted_on: String,
    pub size: u64,
    pub available: u64,
}

/// One entry of `DiskUsage`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathUsage {
    pub path: String,
    pub size: i64,
    /// Why the node could not walk it.
    pub error: Option<String>,
}

/// The CRI containerd namespace (pkg/machinery/constants `K8sContainerdNamespace`).
pub const KUBERNETES_NAMESPACE: &str = "k8s.io";

fn state_name(state: i32) -> String {
    pb::connect_record::State::try_from(state)
        .map(|s| s.as_str_name().to_string())
        .unwrap_or_else(|_| format!("STATE_{state}"))
}

fn bounded<T>(mut items: Vec<T>) -> Vec<T> {
    items.truncate(MAX_ITEMS);
    items
}

impl TalosClient {
    /// /proc/stat: boot time and CPU times.
    pub async fn system_stat(&self, node: &str) -> Result<SystemStatSample, TalosError> {
        const CALL: &str = "SystemStat";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| async move {
                reads(ch)
                    .system_stat(self.request(node, CALL, (), t).map_err(to_status)?)
                    .await
            })
            .await?;
        let m = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(SystemStatSample {
            boot_time: m.boot_time,
            total: m.cpu_total.map(CpuTimes::from).unwrap_or_default(),
            cpus: bounded(m.cpu).into_iter().map(CpuTimes::from).collect(),
        })
    }

    /// /proc/cpuinfo: how many CPUs and of what model.
    pub async fn cpu_info(&self, node: &str) -> Result<CpuModel, TalosError> {
        const CALL: &str = "CPUInfo";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| async move {
                reads(ch)
                    .cpu_info(self.request(node, CALL, (), t).map_err(to_status)?)
                    .await
            })
            .await?;
        let m = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        let first = m.cpu_info.first().cloned().unwrap_or_default();
        Ok(CpuModel {
            count: m.cpu_info.len().min(MAX_ITEMS),
            model: first.model_name,
            mhz: first.cpu_mhz,
        })
    }

    /// /proc/meminfo.
    pub async fn memory(&self, node: &str) -> Result<MemoryFigures, TalosError> {
        const CALL: &str = "Memory";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| async move {
                reads(ch)
                    .memory(self.request(node, CALL, (), t).map_err(to_status)?)
                    .await
            })
            .await?;
        let m = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        let info = m.meminfo.ok_or_else(|| TalosError::Decode {
            node: node.to_string(),
            call: CALL,
            reason: "the reply holds no meminfo".into(),
        })?;
        let bytes = |kib: u64| kib.saturating_mul(1024);
        Ok(MemoryFigures {
            total: bytes(info.memtotal),
            free: bytes(info.memfree),
            available: bytes(info.memavailable),
            buffers: bytes(info.buffers),
            cached: bytes(info.cached),
        })
    }

    /// /proc/loadavg.
    pub async fn load_avg(&self, node: &str) -> Result<LoadAverages, TalosError> {
        const CALL: &str = "LoadAvg";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| async move {
                reads(ch)
                    .load_avg(self.request(node, CALL, (), t).map_err(to_status)?)
                    .await
            })
            .await?;
        let m = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(LoadAverages {
            load1: m.load1,
            load5: m.load5,
            load15: m.load15,
        })
    }

    /// Every process with its CPU time so far.
    pub async fn processes(&self, node: &str) -> Result<Vec<ProcessSample>, TalosError> {
        const CALL: &str = "Processes";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| async move {
                reads(ch)
                    .processes(self.request(node, CALL, (), t).map_err(to_status)?)
                    .await
            })
            .await?;
        let m = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(bounded(m.processes)
            .into_iter()
            .map(|p| ProcessSample {
                pid: p.pid,
                ppid: p.ppid,
                state: p.state,
                threads: p.threads,
                cpu_time: p.cpu_time,
                resident: p.resident_memory,
                command: p.command,
                args: p.args,
            })
            .collect())
    }

    /// The containers of a containerd namespace: `k8s.io` through the CRI (pods' sandboxes
    /// and containers), `system` through containerd (Talos's own services), as talosctl
    /// containers [-k] asks (cmd/talosctl/cmd/talos/containers.go).
    pub async fn containers(
        &self,
        node: &str,
        namespace: &str,
    ) -> Result<Vec<ContainerEntry>, TalosError> {
        const CALL: &str = "Containers";
        let t = Some(self.options().call_timeout);
        let driver = if namespace == KUBERNETES_NAMESPACE {
            common::ContainerDriver::Cri
        } else {
            common::ContainerDriver::Containerd
        };
        let req = pb::ContainersRequest {
            namespace: namespace.to_string(),
            driver: driver as i32,
        };
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| {
                let req = req.clone();
                async move {
                    reads(ch)
                        .containers(self.request(node, CALL, req, t).map_err(to_status)?)
                        .await
                }
            })
            .await?;
        let m = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(bounded(m.containers)
            .into_iter()
            .map(|c| ContainerEntry {
                namespace: c.namespace,
                id: c.id,
                pod: c.pod_id,
                name: c.name,
                image: c.image,
                pid: c.pid,
                status: c.status,
            })
            .collect())
    }

    /// The host network's TCP sockets (v4 and v6) with their processes, as `talosctl netstat
    /// -p` asks for them (cmd/talosctl/cmd/talos/netstat.go).
    pub async fn netstat(&self, node: &str) -> Result<Vec<Connection>, TalosError> {
        const CALL: &str = "Netstat";
        let t = Some(self.options().call_timeout);
        let req = pb::NetstatRequest {
            filter: pb::netstat_request::Filter::All as i32,
            feature: Some(pb::netstat_request::Feature { pid: true }),
            l4proto: Some(pb::netstat_request::L4proto {
                tcp: true,
                tcp6: true,
                ..Default::default()
            }),
            netns: Some(pb::netstat_request::NetNs {
                hostnetwork: true,
                ..Default::default()
            }),
        };
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| {
                let req = req.clone();
                async move {
                    reads(ch)
                        .netstat(self.request(node, CALL, req, t).map_err(to_status)?)
                        .await
                }
            })
            .await?;
        let m = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(bounded(m.connectrecord)
            .into_iter()
            .map(|r| {
                let process = r.process.unwrap_or_default();
                Connection {
                    protocol: r.l4proto,
                    local_ip: r.localip,
                    local_port: r.localport,
                    remote_ip: r.remoteip,
                    remote_port: r.remoteport,
                    state: state_name(r.state),
                    pid: (process.pid != 0).then_some(process.pid),
                    process: process.name,
                }
            })
            .collect())
    }

    /// Every mount with its size and the space available on it.
    pub async fn mounts(&self, node: &str) -> Result<Vec<MountUsage>, TalosError> {
        const CALL: &str = "Mounts";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| async move {
                reads(ch)
                    .mounts(self.request(node, CALL, (), t).map_err(to_status)?)
                    .await
            })
            .await?;
        let m = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(bounded(m.stats)
            .into_iter()
            .map(|s| MountUsage {
                filesystem: s.filesystem,
                mounted_on: s.mounted_on,
                size: s.size,
                available: s.available,
            })
            .collect())
    }

    /// The size of `path` and of the directories below it down to `depth` levels
    /// (`talosctl usage -d`); the whole stream is bounded by the call timeout and
    /// [`MAX_ITEMS`] entries.
    pub async fn disk_usage(
        &self,
        node: &str,
        path: &str,
        depth: i32,
    ) -> Result<Vec<PathUsage>, TalosError> {
        const CALL: &str = "DiskUsage";
        let timeout = self.options().call_timeout;
        let req = pb::DiskUsageRequest {
            recursion_depth: depth,
            all: false,
            threshold: 0,
            paths: vec![path.to_string()],
        };
        let read = async {
            let mut stream = self
                .call(node, CALL, Retry::Idempotent, |ch| {
                    let req = req.clone();
                    async move {
                        reads(ch)
                            .disk_usage(
                                self.request(node, CALL, req, Some(timeout))
                                    .map_err(to_status)?,
                            )
                            .await
                    }
                })
                .await?;
            let mut out = Vec::new();
            while let Some(item) = stream.next().await {
                let info = item.map_err(|status| TalosError::from_status(node, CALL, &status))?;
                metadata_error(node, CALL, info.metadata.as_ref())?;
                out.push(PathUsage {
                    path: info.name,
                    size: info.size,
                    error: (!info.error.is_empty()).then_some(info.error),
                });
                if out.len() >= MAX_ITEMS {
                    break;
                }
            }
            Ok(out)
        };
        super::client::whole_read_within(node, CALL, timeout, read).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_leaves_out_idle_and_iowait() {
        let t = CpuTimes {
            user: 3.0,
            system: 1.0,
            idle: 5.0,
            iowait: 1.0,
            ..CpuTimes::default()
        };
        assert_eq!(t.busy(), 4.0);
        assert_eq!(t.total(), 10.0);
    }

    #[test]
    fn socket_states_use_the_proto_names() {
        assert_eq!(state_name(1), "ESTABLISHED");
        assert_eq!(state_name(10), "LISTEN");
        assert_eq!(state_name(99), "STATE_99");
    }
}
