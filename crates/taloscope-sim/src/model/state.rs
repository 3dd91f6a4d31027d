//! The simulated fleet's shared state: clusters, nodes and etcd membership. `NodeStatus` is the
//! public per-node view (published on a `tokio::sync::watch` per node) that other simulators,
//! such as a Kubernetes API sim, read to follow nodes going down, rebooting and upgrading.
use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock, Weak};

use tokio::sync::watch;

use super::core::Core;
use super::events::EventLog;
use super::formed_cluster::Formation;
use super::grow_list::{GrowList, NodeList};
use super::injection::InjectedFaults;
pub use super::kube_components::{ComponentStatus, NodeKubernetes};
use super::record::{
    BootstrapRequest, FileRead, MutatingCall, ServedCall, SimRecord, UpgradeWindow,
};
use super::scenario::{ClusterSpec, EtcdAlarmKind, Faults, NodeRole, NodeSpec};

/// A machine's stage, numbered as Talos's `MachineStage`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MachineStage {
    Booting = 1,
    Running = 4,
    Rebooting = 5,
    /// A Shutdown sequence runs (`shutting down` in upstream's machinestage_enumer.go).
    ShuttingDown = 6,
    Upgrading = 8,
}

impl MachineStage {
    /// The text Talos writes in `yaml_spec` (`stage: running`).
    pub fn as_str(self) -> &'static str {
        match self {
            MachineStage::Booting => "booting",
            MachineStage::Running => "running",
            MachineStage::Rebooting => "rebooting",
            MachineStage::ShuttingDown => "shutting down",
            MachineStage::Upgrading => "upgrading",
        }
    }
}

/// What one simulated node looks like right now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeStatus {
    /// Cluster the node belongs to.
    pub cluster: String,
    /// Hostname (also the Kubernetes node name).
    pub name: String,
    pub address: Ipv4Addr,
    /// apid port on `address` (ephemeral, fixed for the life of the sim).
    pub port: u16,
    pub role: NodeRole,
    pub talos_version: String,
    /// The Kubernetes components the node runs, each on its own version.
    pub kubernetes: NodeKubernetes,
    /// apid accepts connections.
    pub up: bool,
    /// Between a reboot request and the node running again.
    pub rebooting: bool,
    /// Stage running with every readiness condition met.
    pub ready: bool,
    pub stage: MachineStage,
    /// Increments on every boot.
    pub boot: u64,
    /// Random per boot, like `/proc/sys/kernel/random/boot_id`.
    pub boot_id: String,
    /// The etcd service was stopped and nothing started it again (etcd_service).
    pub etcd_stopped: bool,
    /// /var/lib/etcd was emptied by the member leaving the cluster (EtcdLeaveCluster): its
    /// next boot joins etcd as a new member.
    pub etcd_data_wiped: bool,
}

/// One simulated machine: its scenario spec, published status and private runtime parts.
pub struct SimNode {
    pub(crate) spec: NodeSpec,
    pub(crate) cluster_index: usize,
    pub(crate) node_index: usize,
    pub(crate) etcd_member_id: u64,
    pub(crate) status: watch::Sender<NodeStatus>,
    pub(crate) port: AtomicU16,
    pub(crate) events: EventLog,
    pub(crate) mutable: Mutex<NodeMutable>,
    pub(crate) tls: OnceLock<Arc<rustls::ServerConfig>>,
    /// Faults a test switches while the sim runs.
    pub(crate) injected: InjectedFaults,
    /// `cluster.controlPlane.endpoint` of the config it boots with: the cluster's first
    /// control plane when it was made (its own address if it is the first).
    pub(crate) cluster_endpoint: Ipv4Addr,
    /// The machine was deleted (its Kubernetes Node object with it); it stays powered off.
    pub(crate) removed: std::sync::atomic::AtomicBool,
}

/// Node state only the simulator changes.
#[derive(Default)]
pub(crate) struct NodeMutable {
    /// Version the next boot comes up on (set by an upgrade or a rollback).
    pub staged_version: Option<String>,
    /// The version the other boot entry holds: the install before the last upgrade, which a
    /// rollback boots (`None`: never upgraded, that entry is empty).
    pub previous_version: Option<String>,
    /// The running configuration last applied with ApplyConfiguration (`None`: the one it
    /// booted with).
    pub applied_config: Option<Vec<u8>>,
    /// A configuration persisted for the next boot (`STAGED`, or `REBOOT` before its reboot).
    pub staged_config: Option<Vec<u8>>,
    /// A `TRY` configuration waiting for its confirmation: what the node goes back to.
    pub config_try: Option<ConfigTry>,
    /// An apply in `REBOOT` mode is rebooting the node (v1alpha1_server.go
    /// `applyConfigRebooted`, v1.12 and v1.13): no other apply until it has booted.
    pub apply_rebooting: bool,
    pub pulled_images: Vec<String>,
    pub accept_task: Option<tokio::task::JoinHandle<()>>,
    /// The node's listener, kept (paused) while the node is down so its port stays reserved.
    pub listener: Option<std::net::TcpListener>,
    /// A reboot or upgrade sequence is running.
    pub busy: bool,
    /// Services a ServiceRestart stopped and has not started again yet.
    pub restarting: Vec<String>,
    /// When the current boot began (the kernel's uptime counts from it).
    pub booted_at: Option<std::time::Instant>,
}

/// A configuration applied in `TRY` mode (siderolabs/talos
/// internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_runtime.go `RollbackToConfigAfter`): the
/// running configuration before it, which the node goes back to when its timer fires, unless
/// another apply cancels the timer first.
#[derive(Clone, Debug)]
pub(crate) struct ConfigTry {
    /// Tells this try's timer from a later one's.
    pub id: u64,
    pub previous: Option<Vec<u8>>,
}

impl SimNode {
    /// Hostname.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The node's address.
    pub fn address(&self) -> Ipv4Addr {
        self.spec.address
    }

    pub fn role(&self) -> NodeRole {
        self.spec.role
    }

    /// A configuration applied in `TRY` mode is waiting for its confirmation or rollback.
    pub fn config_on_trial(&self) -> bool {
        self.lock().config_try.is_some()
    }

    /// The faults the scenario gave this node.
    pub fn faults(&self) -> &Faults {
        &self.spec.faults
    }

    /// A copy of the current status.
    pub fn status(&self) -> NodeStatus {
        self.status.borrow().clone()
    }

    /// Follow status changes.
    pub fn subscribe(&self) -> watch::Receiver<NodeStatus> {
        self.status.subscribe()
    }

    /// The apid endpoint, `address:port`.
    pub fn endpoint(&self) -> String {
        format!(
            "{}:{}",
            self.spec.address,
            self.port.load(Ordering::Relaxed)
        )
    }

    /// The etcd member id (control planes that are members).
    pub fn etcd_member_id(&self) -> u64 {
        self.etcd_member_id
    }

    /// The member reports errors: by the scenario, or injected at runtime.
    pub(crate) fn etcd_faulty(&self) -> bool {
        self.spec.faults.etcd_unhealthy || self.injected.etcd_unhealthy()
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, NodeMutable> {
        self.mutable.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// etcd as the cluster sees it.
#[derive(Clone, Debug)]
pub struct EtcdCluster {
    /// Node indexes of the members.
    pub members: Vec<usize>,
    /// Node index of the leader.
    pub leader: Option<usize>,
    pub raft_term: u64,
    pub raft_index: u64,
    pub alarms: Vec<(usize, EtcdAlarmKind)>,
    /// Node indexes of the members whose database file was defragmented: its size is what
    /// is in use.
    pub defragmented: Vec<usize>,
}

/// One simulated cluster.
pub struct ClusterState {
    pub(crate) name: String,
    pub(crate) nodes: NodeList,
    pub(crate) etcd: Mutex<EtcdCluster>,
    /// The `max_vms` of its OneFlow roles, by role name (the scenario's).
    pub(crate) oneflow_max_vms: Vec<(String, usize)>,
    /// Simulated milliseconds an image pull takes on this cluster's nodes (the scenario's,
    /// changed by [`ClusterState::set_image_pull_ms`]).
    pub(crate) image_pull_ms: AtomicU64,
    /// Talos discovery off: the nodes list no COSI Members.
    pub(crate) discovery_disabled: bool,
    /// `cluster.proxy.disabled`: no kube-proxy pod on its nodes.
    pub(crate) kube_proxy_disabled: bool,
    /// KubeSpan on: its nodes list each other as peers.
    pub(crate) kubespan: bool,
    /// A cluster formed at run time from a machine config; `None` for the scenario's.
    pub(crate) formation: Option<Arc<Formation>>,
}

impl ClusterState {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn nodes(&self) -> &[Arc<SimNode>] {
        &self.nodes
    }

    /// A node by hostname.
    pub fn node(&self, name: &str) -> Option<&Arc<SimNode>> {
        self.nodes.iter().find(|n| n.spec.name == name)
    }

    /// A formed cluster whose VMs were all terminated.
    pub fn is_retired(&self) -> bool {
        self.formation.as_ref().is_some_and(|f| f.is_retired())
    }

    /// How far a cluster formed at run time has come; `None` for the scenario's clusters.
    pub fn formation_stage(&self) -> Option<super::formed_cluster::FormationStage> {
        self.formation.as_ref().map(|f| f.stage())
    }

    /// Whether the Kubernetes API lists the node (its kubelet registered); always for the
    /// scenario's clusters.
    pub(crate) fn kubelet_registered(&self, node_index: usize) -> bool {
        self.formation
            .as_ref()
            .is_none_or(|f| f.registered(node_index))
    }

    /// Simulated milliseconds a pull of an image a node does not have yet takes.
    pub fn image_pull_ms(&self) -> u64 {
        self.image_pull_ms.load(Ordering::Relaxed)
    }

    /// Changes the pull time from now on (pulls under way keep theirs), so a test can make one
    /// node's pull long in real time without slowing every other pull of the run.
    pub fn set_image_pull_ms(&self, ms: u64) {
        self.image_pull_ms.store(ms, Ordering::Relaxed);
    }

    /// A copy of the etcd view.
    pub fn etcd(&self) -> EtcdCluster {
        self.etcd_lock().clone()
    }

    pub(crate) fn etcd_lock(&self) -> MutexGuard<'_, EtcdCluster> {
        self.etcd.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A member is healthy when its node answers, is not rebooting, runs its etcd service and
    /// has no etcd fault.
    pub fn member_healthy(&self, node_index: usize) -> bool {
        self.nodes.get(node_index).is_some_and(|n| {
            let s = n.status.borrow();
            s.up && !s.rebooting && !s.etcd_stopped && !n.etcd_faulty()
        })
    }

    /// Moves leadership away from `from` to the first other healthy member; true if it moved.
    pub(crate) fn move_leader_from(&self, from: usize) -> Option<usize> {
        let mut etcd = self.etcd_lock();
        if etcd.leader != Some(from) {
            return None;
        }
        let next = etcd
            .members
            .iter()
            .copied()
            .find(|&m| m != from && self.member_healthy(m))?;
        etcd.leader = Some(next);
        etcd.raft_term += 1;
        etcd.raft_index += 7;
        Some(next)
    }

    /// A leader when there is none (the old one came back or the cluster lost it).
    pub(crate) fn elect_if_leaderless(&self) {
        let mut etcd = self.etcd_lock();
        let healthy = |m: &usize| self.member_healthy(*m);
        let leader_ok = etcd.leader.as_ref().is_some_and(healthy);
        if !leader_ok {
            let quorum = etcd.members.len() / 2 + 1;
            let up: Vec<usize> = etcd.members.iter().copied().filter(healthy).collect();
            if up.len() >= quorum {
                etcd.leader = up.first().copied();
                etcd.raft_term += 1;
            }
        }
    }
}

/// Every simulated cluster, shared by the apid servers and by anyone watching the fleet.
pub struct FleetState {
    pub(crate) clusters: GrowList<Arc<ClusterState>>,
    pub(crate) by_address: RwLock<HashMap<Ipv4Addr, (usize, usize)>>,
    changes: watch::Sender<u64>,
    pub(crate) record: SimRecord,
    /// The running sim, for starting nodes that join at run time (set once it has started).
    pub(crate) core: OnceLock<Weak<Core>>,
}

impl FleetState {
    pub(crate) fn new(specs: &[ClusterSpec]) -> FleetState {
        let (changes, _) = watch::channel(0);
        let mut by_address = HashMap::new();
        let clusters = specs
            .iter()
            .enumerate()
            .map(|(ci, spec)| {
                let endpoint = first_control_plane(spec.nodes.iter().map(|n| (n.role, n.address)));
                let nodes = spec
                    .nodes
                    .iter()
                    .enumerate()
                    .map(|(ni, n)| {
                        by_address.insert(n.address, (ci, ni));
                        Arc::new(new_node(
                            &spec.name,
                            ci,
                            ni,
                            n,
                            endpoint.unwrap_or(n.address),
                        ))
                    })
                    .collect();
                let alarms = spec
                    .nodes
                    .iter()
                    .enumerate()
                    .filter_map(|(i, n)| n.faults.alarm.map(|a| (i, a)))
                    .filter(|(i, _)| spec.etcd_members.contains(i))
                    .collect();
                Arc::new(ClusterState {
                    name: spec.name.clone(),
                    nodes: NodeList::new(nodes),
                    etcd: Mutex::new(EtcdCluster {
                        members: spec.etcd_members.clone(),
                        leader: spec.etcd_leader,
                        raft_term: 2,
                        raft_index: 1200 + ci as u64 * 31,
                        alarms,
                        defragmented: Vec::new(),
                    }),
                    oneflow_max_vms: spec.oneflow_max_vms.clone(),
                    image_pull_ms: AtomicU64::new(spec.image_pull_ms),
                    discovery_disabled: spec.discovery_disabled,
                    kube_proxy_disabled: spec.kube_proxy_disabled,
                    kubespan: spec.kubespan,
                    formation: None,
                })
            })
            .collect();
        FleetState {
            clusters: GrowList::new(clusters),
            by_address: RwLock::new(by_address),
            changes,
            record: SimRecord::default(),
            core: OnceLock::new(),
        }
    }

    pub fn clusters(&self) -> &[Arc<ClusterState>] {
        &self.clusters
    }

    /// A cluster by name (a formed cluster whose nodes are all gone is no longer found).
    pub fn cluster(&self, name: &str) -> Option<&Arc<ClusterState>> {
        self.clusters
            .iter()
            .find(|c| c.name == name && !c.is_retired())
    }

    /// The cluster and node listening on `address`.
    pub fn node_by_address(
        &self,
        address: Ipv4Addr,
    ) -> Option<(&Arc<ClusterState>, &Arc<SimNode>)> {
        let (ci, ni) = *self
            .by_address
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&address)?;
        let cluster = self.clusters.get(ci)?;
        Some((cluster, cluster.nodes.get(ni)?))
    }

    /// Every node's upgrade windows so far, in the order the upgrades were accepted.
    pub fn upgrade_record(&self) -> Vec<UpgradeWindow> {
        self.record.windows()
    }

    /// Every mutating call the nodes accepted, in order.
    pub fn mutating_calls(&self) -> Vec<MutatingCall> {
        self.record.calls()
    }

    /// Every `Bootstrap` request a node answered (accepted or refused), in order.
    pub fn bootstrap_requests(&self) -> Vec<BootstrapRequest> {
        self.record.bootstrap_requests()
    }

    /// How many calls of each method each node has served (one-to-one, or its share of a
    /// one-to-many call); a call refused before it reached a node is not counted.
    pub fn served_calls(&self) -> std::collections::HashMap<ServedCall, u64> {
        self.record.served_calls()
    }

    /// Every file the nodes served through `MachineService.Read`, in order.
    pub fn file_reads(&self) -> Vec<FileRead> {
        self.record.reads()
    }

    /// How many upgrade calls (`MachineService.Upgrade` or `LifecycleService.Upgrade`) a node
    /// of a cluster accepted.
    pub fn upgrade_calls(&self, cluster: &str, node: &str) -> usize {
        self.record
            .calls()
            .iter()
            .filter(|c| c.cluster == cluster && c.node == node && c.is_upgrade())
            .count()
    }

    /// A counter that increases whenever any node's status changes.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Changes a node's status and tells fleet-wide watchers.
    pub(crate) fn update(&self, node: &SimNode, change: impl FnOnce(&mut NodeStatus)) {
        node.status.send_modify(change);
        self.changes.send_modify(|c| *c += 1);
    }
}

pub(crate) fn new_node(
    cluster: &str,
    ci: usize,
    ni: usize,
    spec: &NodeSpec,
    cluster_endpoint: Ipv4Addr,
) -> SimNode {
    let (status, _) = watch::channel(NodeStatus {
        cluster: cluster.to_string(),
        name: spec.name.clone(),
        address: spec.address,
        port: 0,
        role: spec.role,
        talos_version: spec.talos_version.clone(),
        kubernetes: NodeKubernetes::new(spec.role, &spec.kubernetes_version),
        up: false,
        rebooting: false,
        ready: false,
        stage: MachineStage::Booting,
        boot: 0,
        boot_id: String::new(),
        etcd_stopped: false,
        etcd_data_wiped: false,
    });
    SimNode {
        spec: spec.clone(),
        cluster_index: ci,
        node_index: ni,
        etcd_member_id: member_id(cluster, &spec.name),
        cluster_endpoint,
        status,
        port: AtomicU16::new(0),
        events: EventLog::new(),
        mutable: Mutex::new(NodeMutable::default()),
        tls: OnceLock::new(),
        injected: InjectedFaults::default(),
        removed: std::sync::atomic::AtomicBool::new(false),
    }
}

/// The address of the first control plane among (role, address) pairs.
pub(crate) fn first_control_plane(
    mut nodes: impl Iterator<Item = (NodeRole, Ipv4Addr)>,
) -> Option<Ipv4Addr> {
    nodes
        .find(|(role, _)| *role == NodeRole::ControlPlane)
        .map(|(_, address)| address)
}

/// A stable, non-zero member id per cluster and node (FNV-1a).
fn member_id(cluster: &str, node: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in cluster.bytes().chain([0]).chain(node.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h.max(1)
}
