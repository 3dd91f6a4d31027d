//! Scenarios for the simulated fleet: the built-in ones (`healthy`, `cp2-down`, `fleet`, ...)
//! and the YAML file format, validated into one plain `Scenario` value (clusters, nodes, etcd
//! membership, faults). Only loopback addresses (127.0.0.0/8) are ever accepted.
//!
//! # Scenario file format
//!
//! ```yaml
//! clusters:
//!   - name: prod                    # talosconfig context name (admin); `prod-reader` is added
//!     talos_version: v1.11.3        # default for this cluster's nodes (default v1.11.3)
//!     kubernetes_version: v1.34.1   # default for this cluster's nodes (default v1.34.1)
//!     expired_client_context: false # true: also write a `prod-expired` context (expired admin cert)
//!     expiring_client_context: false # true: also a `prod-expiring` context (expires in 10 days)
//!     talosconfig_nodes: [cp-1]     # the nodes the talosconfig context names (default: every node)
//!     image_pull_ms: 12000          # simulated time an image pull takes (default 12000; an image
//!                                   # already pulled on the node is found at once)
//!     kube_proxy_disabled: false    # true: `cluster.proxy.disabled`, no kube-proxy DaemonSet
//!     discovery_disabled: false     # true: `cluster.discovery.enabled: false`, no COSI Members
//!     kubespan: false               # true: `machine.network.kubespan.enabled`: peers and link
//!     extra_args:                   # `extraArgs` in every node's machine config, by component
//!       kube-apiserver: {cloud-config: /etc/kubernetes/cloud.conf}
//!       kubelet: {feature-gates: AppArmor=true}
//!     etcd:
//!       members: [cp-1, cp-2, cp-3] # default: every control plane
//!       leader: cp-1                # default: the first member
//!     nodes:
//!       - name: cp-1                # hostname; unique within the cluster
//!         role: controlplane        # controlplane | worker
//!         address: 127.10.0.1       # optional; default 127.10.<cluster index>.<node index + 1>
//!         talos_version: v1.13.0    # optional per-node override
//!         kubernetes_version: v1.34.1
//!         registry_mirrors:         # optional: `machine.registries.mirrors` of this node's config
//!           ghcr.io: [https://127.0.0.1:5443]
//!         faults:                   # all optional
//!           down: true                      # unreachable from the start (etcd member unhealthy)
//!           slow_ms: 800                    # every answer from this node is delayed
//!           never_returns_after_reboot: true
//!           etcd_unhealthy: true            # member reports errors; legacy upgrades refused
//!           alarm: NOSPACE                  # etcd alarm raised by this member (NOSPACE | CORRUPT)
//!           wrong_ca_cert: true             # server certificate signed by a different CA
//!           expired_cert: true              # server certificate expired
//!           expiring_cert: true             # server certificate ends in 20 days (not renewed)
//!           component_never_ready: kube-scheduler  # never ready again after an image update
//!           ephemeral_full: true            # EPHEMERAL (/var) 96% full
//!           cpu_spin: true                  # a process (stress-ng) spins one CPU at 100%
//! ```
//!
//! Addresses outside 127.0.0.0/8 are refused. Each node listens on an ephemeral port of its own
//! address; the ports are written into the talosconfig.
use std::net::Ipv4Addr;
use std::path::Path;

use serde::Deserialize;

use crate::model::error::SimError;

pub(crate) const DEFAULT_TALOS: &str = "v1.11.3";
pub(crate) const DEFAULT_KUBERNETES: &str = "v1.34.1";
/// Simulated milliseconds an installer image takes to pull (and validate) when the node does not
/// have it yet: a few hundred MB from a registry.
pub(crate) const DEFAULT_IMAGE_PULL_MS: u64 = 12_000;

/// A node's machine type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeRole {
    #[serde(rename = "controlplane")]
    ControlPlane,
    Worker,
}

impl NodeRole {
    /// The word Talos uses (`controlplane` / `worker`).
    pub fn as_str(self) -> &'static str {
        match self {
            NodeRole::ControlPlane => "controlplane",
            NodeRole::Worker => "worker",
        }
    }
}

/// An etcd alarm a member can raise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum EtcdAlarmKind {
    #[serde(rename = "NOSPACE")]
    NoSpace,
    #[serde(rename = "CORRUPT")]
    Corrupt,
}

/// What is wrong with a node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Faults {
    #[serde(default)]
    pub down: bool,
    #[serde(default)]
    pub slow_ms: u64,
    #[serde(default)]
    pub never_returns_after_reboot: bool,
    #[serde(default)]
    pub etcd_unhealthy: bool,
    #[serde(default)]
    pub alarm: Option<EtcdAlarmKind>,
    #[serde(default)]
    pub wrong_ca_cert: bool,
    #[serde(default)]
    pub expired_cert: bool,
    /// The apid server certificate ends 20 days from today: upstream renews it at half its
    /// validity (internal/app/machined/pkg/controllers/secrets/api.go), so this is a node
    /// whose renewal stopped.
    #[serde(default)]
    pub expiring_cert: bool,
    /// A Kubernetes component (`kube-apiserver`, `kube-controller-manager`, `kube-scheduler`,
    /// `kubelet`) that restarts on a new image and never becomes ready again.
    #[serde(default)]
    pub component_never_ready: Option<String>,
    /// The EPHEMERAL volume (`/var`) is 96% full: container images and logs filled it.
    #[serde(default)]
    pub ephemeral_full: bool,
    /// A process (`stress-ng --cpu 1`, in a pod's container) keeps one CPU 100% busy.
    #[serde(default)]
    pub cpu_spin: bool,
}

/// One simulated machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    pub name: String,
    pub role: NodeRole,
    pub address: Ipv4Addr,
    pub talos_version: String,
    pub kubernetes_version: String,
    pub faults: Faults,
    /// `extraArgs` of the node's machine config, by component (`kube-apiserver`, `kubelet`…);
    /// control-plane components only render on control planes.
    pub extra_args: std::collections::BTreeMap<String, super::component_names::ExtraArgs>,
    /// `machine.registries.mirrors` of the node's machine config: endpoints by registry.
    pub registry_mirrors: std::collections::BTreeMap<String, Vec<String>>,
}

/// One cluster: its nodes and etcd membership (indexes into `nodes`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterSpec {
    pub name: String,
    pub nodes: Vec<NodeSpec>,
    pub etcd_members: Vec<usize>,
    pub etcd_leader: Option<usize>,
    pub expired_client_context: bool,
    /// Also write a `<cluster>-expiring` talosconfig context whose admin certificate expires
    /// in 10 days (the `healthy` scenario has one).
    pub expiring_client_context: bool,
    /// The nodes (indexes into `nodes`) the talosconfig context names; `None`: every node.
    /// `talosctl gen config` writes a context with endpoints only
    /// (siderolabs/talos pkg/machinery/config/generate/talosconfig.go: `NewConfig(name,
    /// EndpointList, ...)`), and operators add a node or two with `talosctl config node`.
    pub talosconfig_nodes: Option<Vec<usize>>,
    /// Objects still stored in API versions a later Kubernetes removes, by
    /// `resource.version.group` (as in `kube_api::removed_versions`), with their count.
    pub removed_api_objects: Vec<(String, usize)>,
    /// The `max_vms` of the cluster's OneFlow roles, by role name (`controlplane`, `worker`);
    /// a role not listed sets none.
    pub oneflow_max_vms: Vec<(String, usize)>,
    /// Simulated milliseconds an image pull takes on this cluster's nodes.
    pub image_pull_ms: u64,
    /// `cluster.proxy.disabled: true`: Talos renders no kube-proxy manifest
    /// (siderolabs/talos internal/app/machined/pkg/controllers/k8s/render_manifests.go).
    pub kube_proxy_disabled: bool,
    /// `cluster.discovery.enabled: false`: no node writes its affiliate, so the `cluster`
    /// namespace lists no Members (siderolabs/talos
    /// internal/app/machined/pkg/controllers/cluster/config.go sets `DiscoveryEnabled` from it,
    /// local_affiliate.go writes the local Affiliate only when it is set, member.go makes
    /// Members from Affiliates and destroys the rest).
    pub discovery_disabled: bool,
    /// `machine.network.kubespan.enabled: true`: every node peers with every other over the
    /// `kubespan` WireGuard link (siderolabs/talos internal/app/machined/pkg/controllers/kubespan).
    pub kubespan: bool,
}

impl ClusterSpec {
    /// A cluster of `nodes` with etcd on `etcd_members`, every other setting as a new cluster
    /// has it (no extra talosconfig contexts, every node in the talosconfig, discovery and
    /// kube-proxy on).
    pub fn plain(
        name: &str,
        nodes: Vec<NodeSpec>,
        etcd_members: Vec<usize>,
        etcd_leader: Option<usize>,
    ) -> ClusterSpec {
        ClusterSpec {
            name: name.to_string(),
            nodes,
            etcd_members,
            etcd_leader,
            expired_client_context: false,
            expiring_client_context: false,
            talosconfig_nodes: None,
            removed_api_objects: Vec::new(),
            oneflow_max_vms: Vec::new(),
            image_pull_ms: DEFAULT_IMAGE_PULL_MS,
            kube_proxy_disabled: false,
            discovery_disabled: false,
            kubespan: false,
        }
    }
}

/// A validated scenario: what the simulated fleet looks like when it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    pub name: String,
    pub clusters: Vec<ClusterSpec>,
    /// A Cluster API management cluster and the workload cluster it owns (the `capi` scenarios).
    pub capi: Option<super::capi_scenarios::CapiSpec>,
    /// What the OpenNebula sim holds beyond the clusters' own templates and services.
    pub opennebula: OneSpec,
}

/// The OpenNebula sim's account and new-cluster service templates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OneSpec {
    /// A VM quota on the sim's user. oned holds oneadmin (uid 0) and its group to no quota
    /// (OpenNebula/one src/rm/api/SharedAPI.cc `quota_authorization`), so with a quota the user
    /// is `tenant` (uid 2) in group `users` (gid 1).
    pub user_quota: Option<VmQuotaSpec>,
    /// The `max_vms` of the new-cluster service templates' roles, by role name.
    pub new_cluster_max_vms: Vec<(String, usize)>,
}

/// Limits of a VM quota (`VM_QUOTA` of OpenNebula/one src/um/QuotaVirtualMachine.cc); `None`
/// leaves a metric at its default (-1), which the sim's unlimited default quota makes unlimited.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VmQuotaSpec {
    #[serde(default)]
    pub vms: Option<u64>,
    #[serde(default)]
    pub cpu: Option<u64>,
    #[serde(default)]
    pub memory_mb: Option<u64>,
}

#[rustfmt::skip]
const BUILTINS: &[&str] = &[
    "healthy", "cp2-down", "single-cp", "alarm", "mixed", "fleet", "demo", "healthy-112",
    "removed-api", "sparse", "discovery-disabled", "flow-full", "talos-1.10", "talos-1.11",
    "talos-1.12", "talos-1.13", "talos-1.14", "capi", "capi-stuck-rollout",
    "capi-orphaned-member", "capi-etcd-stopped", "capi-clusterctl", "capi-etcd-leaving",
    "capi-no-node-ref", "capi-fqdn", "capi-drain-blocked", "one-tight", "config-drift",
    "ephemeral-full", "cpu-spin", "kubespan",
];

/// The `talos-1.NN` scenarios: `healthy`'s shape at one Talos minor, each with a Kubernetes
/// version that minor supports and whose next patch it supports too
/// (siderolabs/talos pkg/machinery/compatibility/talosNNN/talosNNN.go:
/// 1.10 runs 1.28–1.33, 1.11 1.29–1.34, 1.12 1.30–1.35, 1.13 1.31–1.36, 1.14 1.32–1.37 at
/// v1.14.0-rc.1). Talos 1.14 serves the same calls as 1.13 for everything the sim plays
/// (`git diff v1.13.0 v1.14.0-rc.1 -- api/` removes no RPC; it deprecates multi-node proxying
/// and `ApplyConfigurationRequest.Mode.REBOOT`, which a configured 1.14 node refuses:
/// machine_changes.rs `apply`).
const VERSIONED: &[(&str, &str, &str)] = &[
    ("talos-1.10", "v1.10.7", "v1.33.5"),
    ("talos-1.11", "v1.11.3", "v1.34.1"),
    ("talos-1.12", "v1.12.0", "v1.35.0"),
    ("talos-1.13", "v1.13.0", "v1.35.0"),
    ("talos-1.14", "v1.14.0", "v1.36.2"),
];

impl Scenario {
    /// The names `builtin` knows.
    pub fn builtin_names() -> &'static [&'static str] {
        BUILTINS
    }

    /// A built-in scenario by name.
    pub fn builtin(name: &str) -> Option<Scenario> {
        if let Some(s) = super::capi_scenarios::builtin(name) {
            return Some(s);
        }
        let clusters = match name {
            "healthy" => {
                let mut cluster = standard_cluster("healthy", 0, |_| {});
                cluster.expiring_client_context = true;
                vec![cluster]
            }
            versioned if VERSIONED.iter().any(|(n, _, _)| *n == versioned) => {
                let (_, talos, kube) = VERSIONED.iter().find(|(n, _, _)| *n == versioned)?;
                vec![standard_cluster(versioned, 0, |n| {
                    n.talos_version = (*talos).into();
                    n.kubernetes_version = (*kube).into();
                })]
            }
            "cp2-down" => vec![standard_cluster("cp2-down", 0, |n| {
                if n.name == "cp-2" {
                    n.faults.down = true;
                    n.faults.etcd_unhealthy = true;
                }
            })],
            "single-cp" => vec![small_cluster("single-cp", 0, |_| {})],
            // `healthy`'s shape on Talos 1.13 where w-2 alone pulls ghcr.io through a mirror:
            // the drift a hand-applied patch leaves behind.
            "config-drift" => vec![standard_cluster("config-drift", 0, |n| {
                n.talos_version = "v1.13.0".into();
                n.kubernetes_version = "v1.35.0".into();
                if n.name == "w-2" {
                    n.registry_mirrors
                        .insert("ghcr.io".into(), vec!["https://127.0.0.1:5443".into()]);
                }
            })],
            "alarm" => vec![standard_cluster("alarm", 0, |n| {
                if n.name == "cp-3" {
                    n.faults.alarm = Some(EtcdAlarmKind::NoSpace);
                }
            })],
            "ephemeral-full" => vec![standard_cluster("ephemeral-full", 0, |n| {
                if n.name == "w-1" {
                    n.faults.ephemeral_full = true;
                }
            })],
            "cpu-spin" => vec![standard_cluster("cpu-spin", 0, |n| {
                if n.name == "w-1" {
                    n.faults.cpu_spin = true;
                }
            })],
            "kubespan" => {
                let mut cluster = standard_cluster("kubespan", 0, |_| {});
                cluster.kubespan = true;
                vec![cluster]
            }
            "mixed" => vec![standard_cluster("mixed", 0, |n| {
                if n.name == "w-2" {
                    n.talos_version = "v1.10.7".into();
                }
            })],
            "fleet" => (0..20).map(fleet_cluster).collect(),
            // 3 control planes + 2 workers, a talosconfig as most are: the control planes as
            // endpoints and one node; the others are found through discovery.
            "sparse" => {
                let mut cluster = standard_cluster("sparse", 0, |_| {});
                cluster.talosconfig_nodes = Some(vec![0]);
                vec![cluster]
            }
            // `sparse` with Talos discovery off: only etcd (the control planes) and Kubernetes
            // (every node) name the nodes the talosconfig does not.
            "discovery-disabled" => {
                let mut cluster = standard_cluster("discovery-disabled", 0, |_| {});
                cluster.talosconfig_nodes = Some(vec![0]);
                cluster.discovery_disabled = true;
                vec![cluster]
            }
            // No room at the provider for a 3+2 cluster: a VM quota of 8 VMs with healthy's 5
            // in use, and new-cluster service templates whose worker role allows 1 VM.
            "one-tight" => vec![standard_cluster("one-tight", 0, |_| {})],
            // The OneFlow worker role already at its max_vms (2): no room for one more.
            "flow-full" => {
                let mut cluster = standard_cluster("flow-full", 0, |_| {});
                cluster.oneflow_max_vms = vec![("worker".into(), 2)];
                vec![cluster]
            }
            "healthy-112" => vec![standard_cluster("healthy-112", 0, |n| {
                n.talos_version = "v1.12.0".into();
            })],
            "removed-api" => {
                let mut cluster = standard_cluster("removed-api", 0, |n| {
                    n.kubernetes_version = "v1.31.4".into();
                });
                cluster.removed_api_objects = vec![
                    ("flowschemas.v1beta3.flowcontrol.apiserver.k8s.io".into(), 2),
                    (
                        "prioritylevelconfigurations.v1beta3.flowcontrol.apiserver.k8s.io".into(),
                        1,
                    ),
                ];
                vec![cluster]
            }
            "demo" => vec![
                standard_cluster("prod", 0, |_| {}),
                standard_cluster("staging", 1, |n| {
                    if n.name == "w-2" {
                        n.faults.down = true;
                    }
                }),
                small_cluster("edge", 2, |n| {
                    if n.name == "cp-1" {
                        n.faults.alarm = Some(EtcdAlarmKind::NoSpace);
                    }
                }),
            ],
            _ => return None,
        };
        let opennebula = match name {
            "one-tight" => OneSpec {
                user_quota: Some(VmQuotaSpec {
                    vms: Some(8),
                    ..VmQuotaSpec::default()
                }),
                new_cluster_max_vms: vec![("worker".into(), 1)],
            },
            _ => OneSpec::default(),
        };
        Some(Scenario {
            name: name.to_string(),
            clusters,
            capi: None,
            opennebula,
        })
    }

    /// A built-in name, or else a path to a scenario file.
    pub fn load(name_or_file: &str) -> Result<Scenario, SimError> {
        if let Some(s) = Scenario::builtin(name_or_file) {
            return Ok(s);
        }
        let path = Path::new(name_or_file);
        if !path.exists() {
            return Err(SimError::UnknownScenario {
                name: name_or_file.to_string(),
                builtins: BUILTINS.join(", "),
            });
        }
        Scenario::from_file(path)
    }

    /// Reads and validates a scenario YAML file.
    pub fn from_file(path: &Path) -> Result<Scenario, SimError> {
        let text = std::fs::read_to_string(path).map_err(|source| SimError::ReadScenario {
            path: path.to_path_buf(),
            source,
        })?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into());
        super::scenario_file::parse_scenario(&name, &text).map_err(|(line, message)| {
            SimError::ScenarioFile {
                path: path.to_path_buf(),
                line,
                message,
            }
        })
    }

    /// Every node in the scenario.
    pub fn node_count(&self) -> usize {
        self.clusters.iter().map(|c| c.nodes.len()).sum()
    }
}

fn node(name: &str, role: NodeRole, cluster_index: usize, node_index: usize) -> NodeSpec {
    NodeSpec {
        name: name.to_string(),
        role,
        address: default_address(cluster_index, node_index),
        talos_version: DEFAULT_TALOS.into(),
        kubernetes_version: DEFAULT_KUBERNETES.into(),
        faults: Faults::default(),
        extra_args: Default::default(),
        registry_mirrors: Default::default(),
    }
}

/// 127.10.<cluster index>.<node index + 1>.
pub(crate) fn default_address(cluster_index: usize, node_index: usize) -> Ipv4Addr {
    Ipv4Addr::new(
        127,
        10,
        (cluster_index % 256) as u8,
        ((node_index + 1) % 256) as u8,
    )
}

fn standard_cluster(name: &str, index: usize, tweak: impl Fn(&mut NodeSpec)) -> ClusterSpec {
    let names = [
        ("cp-1", NodeRole::ControlPlane),
        ("cp-2", NodeRole::ControlPlane),
        ("cp-3", NodeRole::ControlPlane),
        ("w-1", NodeRole::Worker),
        ("w-2", NodeRole::Worker),
    ];
    build_cluster(name, index, &names, tweak)
}

fn small_cluster(name: &str, index: usize, tweak: impl Fn(&mut NodeSpec)) -> ClusterSpec {
    let names = [("cp-1", NodeRole::ControlPlane), ("w-1", NodeRole::Worker)];
    build_cluster(name, index, &names, tweak)
}

pub(crate) fn build_cluster(
    name: &str,
    index: usize,
    names: &[(&str, NodeRole)],
    tweak: impl Fn(&mut NodeSpec),
) -> ClusterSpec {
    let nodes: Vec<NodeSpec> = names
        .iter()
        .enumerate()
        .map(|(i, (n, role))| {
            let mut spec = node(n, *role, index, i);
            tweak(&mut spec);
            spec
        })
        .collect();
    let members: Vec<usize> = control_planes(&nodes);
    let leader = members.first().copied();
    ClusterSpec::plain(name, nodes, members, leader)
}

fn fleet_cluster(index: usize) -> ClusterSpec {
    let nodes: Vec<NodeSpec> = (0..250)
        .map(|i| {
            if i < 3 {
                node(&format!("cp-{}", i + 1), NodeRole::ControlPlane, index, i)
            } else {
                node(&format!("w-{}", i - 2), NodeRole::Worker, index, i)
            }
        })
        .collect();
    ClusterSpec::plain(
        &format!("fleet-{:02}", index + 1),
        nodes,
        vec![0, 1, 2],
        Some(0),
    )
}

pub(crate) fn control_planes(nodes: &[NodeSpec]) -> Vec<usize> {
    nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.role == NodeRole::ControlPlane)
        .map(|(i, _)| i)
        .collect()
}

/// Accepts only IPv4 loopback addresses (127.0.0.0/8).
pub fn parse_loopback(text: &str) -> Result<Ipv4Addr, String> {
    let addr: Ipv4Addr = text.trim().parse().map_err(|_| {
        format!("address {text:?} is not an IPv4 address (the sim uses 127.0.0.0/8 only)")
    })?;
    if !addr.is_loopback() {
        return Err(format!(
            "address {addr} is outside 127.0.0.0/8; the simulated fleet only listens on loopback"
        ));
    }
    Ok(addr)
}

/// `v1.11.3` (or `1.11.3`, with an optional `-suffix`) → (1, 11, 3).
pub fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let t = text.trim().trim_start_matches('v');
    let core = t.split(['-', '+']).next()?;
    let mut parts = core.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let patch = parts.next().unwrap_or("0").parse().ok()?;
    Some((major, minor, patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_have_expected_shape() {
        for name in Scenario::builtin_names() {
            let s = Scenario::builtin(name).expect("builtin");
            assert!(!s.clusters.is_empty(), "{name}");
        }
        let fleet = Scenario::builtin("fleet").expect("fleet");
        assert_eq!(fleet.node_count(), 5000);
        assert_eq!(fleet.clusters[19].name, "fleet-20");
        assert_eq!(
            fleet.clusters[19].nodes[249].address,
            Ipv4Addr::new(127, 10, 19, 250)
        );
        let down = Scenario::builtin("cp2-down").expect("cp2-down");
        assert!(down.clusters[0].nodes[1].faults.down);
        assert_eq!(down.clusters[0].name, "cp2-down");
        let demo = Scenario::builtin("demo").expect("demo");
        let names: Vec<_> = demo.clusters.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["prod", "staging", "edge"]);
        let sparse = Scenario::builtin("sparse").expect("sparse");
        assert_eq!(sparse.clusters[0].nodes.len(), 5);
        assert_eq!(sparse.clusters[0].talosconfig_nodes, Some(vec![0]));
        assert!(!sparse.clusters[0].discovery_disabled);
        let off = Scenario::builtin("discovery-disabled").expect("discovery-disabled");
        assert_eq!(off.clusters[0].talosconfig_nodes, Some(vec![0]));
        assert!(off.clusters[0].discovery_disabled);
    }

    #[test]
    fn versions_parse() {
        assert_eq!(parse_version("v1.13.0-alpha.2"), Some((1, 13, 0)));
        assert_eq!(parse_version("junk"), None);
    }
}
